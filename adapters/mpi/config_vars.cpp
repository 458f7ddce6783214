// SPDX-License-Identifier: BSD-3-Clause
// The MPI adapter's configuration variables (namespace "MPI", so PROF_MPI_<NAME>). Part of
// prof_config, so prof-info lists them whether or not a program links the MPI adapter.
#include "measurement/config/config.hpp"

#include <algorithm>

namespace prof::config {

namespace {

// Score-P's group names; `all`, `default` and `none` are accepted by every Set.
const Member kMpiGroups[] = {
    {"cg", kMpiCg, "communicator and group management (MPI_Comm_dup, MPI_Comm_split, MPI_Group_*)"},
    {"coll", kMpiColl, "collective communication (MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Iallreduce...)"},
    {"env", kMpiEnv, "environment (MPI_Init, MPI_Finalize, MPI_Wtime...)"},
    {"err", kMpiErr, "error handlers (MPI_Comm_set_errhandler, MPI_Error_string...)"},
    {"ext", kMpiExt, "external interfaces (MPI_Abort, MPI_Get_count, MPI_Query_thread...)"},
    {"io", kMpiIo, "MPI-IO (no functions wrapped yet)"},
    {"misc", kMpiMisc, "miscellaneous (MPI_Alloc_mem, MPI_Get_processor_name, handle conversions...)"},
    {"p2p", kMpiP2p, "point-to-point communication and request completion (MPI_Send, MPI_Irecv, MPI_Wait...)"},
    {"rma", kMpiRma, "one-sided communication (no functions wrapped yet)"},
    {"spawn", kMpiSpawn, "process creation (no functions wrapped yet)"},
    {"topo", kMpiTopo, "topologies (MPI_Cart_create, MPI_Cart_shift...)"},
    {"type", kMpiType, "datatypes (MPI_Type_*)"},
    {"xnonblock", kMpiXnonblock, "accepted for Score-P compatibility; the non-blocking events are always written"},
    {"xreqtest", kMpiXreqtest, "an MpiRequestTest event for every MPI_Test* that does not complete a request"},
    {nullptr, 0, nullptr},
};

/// PROF_MPI_DEBUG_CLOCK_SKEW: "" or rank:ticks items, decimal digits only (no sign, no blank),
/// at most 9 digits of rank and 18 of ticks (so both fit the runtime's parse).
std::string check_clock_skew(std::string_view v) {
  auto digits = [](std::string_view d, std::size_t max_digits) {
    return !d.empty() && d.size() <= max_digits && d.find_first_not_of("0123456789") == std::string_view::npos;
  };
  for (std::size_t at = 0; !v.empty() && at <= v.size();) {
    const std::size_t end = std::min(v.find(',', at), v.size());
    const std::string_view item = v.substr(at, end - at);
    const std::size_t colon = item.find(':');
    const bool ok = colon != std::string_view::npos && digits(item.substr(0, colon), 9) &&
                    digits(item.substr(colon + 1), 18);
    if (!ok) return "has the item " + quoted(item) + ", which is not rank:ticks; give e.g. 1:2000000000, or leave it empty";
    at = end + 1;
  }
  return {};
}

}  // namespace

const Var kMpiVars[] = {
    {"ENABLE_GROUPS", Type::Set, "cg,coll,env,io,p2p,rma,topo", &g_values.mpi_enable_groups,
     "Which groups of MPI functions are recorded.",
     "Each MPI function belongs to one group (Score-P's groups). For the functions of an "
     "enabled group prof records the call as a region (Enter/Leave) and its communication "
     "events (messages, request completions, collectives). The bookkeeping of communicators "
     "and requests runs whatever the setting, so that messages and completions stay correct "
     "when groups are switched. `xreqtest` adds an MpiRequestTest event for each test that "
     "does not complete a request (many of them in polling loops). Example: "
     "`PROF_MPI_ENABLE_GROUPS=default,type` or `PROF_MPI_ENABLE_GROUPS=all,~env`.",
     kMpiGroups},
    {"FINALIZE_TIMEOUT", Type::Number, "60", &g_values.mpi_finalize_timeout,
     "Seconds the ranks wait for each other at the end of the run.",
     "The unified trace and profile need every rank at the end of the run. Rank 0 waits this "
     "long for all ranks to arrive and tells each whether all did (on prof's own "
     "communicator, polled, so a rank that died or hangs cannot block the others; the others "
     "wait twice as long for rank 0's answer). If some never arrive, every rank that did "
     "writes its own profile (profile.rank<r>.cubex) and a marker file "
     "(incomplete.rank<r>) naming the missing ranks, and the trace is left without its "
     "definitions, so that no archive claims to be complete. When the job is being stopped "
     "(a signal, e.g. mpirun ending the job after a rank failed), prof does not wait (0.3 s "
     "more if the signal comes during the wait), so that the data is written before mpirun "
     "kills the process.",
     nullptr, 1, 86400},
    {"DEBUG_CLOCK_SKEW", Type::String, "", &g_values.mpi_debug_clock_skew,
     "For testing: timer ticks added to the clock of some ranks.",
     "A list of rank:ticks pairs, e.g. `1:2000000000` puts rank 1's clock 2e9 ticks ahead "
     "(the rank as the launcher gives it: OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK). "
     "The tests use it to check the clock correction between ranks, which otherwise needs "
     "ranks on different hosts: with a skew set, every rank's offset to rank 0 is measured "
     "and written as OTF2 ClockOffset records. Leave it empty.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_clock_skew,
     "empty, or rank:ticks pairs of decimal numbers, comma-separated"},
    {},
};

}  // namespace prof::config
