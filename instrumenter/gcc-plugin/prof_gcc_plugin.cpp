// SPDX-License-Identifier: BSD-3-Clause
// prof's GCC plugin: compiler instrumentation without -finstrument-functions.
//
// Like Score-P's plugin it instruments each function before inlining, except functions
// declared inline (inline, in-class member functions, constexpr), compiler-generated ones,
// those with __attribute__((no_instrument_function)), nvcc's host stubs and prof's own, and
// those a compile-time filter (-fplugin-arg-prof_gcc_plugin-filter=FILE) excludes. Small
// inline functions thus never call a hook, even where they are not inlined. A function declared
// inline that the filter names in an INCLUDE rule (not the bare "*": Filter::explicitly_included)
// is instrumented like any other: the hooks go in before inlining, so each inlined copy keeps
// its enter and exit calls and every call counts.
//
// At PLUGIN_PRE_GENERICIZE each chosen function gets a static descriptor (struct
// prof_plugin_region, adapters/compiler/plugin_region.h: names, file, lines, address, a
// handle the runtime caches, a flags word the runtime sets for filtered and throttled
// functions) and its body B becomes
//     bool on = desc.flags == 0;
//     if (on) __prof_plugin_enter(&desc); try { B } finally { if (on) __prof_plugin_exit(&desc); }
// so the exit hook runs on every return path and when an exception unwinds the frame, as
// GCC's own -finstrument-functions does, and a filtered or throttled function costs a load
// and a branch per call instead of two hook calls.
#include <cxxabi.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "measurement/filter/filter.hpp"

// GCC's plugin headers last: they poison some standard functions.
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "tree-iterator.h"
#include "stringpool.h"
#include "stor-layout.h"
#include "attribs.h"
#include "cgraph.h"
#include "varasm.h"
#include "function.h"
#include "diagnostic-core.h"

int plugin_is_GPL_compatible;  // GCC loads only plugins that declare this; prof is BSD-3-Clause

namespace {

struct State {
  bool verbose = false;
  prof::filter::Filter filter;
  bool has_filter = false;
  std::string cwd;
  // The descriptor type and the hooks, built on first use.
  tree region_type = NULL_TREE, enter_fn = NULL_TREE, exit_fn = NULL_TREE;
  tree f_handle, f_line, f_end, f_flags, f_name, f_mangled, f_file, f_fn;
};
State g;

tree field(const char* name, tree type, tree next) {
  tree f = build_decl(BUILTINS_LOCATION, FIELD_DECL, get_identifier(name), type);
  DECL_CHAIN(f) = next;
  return f;
}

// struct prof_plugin_region, in the layout of plugin_region.h. finish_builtin_struct takes the
// fields last first.
void build_types() {
  if (g.region_type) return;
  const tree cstr = build_pointer_type(build_qualified_type(char_type_node, TYPE_QUAL_CONST));
  g.region_type = make_node(RECORD_TYPE);
  g.f_handle = field("handle", unsigned_type_node, NULL_TREE);
  g.f_line = field("line", integer_type_node, g.f_handle);
  g.f_end = field("end_line", integer_type_node, g.f_line);
  g.f_flags = field("flags", unsigned_type_node, g.f_end);
  g.f_name = field("name", cstr, g.f_flags);
  g.f_mangled = field("mangled", cstr, g.f_name);
  g.f_file = field("file", cstr, g.f_mangled);
  g.f_fn = field("fn", ptr_type_node, g.f_file);
  finish_builtin_struct(g.region_type, "prof_plugin_region", g.f_fn, NULL_TREE);
  const tree hook_type = build_function_type_list(void_type_node, build_pointer_type(g.region_type), NULL_TREE);
  g.enter_fn = build_fn_decl("__prof_plugin_enter", hook_type);
  g.exit_fn = build_fn_decl("__prof_plugin_exit", hook_type);
  // The exit hook runs in a finally block: it must not throw.
  TREE_NOTHROW(g.enter_fn) = 1;
  TREE_NOTHROW(g.exit_fn) = 1;
}

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

std::string demangled(const char* mangled) {
  // Only C++ names: __cxa_demangle would read a C function "g" as the type __float128.
  if (!starts_with(mangled, "_Z")) return mangled;
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || !out) return mangled;
  std::string s(out);
  std::free(out);
  return s;
}

// A call in a function body to a function whose plain name starts with `prefix`.
tree calls_function_named(tree* tp, int* walk_subtrees, void* prefix) {
  if (TYPE_P(*tp)) *walk_subtrees = 0;
  if (TREE_CODE(*tp) != CALL_EXPR) return NULL_TREE;
  const tree callee = get_callee_fndecl(*tp);
  if (callee && DECL_NAME(callee) && starts_with(IDENTIFIER_POINTER(DECL_NAME(callee)), static_cast<const char*>(prefix)))
    return *tp;
  return NULL_TREE;
}

/// The host code nvcc (cudafe++) generates into every .cu translation unit: the kernels' launch
/// stubs (__device_stub__*, __wrapper__device_stub_* for template kernels), the host-side kernel
/// functions that only call them (they carry the kernel's own name and source line: found by that
/// call), the registration functions
/// (__cudaRegister*, __sti____cudaRegisterAll, __nv_cudaEntityRegisterCallback) and the CUDA
/// headers' static helpers (____nv_dummy_param_ref, __internal_cast_u2st...). Matched on the
/// plain identifier, not the mangled name (a static C++ function's is "_ZL31__nv_...").
bool nvcc_generated(tree fn) {
  const char* id = DECL_NAME(fn) ? IDENTIFIER_POINTER(DECL_NAME(fn)) : "";
  static const char* const kPrefixes[] = {"__device_stub_", "__wrapper__device_stub_", "__cuda", "__sti____cuda",
                                          "__nv_", "____nv_", "__internal_"};
  for (const char* p : kPrefixes)
    if (starts_with(id, p)) return true;
  // A template kernel's host function calls the stub through __wrapper__device_stub_<name><T>.
  static char device_stub[] = "__device_stub_";
  static char wrapper_stub[] = "__wrapper__device_stub_";
  return DECL_SAVED_TREE(fn) && (walk_tree_without_duplicates(&DECL_SAVED_TREE(fn), calls_function_named, device_stub) ||
                                 walk_tree_without_duplicates(&DECL_SAVED_TREE(fn), calls_function_named, wrapper_stub));
}

/// Functions that are never instrumented, whatever the filter says (those declared inline only
/// when the filter includes them explicitly: see instrument()).
bool never(tree fn, const char* mangled) {
  if (DECL_ARTIFICIAL(fn)) return true;
  // A constructor's or destructor's clones (C1/C2, D0/D1/D2) get the body of the abstract
  // function (C4/D4) with its hooks already in it: wrapping them again would count twice.
  if (DECL_ABSTRACT_ORIGIN(fn) != NULL_TREE) return true;
  const tree attrs = DECL_ATTRIBUTES(fn);
  if (lookup_attribute("no_instrument_function", attrs)) return true;
  // No prologue, so no call may be added (it would clobber the caller's registers).
  if (lookup_attribute("naked", attrs)) return true;
  // prof's own entry points (its headers' inline helpers are inline anyway).
  if (starts_with(mangled, "__prof_") || starts_with(mangled, "prof_")) return true;
  return nvcc_generated(fn);
}

tree string_literal(const std::string& s) { return build_string_literal(s.size() + 1, s.c_str()); }

/// The source file as the runtime's address path names it: absolute and normalised.
std::string absolute(const char* file) {
  if (!file || !*file) return "";
  std::string f = file[0] == '/' || g.cwd.empty() ? std::string(file) : g.cwd + "/" + file;
  return std::filesystem::path(f).lexically_normal().string();
}

void instrument(void* gcc_data, void*) {
  const tree fn = static_cast<tree>(gcc_data);
  if (!fn || TREE_CODE(fn) != FUNCTION_DECL || !DECL_SAVED_TREE(fn) || seen_error()) return;
  const char* mangled = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fn));
  if (never(fn, mangled)) return;
  const std::string name = demangled(mangled);
  const std::string file = absolute(DECL_SOURCE_FILE(fn));
  const char* mangled_or_none = name == mangled ? "" : mangled;
  const bool declared_inline = DECL_DECLARED_INLINE_P(fn);
  if (declared_inline && !(g.has_filter && g.filter.explicitly_included(name, mangled_or_none, file))) return;
  if (g.has_filter && g.filter.excluded(name, mangled_or_none, file)) {
    if (g.verbose) inform(DECL_SOURCE_LOCATION(fn), "prof: %s filtered out at compile time", name.c_str());
    return;
  }
  build_types();
  int end_line = -1;
  if (const function* f = DECL_STRUCT_FUNCTION(fn))
    if (LOCATION_LINE(f->function_end_locus) > 0) end_line = LOCATION_LINE(f->function_end_locus);

  vec<constructor_elt, va_gc>* init = nullptr;
  CONSTRUCTOR_APPEND_ELT(init, g.f_handle, build_int_cst(unsigned_type_node, 0));
  CONSTRUCTOR_APPEND_ELT(init, g.f_line, build_int_cst(integer_type_node, DECL_SOURCE_LINE(fn) ? DECL_SOURCE_LINE(fn) : -1));
  CONSTRUCTOR_APPEND_ELT(init, g.f_end, build_int_cst(integer_type_node, end_line));
  CONSTRUCTOR_APPEND_ELT(init, g.f_flags, build_int_cst(unsigned_type_node, 0));
  CONSTRUCTOR_APPEND_ELT(init, g.f_name, string_literal(name));
  CONSTRUCTOR_APPEND_ELT(init, g.f_mangled, string_literal(mangled));
  CONSTRUCTOR_APPEND_ELT(init, g.f_file, string_literal(file));
  // The address of an abstract constructor or destructor is no symbol (only its clones are):
  // none then. Nor for a function declared inline: taking its address would make GCC emit an
  // out-of-line copy that the program does not otherwise need.
  const bool cdtor = DECL_CXX_CONSTRUCTOR_P(fn) || DECL_CXX_DESTRUCTOR_P(fn);
  CONSTRUCTOR_APPEND_ELT(init, g.f_fn,
                         cdtor || declared_inline ? build_int_cst(ptr_type_node, 0)
                                                  : build1(NOP_EXPR, ptr_type_node, build_fold_addr_expr(fn)));

  // A file-scope static with a name no C or C++ identifier can have, derived from the function's
  // (unique) assembler name: a counter would restart after a precompiled header is loaded.
  const std::string var_name = std::string("__prof_region.") + mangled;
  tree var = build_decl(DECL_SOURCE_LOCATION(fn), VAR_DECL, get_identifier(var_name.c_str()), g.region_type);
  TREE_STATIC(var) = 1;
  TREE_PUBLIC(var) = 0;
  DECL_ARTIFICIAL(var) = 1;
  DECL_IGNORED_P(var) = 1;
  TREE_USED(var) = 1;
  TREE_ADDRESSABLE(var) = 1;
  DECL_INITIAL(var) = build_constructor(g.region_type, init);
  varpool_node::finalize_decl(var);

  // The flags word, read once into a local: while it is 0 both hooks are called, otherwise
  // neither (the runtime sets it for a filtered or throttled function; the exit call follows
  // the entry's decision, so a function throttled while it runs still leaves).
  const location_t where = DECL_SOURCE_LOCATION(fn);
  const tree on = build_decl(where, VAR_DECL, get_identifier("__prof_on"), boolean_type_node);
  DECL_CONTEXT(on) = fn;
  DECL_ARTIFICIAL(on) = 1;
  DECL_IGNORED_P(on) = 1;
  TREE_USED(on) = 1;
  const tree flags = build3(COMPONENT_REF, unsigned_type_node, var, g.f_flags, NULL_TREE);
  const tree zero = build_int_cst(unsigned_type_node, 0);
  const tree desc = build_fold_addr_expr(var);
  auto if_on = [&](tree call) { return build3(COND_EXPR, void_type_node, on, call, build_empty_stmt(where)); };
  tree body = alloc_stmt_list();
  append_to_statement_list(build2(MODIFY_EXPR, boolean_type_node, on, build2(EQ_EXPR, boolean_type_node, flags, zero)), &body);
  append_to_statement_list(if_on(build_call_expr(g.enter_fn, 1, desc)), &body);
  append_to_statement_list(build2(TRY_FINALLY_EXPR, void_type_node, DECL_SAVED_TREE(fn), if_on(build_call_expr(g.exit_fn, 1, desc))),
                           &body);
  DECL_SAVED_TREE(fn) = build3(BIND_EXPR, void_type_node, on, body, NULL_TREE);
  if (g.verbose)
    inform(DECL_SOURCE_LOCATION(fn), "prof: instrumented %s%s", name.c_str(), declared_inline ? " (declared inline; the filter includes it)" : "");
}

}  // namespace

int plugin_init(struct plugin_name_args* info, struct plugin_gcc_version* version) {
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("prof's GCC plugin was built for GCC %s, not for this compiler (%s); rebuild prof with this compiler "
          "or use prof-wrap --instrument=functions",
          gcc_version.basever, version->basever);
    return 1;
  }
  char buf[4096];
  if (::getcwd(buf, sizeof buf)) g.cwd = buf;
  for (int i = 0; i < info->argc; ++i) {
    const plugin_argument& a = info->argv[i];
    if (std::strcmp(a.key, "verbose") == 0) {
      g.verbose = true;
    } else if (std::strcmp(a.key, "filter") == 0 && a.value) {
      std::string err;
      if (!g.filter.load(a.value, &err)) {
        error("prof: --instrument-filter: %s", err.c_str());
        return 1;
      }
      g.has_filter = true;
    } else {
      error("prof's GCC plugin: unknown argument '%s'; expected filter=FILE or verbose", a.key);
      return 1;
    }
  }
  static plugin_info about = {"0.1", "prof compiler instrumentation (function enter/exit with region descriptors)"};
  register_callback(info->base_name, PLUGIN_INFO, nullptr, &about);
  register_callback(info->base_name, PLUGIN_PRE_GENERICIZE, instrument, nullptr);
  return 0;
}
