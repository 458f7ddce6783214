// SPDX-License-Identifier: BSD-3-Clause
// One profile for a job of many processes: each process's call-path profile is merged into rank
// 0's along the unification tree (measurement/unify.hpp): regions by definition, call paths by
// (parent path, region), locations appended as the columns of their process's location group.
#pragma once

#include <string>
#include <vector>

#include "measurement/profiling/cube4_writer.hpp"

namespace prof {
class Mpp;
}

namespace prof::profile_merge {

std::vector<char> encode(const cube4::Profile& p);
bool decode(const std::vector<char>& bytes, cube4::Profile* p);

/// Appends `other`'s processes and locations to `into`, merging regions and call paths.
void merge(cube4::Profile& into, const cube4::Profile& other);

/// Reorders the location groups so that each node's come together (nodes in order of first
/// appearance, groups in their order within a node), the locations and every metric's columns
/// with them: CUBE readers show locations under their node, and the location Ids (= columns)
/// then follow the document order, as CUBE4-FORMAT.md asks (ranks placed round-robin on hosts
/// would interleave them otherwise).
void order_by_node(cube4::Profile& p);

/// Collective: on return rank 0's `p` holds every process's profile, ordered by node (others'
/// are unchanged).
/// mpp nullptr: nothing to do. False with a one-line error when an exchange failed.
bool gather(Mpp* mpp, cube4::Profile* p, std::string* error);

}  // namespace prof::profile_merge
