// SPDX-License-Identifier: BSD-3-Clause
// libprof-nop: the compiler hooks with empty bodies, the baseline of bench/.
extern "C" {
__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(void*, void*) {}
__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(void*, void*) {}
__attribute__((visibility("default"), no_instrument_function)) void __prof_plugin_enter(void*) {}
__attribute__((visibility("default"), no_instrument_function)) void __prof_plugin_exit(void*) {}
__attribute__((visibility("default"))) extern const char prof_wrap_link_guard__link_this_object_with_prof_wrap = 1;
}
