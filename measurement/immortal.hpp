// SPDX-License-Identifier: BSD-3-Clause
// Storage for the measurement system's global objects that neither static-initialisation order
// nor exit may touch.
//
// Why: the first event can come from anywhere at any time, e.g. from another shared library's
// constructor that calls an instrumented function of the executable (Open MPI's libmpi_cxx does),
// before the dynamic linker ran libprof's own static initialisers. A global std::string, vector or
// map with a dynamic initialiser would then be filled by init and wiped (or built over) by its
// initialiser afterwards; and its destructor, run at exit, would free what hooks called by later
// destructors still read. An Immortal<T> has a constexpr constructor (so it is constant-initialised:
// no code runs for it at load time), builds its object on first use and never destroys it.
// tests/e2e/ctor_order checks the result; `nm libprof.so | grep _GLOBAL__sub_I` lists what is left.
#pragma once

#include <new>

#include "measurement/compiler.hpp"

namespace prof {

template <class T>
class Immortal {
 public:
  constexpr Immortal() noexcept : none_() {}
  ~Immortal() {}  // never destroys the object: hooks may run during exit
  Immortal(const Immortal&) = delete;
  Immortal& operator=(const Immortal&) = delete;

  /// The object, built by the first call (its callers serialise the first use: init runs once,
  /// maps are used under their owner's mutex). Not for signal handlers before init.
  T& operator*() {
    if (PROF_UNLIKELY(!made_)) make();
    return value_;
  }
  T* operator->() { return &**this; }

  /// The object's address without building it: a constant expression, for tables of pointers into
  /// the object that must themselves be constant-initialised. Build it (operator*) before use.
  constexpr T* address() noexcept { return &value_; }

 private:
  PROF_COLD void make() {
    ::new (static_cast<void*>(&value_)) T();
    made_ = true;
  }
  union {
    char none_;
    T value_;
  };
  bool made_ = false;
};

}  // namespace prof
