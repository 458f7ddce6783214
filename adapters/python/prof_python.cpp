// SPDX-License-Identifier: BSD-3-Clause
// prof._prof: the Python adapter, a CPython extension linked against libprof.so. `python3 -m prof`
// (prof/__main__.py) runs the interpreter under prof-run, so libprof is preloaded and started,
// and then calls start(). Each Python function's start and end (and each call of a C function:
// builtins, methods of extension types) becomes an Enter and a Leave of its region, on every
// thread, through one of CPython's two interfaces:
//  - sys.monitoring (PEP 669; Python 3.12 and newer): callbacks for PY_START/PY_RESUME/PY_THROW
//    (enter), PY_RETURN/PY_YIELD/PY_UNWIND (leave), CALL/C_RETURN/C_RAISE (C functions). No
//    frame object is made, and code that is not recorded (filtered, prof's own API) has its
//    events switched off where they fire (sys.monitoring.DISABLE): it costs nothing afterwards.
//  - PyEval_SetProfile (3.11 and older): a C profile function on every thread.
// Both give balanced events: a generator or coroutine enters at each resume and leaves at each
// suspension, an exception unwinding a frame leaves it, so the nesting holds.
// The hot path looks the region up in the code object's extra slot (PEP 523's co_extra), or for a
// C function by its method definition in a table, under the GIL; only the first sight of each
// builds a name.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "measurement/adapter_api.hpp"
#include "measurement/include/prof/user.h"

#if PY_VERSION_HEX >= 0x030C0000
#define PROF_PY_MONITORING 1
#define PROF_CODE_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
#define PROF_CODE_GET_EXTRA PyUnstable_Code_GetExtra
#define PROF_CODE_SET_EXTRA PyUnstable_Code_SetExtra
#else
#define PROF_PY_MONITORING 0
#define PROF_CODE_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
#define PROF_CODE_GET_EXTRA _PyCode_GetExtra
#define PROF_CODE_SET_EXTRA _PyCode_SetExtra
#endif

namespace {

using prof::RegionId;
namespace api = prof::api;
namespace regions = prof::regions;

constexpr RegionId kSkip = regions::kFiltered;
constexpr RegionId kImport = regions::kFiltered - 1;  // a frame of the import machinery

bool g_active = false;
bool g_c_calls = true;
// The code objects' extra slot that holds region + 1 (0: not seen yet); -1 before start().
Py_ssize_t g_extra_index = -1;
// A C function's PyMethodDef → region (bound method objects are made per call; their
// definition is not).
std::unordered_map<const PyMethodDef*, RegionId>* g_c_regions;

std::string utf8(PyObject* o) {
  if (!o || !PyUnicode_Check(o)) return "";
  const char* s = PyUnicode_AsUTF8(o);
  if (!s) PyErr_Clear();
  return s ? s : "";
}

std::string attr_string(PyObject* o, const char* name) {
  PyObject* v = PyObject_GetAttrString(o, name);
  if (!v) {
    PyErr_Clear();
    return "";
  }
  std::string s = utf8(v);
  Py_DECREF(v);
  return s;
}

/// Python's import machinery: left out, with everything it runs (the imported modules' code).
bool import_machinery(const std::string& module, const std::string& file) {
  return module.rfind("importlib._bootstrap", 0) == 0 || module.rfind("_frozen_importlib", 0) == 0 ||
         file.rfind("<frozen importlib._bootstrap", 0) == 0;
}

/// Code that opens and closes regions of its own, which must nest in its caller's frame, not in
/// its own: prof's Python API (prof.region) and NVTX (torch.cuda.nvtx.range_push, the nvtx
/// package, torch._C._nvtx). Their frames and C calls are not regions: a range pushed inside
/// range_push() would otherwise outlive the frame it was opened in, and the nesting break.
bool opens_regions(const std::string& module) {
  return module == "prof" || module.rfind("prof.", 0) == 0 || module.find("nvtx") != std::string::npos;
}

/// Code that only starts the program's own (runpy, for python3 -m prof -m module): not a region,
/// what it runs is recorded.
bool runs_the_program(const std::string& module) { return module == "runpy"; }

constexpr RegionId kDeferred = regions::kFiltered - 2;  // ordinary code first seen during an import
// The outermost frame of an import (importlib's _find_and_load, or _gcd_import under
// importlib.import_module): the import becomes a region "import <module>" in its caller, so that
// its time (a lazy `import torch._dynamo` takes seconds) is not the caller's own.
constexpr RegionId kImportRoot = regions::kFiltered - 3;

int importing_now();

/// The region of a code object seen for the first time, or first seen outside an import
/// (kDeferred: code run by an import, whose region is defined only if it runs again later, so
/// that an import does not define thousands of regions that are never entered); `globals`: its
/// frame's (borrowed, or nullptr), for the module's name.
PROF_COLD RegionId new_code_region(PyCodeObject* code, PyObject* globals) {
  std::string module;
  if (globals && PyDict_Check(globals)) module = utf8(PyDict_GetItemString(globals, "__name__"));
  PyObject* c = reinterpret_cast<PyObject*>(code);
  const std::string qualname = attr_string(c, "co_qualname"), file = attr_string(c, "co_filename");
  RegionId id;
  if (import_machinery(module, file)) {
    id = qualname == "_find_and_load" || qualname == "_gcd_import" ? kImportRoot : kImport;
  } else if (opens_regions(module) || runs_the_program(module)) {
    id = kSkip;
  } else if (importing_now() > 0) {
    id = kDeferred;
  } else {
    regions::RegionDef d;
    d.name = (module.empty() ? file : module) + ":" + qualname;
    d.canonical = d.name;
    d.file = file;
    d.begin_line = code->co_firstlineno;
    d.paradigm = regions::Paradigm::Python;
    d.role = regions::Role::Function;
    id = api::define_region_unless_filtered(d);
  }
  // Region + 1 in the code object's slot: freed with it, nothing to release.
  if (PROF_CODE_SET_EXTRA(c, g_extra_index, reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1)) != 0) PyErr_Clear();
  return id;
}

/// The region of a code object: its slot, or new_code_region.
inline RegionId code_region(PyObject* code, PyObject* (*globals)()) {
  void* extra = nullptr;
  if (PROF_LIKELY(PROF_CODE_GET_EXTRA(code, g_extra_index, &extra) == 0 && extra)) {
    const auto id = static_cast<RegionId>(reinterpret_cast<std::uintptr_t>(extra) - 1);
    if (PROF_LIKELY(id != kDeferred) || importing_now() > 0) return id;
  }
  PyErr_Clear();
  return new_code_region(reinterpret_cast<PyCodeObject*>(code), globals());
}

/// The type whose method `def` is, for a method bound to (or called on) `self`: the class in
/// type(self)'s MRO whose dictionary holds that method's descriptor (list for a list subclass's
/// append), so that a method has one name whatever object it is first seen on. nullptr when
/// `self` is a module or none is found (a borrowed reference).
PyTypeObject* defining_type(const PyMethodDef* def, PyObject* self) {
  if (!self || PyModule_Check(self) || !def->ml_name) return nullptr;
  PyTypeObject* type = PyType_Check(self) ? reinterpret_cast<PyTypeObject*>(self) : Py_TYPE(self);
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro)) return type;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* t = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    PyObject* d = t->tp_dict ? PyDict_GetItemString(t->tp_dict, def->ml_name) : nullptr;  // borrowed
    if (d && Py_IS_TYPE(d, &PyMethodDescr_Type) && reinterpret_cast<PyMethodDescrObject*>(d)->d_method == def) return t;
  }
  return type;
}

/// A C function's region: builtins:len, builtins:list.append, time:sleep, torch._C._nn:linear.
PROF_COLD RegionId new_c_region(const PyMethodDef* def, PyObject* fn, PyObject* self, PyTypeObject* owner) {
  std::string module, qualname;
  if (!owner) owner = defining_type(def, self);
  if (owner) {
    PyObject* t = reinterpret_cast<PyObject*>(owner);
    module = attr_string(t, "__module__");
    qualname = attr_string(t, "__qualname__");
    if (!qualname.empty()) qualname += std::string(".") + (def->ml_name ? def->ml_name : "?");
  } else {
    module = attr_string(fn, "__module__");
    if (module.empty() && self && PyModule_Check(self)) module = attr_string(self, "__name__");
  }
  if (qualname.empty()) qualname = attr_string(fn, "__qualname__");
  if (qualname.empty()) qualname = def->ml_name ? def->ml_name : "?";
  RegionId id = kSkip;
  if (!opens_regions(module)) {
    regions::RegionDef d;
    d.name = (module.empty() ? std::string("builtins") : module) + ":" + qualname;
    d.canonical = d.name;
    d.paradigm = regions::Paradigm::Python;
    d.role = regions::Role::Wrapper;
    id = api::define_region_unless_filtered(d);
  }
  g_c_regions->emplace(def, id);
  return id;
}

/// The region of a called C function: a builtin function or bound method (`fn`), or an unbound
/// method descriptor called with its object as first argument (`arg0`; sys.monitoring's CALL
/// for `obj.method(...)`). kSkip for any other callable (Python functions have their own events).
inline RegionId c_region(PyObject* fn, PyObject* arg0) {
  const PyMethodDef* def;
  PyObject* self;
  PyTypeObject* owner = nullptr;
  if (PyCFunction_Check(fn)) {
    def = reinterpret_cast<PyCFunctionObject*>(fn)->m_ml;
    self = PyCFunction_GET_SELF(fn);
  } else if (Py_IS_TYPE(fn, &PyMethodDescr_Type)) {
    def = reinterpret_cast<PyMethodDescrObject*>(fn)->d_method;
    self = arg0;
    owner = PyDescr_TYPE(fn);
  } else {
    return kSkip;
  }
  auto it = g_c_regions->find(def);
  return it != g_c_regions->end() ? it->second : new_c_region(def, fn, self, owner);
}

// Per thread, one entry per open call: its region and whether its Enter was written. A return is
// matched to its call by region: one whose call came before the measurement started (the frames
// that called start(), a new thread's first frames under PyEval_SetProfile), or whose call event
// CPython gave for another callable (seen with PyTorch on 3.12's PyEval_SetProfile), is left
// out; calls above the matched one whose returns never came are closed with it. So the
// Enter/Leave nesting always holds. Plain data, so that the thread_local needs no guard.
struct Open {
  RegionId region;
  bool written;
};
struct ThreadCalls {
  Open* open;
  std::uint32_t depth, capacity;
  // Frames of the import machinery open on this thread: while one is, nothing is recorded (the
  // code of the modules being imported, which floods a profile: importing torch alone makes
  // hundreds of thousands of call paths).
  int importing;
  bool import_open;  // the outermost import's region is open (on top of `open`)
};
thread_local ThreadCalls t_calls;
int importing_now() { return t_calls.importing; }
std::atomic<std::uint64_t> g_unmatched_returns{0}, g_closed_calls{0};

// Frees a thread's stack when it ends (made at the thread's first growth: only then does the
// guarded thread_local get touched).
struct CallsFreer {
  ~CallsFreer() {
    std::free(t_calls.open);
    t_calls = ThreadCalls{};
  }
};

PROF_COLD bool grow(ThreadCalls& t) {
  static thread_local CallsFreer freer;
  (void)&freer;
  const std::uint32_t cap = t.capacity ? t.capacity * 2 : 64;
  void* p = std::realloc(t.open, cap * sizeof(Open));
  if (!p) return false;
  t.open = static_cast<Open*>(p);
  t.capacity = cap;
  return true;
}

/// The module an import loads: the argument `name` of its outermost importlib frame, the running
/// one (the callbacks run in the frame that starts).
std::string import_target() {
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  PyObject* locals = f ? PyFrame_GetLocals(f) : nullptr;
  PyObject* name = locals ? PyMapping_GetItemString(locals, "name") : nullptr;
  Py_XDECREF(locals);
  std::string s = utf8(name);
  Py_XDECREF(name);
  PyErr_Clear();
  return s;
}

std::unordered_map<std::string, RegionId>* g_import_regions;  // module -> "import <module>" (under the GIL)

PROF_COLD void enter_import(ThreadCalls& t) {
  const std::string target = import_target();
  if (!g_import_regions) g_import_regions = new std::unordered_map<std::string, RegionId>;
  auto it = g_import_regions->find(target);
  if (it == g_import_regions->end()) {
    regions::RegionDef d;
    d.name = "import " + (target.empty() ? std::string("(a module)") : target);
    d.canonical = d.name;
    d.paradigm = regions::Paradigm::Python;
    d.role = regions::Role::Function;
    it = g_import_regions->emplace(target, api::define_region_unless_filtered(d)).first;
  }
  const RegionId r = it->second;
  if (r >= kImportRoot || (t.depth == t.capacity && !grow(t))) return;  // filtered out
  t.open[t.depth++] = Open{r, api::enter_now(r)};
  t.import_open = true;
}

PROF_COLD void leave_import(ThreadCalls& t) {
  t.import_open = false;
  if (t.depth == 0) return;
  const Open& o = t.open[--t.depth];
  if (o.written) api::leave_now(o.region);
}

inline void on_enter(RegionId id) {
  ThreadCalls& t = t_calls;
  if (PROF_UNLIKELY(id == kImport || id == kImportRoot)) {
    if (id == kImportRoot && t.importing == 0) enter_import(t);
    ++t.importing;
    return;
  }
  if (id >= kDeferred || t.importing > 0) return;  // kSkip, kDeferred
  if (PROF_UNLIKELY(t.depth == t.capacity) && !grow(t)) return;
  t.open[t.depth++] = Open{id, api::enter_now(id)};
}

PROF_COLD void close_unreturned(ThreadCalls& t, std::uint32_t k) {
  while (t.depth > k) {  // calls whose returns never came
    const Open& o = t.open[--t.depth];
    if (o.written) api::leave_now(o.region);
    g_closed_calls.fetch_add(1, std::memory_order_relaxed);
  }
}

inline void on_leave(RegionId id) {
  ThreadCalls& t = t_calls;
  if (PROF_UNLIKELY(id == kImport || id == kImportRoot)) {
    if (t.importing > 0 && --t.importing == 0 && t.import_open) leave_import(t);
    return;
  }
  if (id >= kDeferred || t.importing > 0) return;
  std::uint32_t k = t.depth;
  if (PROF_UNLIKELY(k == 0 || t.open[k - 1].region != id)) {
    while (k > 0 && t.open[k - 1].region != id) --k;
    if (k == 0) {
      if (t.depth) g_unmatched_returns.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    close_unreturned(t, k);
  }
  if (t.open[--t.depth].written) api::leave_now(id);
}

#if PROF_PY_MONITORING
// ---- sys.monitoring (3.12+) ----
PyObject* g_disable;         // sys.monitoring.DISABLE
int g_tool = -1;             // our tool id
PyObject* g_monitoring;      // the sys.monitoring module

PyObject* no_globals() { return PyEval_GetGlobals(); }  // the running frame's (borrowed)

// A local event of code that is not recorded: switched off at that place for good.
inline PyObject* result_for(RegionId id) {
  return Py_NewRef(id == kSkip ? g_disable : Py_None);
}

// callback(code, offset[, value]) of a code object's event: PY_START, PY_RESUME, PY_THROW (enter),
// PY_RETURN, PY_YIELD, PY_UNWIND (leave). `kLocal`: an event that may be switched off where it
// fires (not PY_THROW and PY_UNWIND).
template <void (*kHandle)(RegionId), bool kLocal>
PyObject* mon_code(PyObject*, PyObject* const* args, Py_ssize_t) {
  if (!g_active) Py_RETURN_NONE;
  const RegionId id = code_region(args[0], &no_globals);
  kHandle(id);
  return kLocal ? result_for(id) : Py_NewRef(Py_None);
}
// callback(code, offset, callable, arg0) for CALL (every call; only C functions are ours),
// C_RETURN and C_RAISE (after a C function's call whose CALL was seen).
PyObject* mon_call(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (g_active && n >= 4) on_enter(c_region(args[2], args[3]));
  Py_RETURN_NONE;
}
PyObject* mon_c_leave(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (g_active && n >= 4) on_leave(c_region(args[2], args[3]));
  Py_RETURN_NONE;
}

#define PROF_FASTCALL(f) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&(f)))
PyMethodDef kCallbacks[] = {
    {"_enter", PROF_FASTCALL((mon_code<on_enter, true>)), METH_FASTCALL, nullptr},
    {"_enter_nolocal", PROF_FASTCALL((mon_code<on_enter, false>)), METH_FASTCALL, nullptr},
    {"_leave", PROF_FASTCALL((mon_code<on_leave, true>)), METH_FASTCALL, nullptr},
    {"_leave_nolocal", PROF_FASTCALL((mon_code<on_leave, false>)), METH_FASTCALL, nullptr},
    {"_call", PROF_FASTCALL(mon_call), METH_FASTCALL, nullptr},
    {"_c_leave", PROF_FASTCALL(mon_c_leave), METH_FASTCALL, nullptr},
};

/// sys.monitoring.events.<name>, or -1.
long event_bit(const char* name) {
  PyObject* events = PyObject_GetAttrString(g_monitoring, "events");
  PyObject* v = events ? PyObject_GetAttrString(events, name) : nullptr;
  Py_XDECREF(events);
  const long bit = v ? PyLong_AsLong(v) : -1;
  Py_XDECREF(v);
  if (bit < 0) PyErr_Clear();
  return bit;
}

/// Takes a free tool id (4 first: cProfile and other profilers use PROFILER_ID = 2, debuggers
/// 0, coverage 1, so a script may still run them under prof), registers the callbacks and
/// switches the events on. False (with a Python exception) when no id is free.
bool monitoring_start(bool c_calls) {
  if (!g_monitoring) {
    PyObject* sys_monitoring = PySys_GetObject("monitoring");  // borrowed
    if (!sys_monitoring) {
      PyErr_SetString(PyExc_RuntimeError, "prof: sys.monitoring is missing");
      return false;
    }
    g_monitoring = Py_NewRef(sys_monitoring);
    g_disable = PyObject_GetAttrString(g_monitoring, "DISABLE");
    if (!g_disable) return false;
  }
  static const int kIds[] = {4, 3, 2, 1, 0, 5};
  for (int id : kIds) {
    PyObject* r = PyObject_CallMethod(g_monitoring, "use_tool_id", "is", id, "prof");
    if (r) {
      Py_DECREF(r);
      g_tool = id;
      break;
    }
    PyErr_Clear();
  }
  if (g_tool < 0) {
    PyErr_SetString(PyExc_RuntimeError, "prof: every sys.monitoring tool id is in use; Python calls cannot be recorded");
    return false;
  }
  struct Reg {
    const char* event;
    int callback;
  };
  const Reg regs[] = {{"PY_START", 0}, {"PY_RESUME", 0}, {"PY_THROW", 1}, {"PY_RETURN", 2}, {"PY_YIELD", 2}, {"PY_UNWIND", 3},
                      {"CALL", 4},     {"C_RETURN", 5},  {"C_RAISE", 5}};
  long mask = 0;
  for (const Reg& r : regs) {
    const bool c_event = r.callback >= 4;
    if (c_event && !c_calls) continue;
    const long bit = event_bit(r.event);
    if (bit <= 0) continue;
    PyObject* fn = PyCFunction_New(&kCallbacks[r.callback], nullptr);
    if (!fn) return false;
    PyObject* res = PyObject_CallMethod(g_monitoring, "register_callback", "ilO", g_tool, bit, fn);
    Py_DECREF(fn);
    if (!res) return false;
    Py_DECREF(res);
    if (std::strcmp(r.event, "C_RETURN") != 0 && std::strcmp(r.event, "C_RAISE") != 0) mask |= bit;  // follow CALL
  }
  PyObject* res = PyObject_CallMethod(g_monitoring, "set_events", "il", g_tool, mask);
  if (!res) return false;
  Py_DECREF(res);
  return true;
}

void monitoring_stop() {
  if (g_tool < 0) return;
  PyObject* res = PyObject_CallMethod(g_monitoring, "set_events", "ii", g_tool, 0);
  Py_XDECREF(res);
  res = PyObject_CallMethod(g_monitoring, "free_tool_id", "i", g_tool);
  Py_XDECREF(res);
  PyErr_Clear();
  g_tool = -1;
}
#endif

// ---- PyEval_SetProfile (3.11 and older; and new threads' hand-over below) ----
PyFrameObject* t_frame;  // the profiled frame of the event being handled (under the GIL)
PyObject* frame_globals() {
  PyObject* g = PyFrame_GetGlobals(t_frame);  // new reference; the frame's globals outlive the call
  Py_XDECREF(g);
  return g;
}

int on_event(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  if (!g_active) return 0;  // stopped (at exit): other threads may still call in
  switch (what) {
    case PyTrace_CALL:
    case PyTrace_RETURN: {
      PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
      t_frame = frame;
      const RegionId id = code_region(reinterpret_cast<PyObject*>(code), &frame_globals);
      Py_DECREF(code);
      if (what == PyTrace_CALL) on_enter(id);
      else on_leave(id);
      return 0;
    }
    case PyTrace_C_CALL:
      if (g_c_calls) on_enter(c_region(arg, nullptr));
      return 0;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
      if (g_c_calls) on_leave(c_region(arg, nullptr));
      return 0;
    default:
      return 0;
  }
}

// A Python-level profile function for threading.setprofile: a new thread calls it once, at its
// first event, and it puts the C profile function in its place on that thread.
PyObject* thread_start(PyObject*, PyObject* const*, Py_ssize_t) {
  if (g_active) PyEval_SetProfile(&on_event, nullptr);
  Py_RETURN_NONE;
}

PyObject* start(PyObject*, PyObject* args) {
  int c_calls = 1;
  if (!PyArg_ParseTuple(args, "|p", &c_calls)) return nullptr;
  if (!g_c_regions) g_c_regions = new std::unordered_map<const PyMethodDef*, RegionId>;
  if (g_extra_index < 0) {
    g_extra_index = PROF_CODE_EXTRA_INDEX(nullptr);
    if (g_extra_index < 0) {
      PyErr_SetString(PyExc_RuntimeError, "prof: no code object extra slot is left (PEP 523); Python calls cannot be recorded");
      return nullptr;
    }
  }
  g_c_calls = c_calls != 0;
  // Samples (python3 -m prof --sampling) stop at the interpreter's frames: they land below the
  // innermost Python function, with the native code it called (a C extension) below that.
  api::set_interpreter(reinterpret_cast<const void*>(&PyEval_EvalCode));
  g_active = true;
#if PROF_PY_MONITORING
  if (!monitoring_start(g_c_calls)) {
    g_active = false;
    return nullptr;
  }
#else
  PyEval_SetProfile(&on_event, nullptr);
#endif
  Py_RETURN_NONE;
}

PyObject* stop(PyObject*, PyObject*) {
  if (g_active) {
    const std::uint64_t unmatched = g_unmatched_returns.load(), closed = g_closed_calls.load();
    if (unmatched || closed) {
      const std::string text = "python: " + std::to_string(unmatched) + " returns without their call were left out, " +
                               std::to_string(closed) + " calls without their return were closed at an outer return";
      api::info(1, text.c_str());
    }
  }
  g_active = false;
#if PROF_PY_MONITORING
  monitoring_stop();
#else
  PyEval_SetProfile(nullptr, nullptr);
#endif
  Py_RETURN_NONE;
}

// User regions by name: one handle per name (prof_user_region_begin defines it once).
std::unordered_map<std::string, std::unique_ptr<prof_user_handle>>* g_handles;

prof_user_handle* handle_of(const char* name) {
  if (!g_handles) g_handles = new std::unordered_map<std::string, std::unique_ptr<prof_user_handle>>;
  auto& h = (*g_handles)[name];
  if (!h) h.reset(new prof_user_handle(0));
  return h.get();
}

PyObject* region_begin(PyObject*, PyObject* args) {
  const char* name;
  const char* file = "";
  int line = -1;
  if (!PyArg_ParseTuple(args, "s|si", &name, &file, &line)) return nullptr;
  if (g_active) prof_user_region_begin(handle_of(name), name, file, line);
  Py_RETURN_NONE;
}

PyObject* region_end(PyObject*, PyObject* args) {
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
  if (g_active) prof_user_region_end(handle_of(name));
  Py_RETURN_NONE;
}

PyObject* set_recording(PyObject*, PyObject* args) {
  int on = 1;
  if (!PyArg_ParseTuple(args, "p", &on)) return nullptr;
  if (g_active) {
    if (on) prof_recording_on();
    else prof_recording_off();
  }
  Py_RETURN_NONE;
}

PyMethodDef kMethods[] = {
    {"start", start, METH_VARARGS, "start(c_calls=True): record every Python (and C) call on every thread"},
    {"stop", stop, METH_NOARGS, "stop recording Python calls"},
    {"thread_start", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&thread_start)), METH_FASTCALL,
     "for threading.setprofile: puts the C profile function on the new thread"},
    {"region_begin", region_begin, METH_VARARGS, "region_begin(name, file='', line=-1)"},
    {"region_end", region_end, METH_VARARGS, "region_end(name)"},
    {"set_recording", set_recording, METH_VARARGS, "set_recording(on): OTF2 MeasurementOnOff"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "prof._prof", "prof's Python adapter (see prof/__init__.py)", -1, kMethods,
                       nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__prof(void) {
  PyObject* m = PyModule_Create(&kModule);
  // 1: sys.monitoring records every thread; 0: PyEval_SetProfile, set on each new thread by
  // threading.setprofile(thread_start).
  if (m && PyModule_AddIntConstant(m, "MONITORING", PROF_PY_MONITORING) != 0) Py_CLEAR(m);
  return m;
}
