// SPDX-License-Identifier: BSD-3-Clause
// A call-heavy C program shaped like a language interpreter (bench/first_run.sh, issue #19): a
// small stack VM whose dispatch loop run() calls one small handler function per bytecode op
// (23 distinct handlers, a few ns of work each, noinline but not no_instrument_function, so that
// a compiler-instrumented build measures every one of them), a builtin-call path two calls deep,
// a mark-and-sweep gc() every 100000 ops (about 60 us each on a 2-core VM) and a parse() at startup
// that turns a generated source text (a loop body of a few hundred ops) into bytecode.
//
//   interp [ITERATIONS]    default 300000 iterations of the loop body (about 166 million ops)
//
// Prints "ops=<n> code=<n> handler_calls=<n> gc=<n> live=<n> checksum=<x>" and "seconds=<wall>" (clock_gettime
// around parse() and run(): neither process start nor prof's finalize is included).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

enum {
  OP_PUSH, OP_POP, OP_DUP, OP_SWAP, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_AND, OP_XOR, OP_SHR,
  OP_LT, OP_LOAD, OP_STORE, OP_GLOAD, OP_GSTORE, OP_JUMP_IF, OP_CALL, OP_NEW, OP_GETF,
  OP_SETF, OP_LOOP, OP_HALT, N_OPS
};
static const char *const op_names[N_OPS] = {
  "push", "pop", "dup", "swap", "add", "sub", "mul", "div", "and", "xor", "shr",
  "lt", "load", "store", "gload", "gstore", "jump_if", "call", "new", "getf",
  "setf", "loop", "halt"};

typedef struct { int32_t op, arg; } Insn;

#define STACK 256
#define LOCALS 16
#define GLOBALS 8
#define HEAP 16384        // objects
#define FIELDS 4
#ifndef GC_EVERY
#define GC_EVERY 100000   // ops
#endif

typedef struct {
  int64_t fields[FIELDS];
  uint32_t marked, live;
} Obj;

typedef struct {
  int64_t stack[STACK];
  int sp;
  int64_t locals[LOCALS];
  int64_t globals[GLOBALS];
  Obj heap[HEAP];
  int next_obj, live_objs;
  int64_t counter;          // iterations left (OP_LOOP)
  uint64_t ops, gcs, handler_calls, checksum;
  Insn *code;
  int ncode;
} VM;

typedef int (*Handler)(VM *, int pc, int32_t arg);

// ---------------------------------------------------------------- handlers (one per op)
NOINLINE int op_push(VM *vm, int pc, int32_t arg) { vm->stack[vm->sp++] = arg; return pc + 1; }
NOINLINE int op_pop(VM *vm, int pc, int32_t arg) { (void)arg; vm->checksum += (uint64_t)vm->stack[--vm->sp]; return pc + 1; }
NOINLINE int op_dup(VM *vm, int pc, int32_t arg) { (void)arg; vm->stack[vm->sp] = vm->stack[vm->sp - 1]; vm->sp++; return pc + 1; }
NOINLINE int op_swap(VM *vm, int pc, int32_t arg) {
  (void)arg;
  int64_t t = vm->stack[vm->sp - 1];
  vm->stack[vm->sp - 1] = vm->stack[vm->sp - 2];
  vm->stack[vm->sp - 2] = t;
  return pc + 1;
}
#define BINOP(name, expr)                                 \
  NOINLINE int name(VM *vm, int pc, int32_t arg) {        \
    (void)arg;                                            \
    int64_t b = vm->stack[--vm->sp], a = vm->stack[vm->sp - 1]; \
    vm->stack[vm->sp - 1] = (expr);                       \
    return pc + 1;                                        \
  }
BINOP(op_add, (int64_t)((uint64_t)a + (uint64_t)b))
BINOP(op_sub, (int64_t)((uint64_t)a - (uint64_t)b))
BINOP(op_mul, (int64_t)(((uint64_t)a * (uint64_t)b) & 0xffffffffu))
BINOP(op_div, (int64_t)((uint64_t)a / ((uint64_t)b | 1)))
BINOP(op_and, a & b)
BINOP(op_xor, a ^ b)
BINOP(op_shr, (int64_t)((uint64_t)a >> (b & 31)))
BINOP(op_lt, a < b)
NOINLINE int op_load(VM *vm, int pc, int32_t arg) { vm->stack[vm->sp++] = vm->locals[arg]; return pc + 1; }
NOINLINE int op_store(VM *vm, int pc, int32_t arg) { vm->locals[arg] = vm->stack[--vm->sp]; return pc + 1; }
NOINLINE int op_gload(VM *vm, int pc, int32_t arg) { vm->stack[vm->sp++] = vm->globals[arg]; return pc + 1; }
NOINLINE int op_gstore(VM *vm, int pc, int32_t arg) { vm->globals[arg] = vm->stack[--vm->sp]; return pc + 1; }
// Skips the next `arg` instructions when the popped value is nonzero.
NOINLINE int op_jump_if(VM *vm, int pc, int32_t arg) { return vm->stack[--vm->sp] ? pc + 1 + arg : pc + 1; }

// The builtins (op_call -> call_builtin -> builtin_*): one level deeper than the handlers.
NOINLINE int64_t builtin_abs(int64_t x) { return x < 0 ? -x : x; }
NOINLINE int64_t builtin_hash(int64_t x) {
  uint64_t h = (uint64_t)x * 0x9e3779b97f4a7c15ull;
  return (int64_t)((h ^ (h >> 29)) & 0xffffff);
}
NOINLINE int64_t builtin_min(int64_t a, int64_t b) { return a < b ? a : b; }
NOINLINE int64_t builtin_len(VM *vm, int64_t x) {
  const Obj *o = &vm->heap[(uint64_t)x % HEAP];
  return o->live ? FIELDS : 0;
}
NOINLINE int64_t call_builtin(VM *vm, int which, int64_t x) {
  switch (which) {
    case 0: return builtin_abs(x);
    case 1: return builtin_hash(x);
    case 2: return builtin_min(x, vm->locals[0]);
    default: return builtin_len(vm, x);
  }
}
NOINLINE int op_call(VM *vm, int pc, int32_t arg) {
  vm->stack[vm->sp - 1] = call_builtin(vm, arg, vm->stack[vm->sp - 1]);
  return pc + 1;
}

// ---------------------------------------------------------------- heap and gc
// Mark and sweep over the whole heap: the roots are the locals, globals and stack slots that
// hold an object reference (tagged: bit 40 set, index in the low bits).
#define REF_TAG (INT64_C(1) << 40)
NOINLINE void gc(VM *vm) {
  vm->gcs++;
  for (int i = 0; i < HEAP; i++) vm->heap[i].marked = 0;
  for (int i = 0; i < LOCALS; i++)
    if (vm->locals[i] & REF_TAG) vm->heap[(vm->locals[i] & 0xffff) % HEAP].marked = 1;
  for (int i = 0; i < GLOBALS; i++)
    if (vm->globals[i] & REF_TAG) vm->heap[(vm->globals[i] & 0xffff) % HEAP].marked = 1;
  for (int i = 0; i < vm->sp; i++)
    if (vm->stack[i] & REF_TAG) vm->heap[(vm->stack[i] & 0xffff) % HEAP].marked = 1;
  // Marked objects keep their fields alive; a few rounds of tracing (fields may hold references).
  for (int round = 0; round < 4; round++)
    for (int i = 0; i < HEAP; i++)
      if (vm->heap[i].marked)
        for (int f = 0; f < FIELDS; f++)
          if (vm->heap[i].fields[f] & REF_TAG) vm->heap[(vm->heap[i].fields[f] & 0xffff) % HEAP].marked = 1;
  int live = 0;
  uint64_t sum = 0;
  for (int i = 0; i < HEAP; i++) {
    Obj *o = &vm->heap[i];
    if (!o->marked && o->live) {
      for (int f = 0; f < FIELDS; f++) sum += (uint64_t)o->fields[f];
      memset(o->fields, 0, sizeof o->fields);
      o->live = 0;
    }
    live += (int)o->live;
  }
  // Compaction-like pass: a checksum over the survivors (what a copying collector would touch).
  for (int i = 0; i < HEAP; i++)
    if (vm->heap[i].live)
      for (int f = 0; f < FIELDS; f++) sum = sum * 31 + (uint64_t)vm->heap[i].fields[f];
  vm->live_objs = live;
  vm->checksum ^= sum;
}
NOINLINE int op_new(VM *vm, int pc, int32_t arg) {
  int i = vm->next_obj;
  vm->next_obj = (vm->next_obj + 1) % HEAP;
  vm->heap[i].live = 1;
  vm->heap[i].fields[0] = arg;
  vm->stack[vm->sp++] = REF_TAG | i;
  return pc + 1;
}
NOINLINE int op_getf(VM *vm, int pc, int32_t arg) {
  int64_t r = vm->stack[vm->sp - 1];
  vm->stack[vm->sp - 1] = (r & REF_TAG) ? vm->heap[(r & 0xffff) % HEAP].fields[arg] : 0;
  return pc + 1;
}
// ( value ref -- ): ref.fields[arg] = value
NOINLINE int op_setf(VM *vm, int pc, int32_t arg) {
  int64_t r = vm->stack[--vm->sp], v = vm->stack[--vm->sp];
  if (r & REF_TAG) vm->heap[(r & 0xffff) % HEAP].fields[arg] = v;
  return pc + 1;
}
NOINLINE int op_loop(VM *vm, int pc, int32_t arg) { return --vm->counter > 0 ? arg : pc + 1; }
NOINLINE int op_halt(VM *vm, int pc, int32_t arg) { (void)vm; (void)pc; (void)arg; return -1; }

static const Handler handlers[N_OPS] = {
  op_push, op_pop, op_dup, op_swap, op_add, op_sub, op_mul, op_div, op_and, op_xor, op_shr,
  op_lt, op_load, op_store, op_gload, op_gstore, op_jump_if, op_call, op_new, op_getf,
  op_setf, op_loop, op_halt};

// ---------------------------------------------------------------- the dispatch loop
NOINLINE void run(VM *vm) {
  const Insn *code = vm->code;
  int pc = 0, until_gc = GC_EVERY;
  uint64_t ops = 0;
  while (pc >= 0) {
    const Insn in = code[pc];
    pc = handlers[in.op](vm, pc, in.arg);
    ops++;
    if (--until_gc == 0) {
      until_gc = GC_EVERY;
      gc(vm);
    }
  }
  vm->ops = ops;
  vm->handler_calls = ops;
}

// ---------------------------------------------------------------- source text and parse()
typedef struct { char *s; size_t len, cap; } Text;
static void emit(Text *t, const char *op, int arg, int has_arg) {
  char line[48];
  int n = has_arg ? snprintf(line, sizeof line, "%s %d\n", op, arg) : snprintf(line, sizeof line, "%s\n", op);
  if (t->len + (size_t)n + 1 > t->cap) {
    t->cap = t->cap ? 2 * t->cap : 4096;
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
  memcpy(t->s + t->len, line, (size_t)n + 1);
  t->len += (size_t)n;
}
#define E0(op) emit(t, op, 0, 0)
#define E1(op, a) emit(t, op, a, 1)

// One stack-balanced statement of a few ops, chosen by a deterministic generator.
static void statement(Text *t, uint32_t *seed, int depth) {
  *seed = *seed * 1103515245u + 12345u;
  uint32_t r = *seed >> 16;
  int a = (int)(r % LOCALS), b = (int)((r >> 4) % LOCALS), c = (int)((r >> 8) % LOCALS);
  switch (r % 9) {
    case 0: E1("load", a); E1("load", b); E0("add"); E1("store", c); break;
    case 1: E1("load", a); E1("push", (int)(r % 97) + 1); E0("mul"); E1("push", 0xffff); E0("and"); E1("store", c); break;
    case 2: E1("load", a); E1("load", b); E0("xor"); E1("push", 3); E0("shr"); E1("gstore", c % GLOBALS); break;
    case 3: E1("gload", a % GLOBALS); E1("push", (int)(r % 13) + 1); E0("div"); E1("load", b); E0("sub"); E1("store", c); break;
    case 4: E1("load", a); E1("call", (int)(r % 4)); E1("store", c); break;
    case 5: E1("load", a); E1("new", (int)(r % 1000)); E1("setf", 1); E1("load", b); E0("pop"); break;
    case 6: E1("new", (int)(r % 50)); E0("dup"); E1("getf", 0); E0("swap"); E1("store", 15); E1("store", a % 15); break;
    case 7:  // if (a < b) { statement }
      if (depth < 2) {
        Text body = {0};
        statement(&body, seed, depth + 1);
        int n = 0;
        for (size_t i = 0; i < body.len; i++) n += body.s[i] == '\n';
        E1("load", a); E1("load", b); E0("lt"); E1("jump_if", n);
        if (t->len + body.len + 1 > t->cap) {
          t->cap = (t->len + body.len + 1) * 2;
          t->s = realloc(t->s, t->cap);
          if (!t->s) abort();
        }
        memcpy(t->s + t->len, body.s, body.len + 1);
        t->len += body.len;
        free(body.s);
        break;
      }
      // fall through
    default: E1("load", a); E1("push", 1); E0("add"); E1("store", a); break;
  }
}
static char *generate_source(int statements) {
  Text t = {0};
  uint32_t seed = 12345;
  for (int i = 0; i < LOCALS; i++) { emit(&t, "push", i * 7 + 1, 1); emit(&t, "store", i, 1); }
  // The loop starts after the initialisation (instruction 2 * LOCALS).
  for (int i = 0; i < statements; i++) statement(&t, &seed, 0);
  emit(&t, "loop", 2 * LOCALS, 1);
  emit(&t, "halt", 0, 0);
  return t.s;
}

// The lexer and parser: called a few thousand times at startup only.
NOINLINE const char *skip_space(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\r') p++;
  return p;
}
NOINLINE int lookup_opcode(const char *word, size_t n) {
  for (int i = 0; i < N_OPS; i++)
    if (strlen(op_names[i]) == n && memcmp(op_names[i], word, n) == 0) return i;
  return -1;
}
NOINLINE const char *parse_int(const char *p, int32_t *out) {
  int neg = 0;
  int32_t v = 0;
  if (*p == '-') { neg = 1; p++; }
  while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  *out = neg ? -v : v;
  return p;
}
NOINLINE int parse(const char *src, Insn **code_out) {
  int cap = 1024, n = 0;
  Insn *code = malloc((size_t)cap * sizeof *code);
  if (!code) abort();
  const char *p = src;
  while (*p) {
    p = skip_space(p);
    if (*p == '\n') { p++; continue; }
    const char *w = p;
    while (*p && *p != ' ' && *p != '\n') p++;
    int op = lookup_opcode(w, (size_t)(p - w));
    if (op < 0) { fprintf(stderr, "interp: unknown op '%.*s'\n", (int)(p - w), w); exit(2); }
    int32_t arg = 0;
    p = skip_space(p);
    if (*p != '\n' && *p) p = parse_int(p, &arg);
    if (n == cap) {
      cap *= 2;
      code = realloc(code, (size_t)cap * sizeof *code);
      if (!code) abort();
    }
    code[n].op = op;
    code[n].arg = arg;
    n++;
  }
  *code_out = code;
  return n;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 300000;
  if (iterations < 1) iterations = 1;
  char *src = generate_source(100);
  static VM vm;
  double t0 = now();
  vm.ncode = parse(src, &vm.code);
  vm.counter = iterations;
  run(&vm);
  double t1 = now();
  uint64_t sum = vm.checksum;
  for (int i = 0; i < LOCALS; i++) sum = sum * 1099511628211ull + (uint64_t)vm.locals[i];
  for (int i = 0; i < GLOBALS; i++) sum = sum * 1099511628211ull + (uint64_t)vm.globals[i];
  printf("ops=%llu code=%d handler_calls=%llu gc=%llu live=%d checksum=%016llx\n", (unsigned long long)vm.ops, vm.ncode,
         (unsigned long long)vm.handler_calls, (unsigned long long)vm.gcs, vm.live_objs, (unsigned long long)sum);
  printf("seconds=%.6f\n", t1 - t0);
  free(vm.code);
  free(src);
  return 0;
}
