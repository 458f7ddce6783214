// SPDX-License-Identifier: BSD-3-Clause
// prof._prof: the Python adapter, a CPython extension linked against libprof.so. `python3 -m prof`
// (prof/__main__.py) runs the interpreter under prof-run, so libprof is preloaded and started,
// and then calls start(): a C profile function (PyEval_SetProfile, on every thread) turns each
// Python function's call and return into an Enter and a Leave of its region, and each call of a
// C function (builtins, methods of extension types) too. CPython's profile events are balanced
// by construction: a generator or coroutine gives a call at each resume and a return at each
// suspension, an exception unwinding a frame gives its return, so the nesting always holds.
// The hot path (callback below) looks the region up in a table by code object, or by the C
// function's method definition, under the GIL; only the first sight of each one builds a name.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "measurement/adapter_api.hpp"
#include "measurement/include/prof/user.h"

namespace {

using prof::RegionId;
namespace api = prof::api;
namespace regions = prof::regions;

constexpr RegionId kSkip = regions::kFiltered;
constexpr RegionId kImport = regions::kFiltered - 1;  // a frame of the import machinery

bool g_active = false;
bool g_c_calls = true;
// Code object → region; the code objects are kept alive, so their addresses are never reused.
std::unordered_map<PyObject*, RegionId>* g_code_regions;
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

RegionId code_region(PyFrameObject* frame) {
  PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
  auto it = g_code_regions->find(reinterpret_cast<PyObject*>(code));
  if (it != g_code_regions->end()) {
    Py_DECREF(code);
    return it->second;
  }
  PyObject* globals = PyFrame_GetGlobals(frame);  // new reference
  std::string module = globals && PyDict_Check(globals) ? utf8(PyDict_GetItemString(globals, "__name__")) : "";
  Py_XDECREF(globals);
  PyObject* c = reinterpret_cast<PyObject*>(code);
  const std::string qualname = attr_string(c, "co_qualname"), file = attr_string(c, "co_filename");
  RegionId id = import_machinery(module, file) ? kImport : kSkip;
  if (id != kImport && !opens_regions(module)) {
    regions::RegionDef d;
    d.name = (module.empty() ? file : module) + ":" + qualname;
    d.canonical = d.name;
    d.file = file;
    d.begin_line = code->co_firstlineno;
    d.paradigm = regions::Paradigm::Python;
    d.role = regions::Role::Function;
    id = api::define_region_unless_filtered(d);
  }
  g_code_regions->emplace(c, id);  // keeps the reference
  return id;
}

RegionId c_region(PyObject* fn) {
  if (!PyCFunction_Check(fn)) return kSkip;
  const PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(fn)->m_ml;
  auto it = g_c_regions->find(def);
  if (it != g_c_regions->end()) return it->second;
  // builtins:len, builtins:list.append, time:sleep, torch._C:...
  std::string module = attr_string(fn, "__module__");
  PyObject* self = PyCFunction_GET_SELF(fn);
  if (module.empty() && self && !PyModule_Check(self)) module = attr_string(reinterpret_cast<PyObject*>(Py_TYPE(self)), "__module__");
  if (module.empty() && self && PyModule_Check(self)) module = attr_string(self, "__name__");
  if (opens_regions(module)) {
    g_c_regions->emplace(def, kSkip);
    return kSkip;
  }
  std::string qualname = attr_string(fn, "__qualname__");
  if (qualname.empty()) qualname = def->ml_name ? def->ml_name : "?";
  regions::RegionDef d;
  d.name = (module.empty() ? std::string("builtins") : module) + ":" + qualname;
  d.canonical = d.name;
  d.paradigm = regions::Paradigm::Python;
  d.role = regions::Role::Wrapper;
  const RegionId id = api::define_region_unless_filtered(d);
  g_c_regions->emplace(def, id);
  return id;
}

// Per thread, one entry per open call: its region and whether its Enter was written. A return is
// matched to its call by region: one whose call came before the profile function was set (the
// frames that called start(), a new thread's first frames), or whose call event CPython gave
// for another callable (seen with PyTorch on 3.12), is left out; calls above the matched one
// whose returns never came are closed with it. So the Enter/Leave nesting always holds.
struct Open {
  RegionId region;
  bool written;
};
thread_local std::vector<Open> t_open;
// Frames of the import machinery open on this thread: while one is, nothing is recorded (the
// code of the modules being imported, which floods a profile: importing torch alone makes
// hundreds of thousands of call paths).
thread_local int t_importing = 0;
std::atomic<std::uint64_t> g_unmatched_returns{0}, g_closed_calls{0};

void write_leave(RegionId id) {
  prof::Location* loc = api::acquire();
  if (!loc) return;
  api::leave(loc, id);
  api::release(loc);
}

int on_event(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  if (!g_active) return 0;  // stopped (at exit): other threads may still call in
  RegionId id;
  bool enter;
  switch (what) {
    case PyTrace_CALL: id = code_region(frame); enter = true; break;
    case PyTrace_RETURN: id = code_region(frame); enter = false; break;
    case PyTrace_C_CALL: if (!g_c_calls) return 0; id = c_region(arg); enter = true; break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION: if (!g_c_calls) return 0; id = c_region(arg); enter = false; break;
    default: return 0;
  }
  if (id == kImport) {
    if (enter) ++t_importing;
    else if (t_importing > 0) --t_importing;
    return 0;
  }
  if (id == kSkip || t_importing > 0) return 0;
  if (!enter) {
    std::size_t k = t_open.size();
    while (k > 0 && t_open[k - 1].region != id) --k;
    if (k == 0) {
      if (!t_open.empty()) g_unmatched_returns.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    while (t_open.size() > k) {  // calls whose returns never came
      if (t_open.back().written) write_leave(t_open.back().region);
      t_open.pop_back();
      g_closed_calls.fetch_add(1, std::memory_order_relaxed);
    }
    const bool written = t_open.back().written;
    t_open.pop_back();
    if (written) write_leave(id);
    return 0;
  }
  prof::Location* loc = api::acquire();
  t_open.push_back({id, loc != nullptr});
  if (!loc) return 0;
  api::enter(loc, id);
  api::release(loc);
  return 0;
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
  if (!g_code_regions) {
    g_code_regions = new std::unordered_map<PyObject*, RegionId>;
    g_c_regions = new std::unordered_map<const PyMethodDef*, RegionId>;
  }
  g_c_calls = c_calls != 0;
  g_active = true;
#if PY_VERSION_HEX >= 0x030C0000
  PyEval_SetProfileAllThreads(&on_event, nullptr);
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
#if PY_VERSION_HEX >= 0x030C0000
  PyEval_SetProfileAllThreads(nullptr, nullptr);
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

PyMODINIT_FUNC PyInit__prof(void) { return PyModule_Create(&kModule); }
