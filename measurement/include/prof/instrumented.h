/* SPDX-License-Identifier: BSD-3-Clause */
/* Force-included by prof-wrap into every compile step: plants an undefined reference to a
 * symbol only libprof defines, so an instrumented object linked without prof-wrap fails to
 * link (glibc's empty __cyg_profile_func_* hooks would otherwise measure nothing, silently). */
#ifndef PROF_INSTRUMENTED_H
#define PROF_INSTRUMENTED_H
#ifndef __ASSEMBLER__

#ifdef __cplusplus
extern "C" {
#endif
extern const char prof_wrap_link_guard__link_this_object_with_prof_wrap;
#ifdef __cplusplus
}
#endif

__attribute__((used)) static const char* const prof_link_guard_ref_ =
    &prof_wrap_link_guard__link_this_object_with_prof_wrap;

#endif /* __ASSEMBLER__ */
#endif /* PROF_INSTRUMENTED_H */
