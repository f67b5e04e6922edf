#pragma once
/// @file
/// ccnuma::schedule: the OpenMP static partition that placements, containers and algorithms
/// share. A policy of placement.hpp carries one; the containers' loops and the ownership of
/// segments (detail/parallel.hpp) follow it, so it sits below both in a header of its own.
///
///     ccnuma::schedule s{.chunk = 4096, .threads = 8};   // schedule(static, 4096), 8 threads
///     auto p = ccnuma::first_touch{}.chunk(4096).threads(8);
///     assert(p.sched == s);
///     // Thread t owns rows [b[t], b[t+1]) of a partition (partition.hpp), its own loop's split:
///     auto q = ccnuma::first_touch{}.partition(ccnuma::partition::balanced(row_ptr, 8));

#include <ccnuma/partition.hpp>

#include <cstddef>
#include <string_view>

namespace ccnuma {

/// The OpenMP schedule whose partition a placement follows: `schedule(static)` when chunk is 0,
/// else `schedule(static, chunk)` (chunks handed out round-robin in thread order). threads 0
/// means omp_get_max_threads(), the size of the next parallel region's team.
///
/// With a partition (not empty()), thread t owns the partition's range t instead, and the team
/// has partition.parts() threads: chunk must be 0 and threads 0 or parts(), and the partition
/// must cover exactly the elements it is used for (the library checks both where it uses one).
struct schedule {
    std::size_t chunk = 0;
    unsigned threads = 0;
    ccnuma::partition partition{};
    friend bool operator==(const schedule&, const schedule&) = default;
};

/// The most threads one team of ccnuma's may have in this process: 64 per available CPU (at
/// least 256), at most OMP_THREAD_LIMIT and below `ulimit -u`. libgomp keeps per-thread arrays on
/// the stack and exits the process when a thread cannot be created, so larger teams are refused
/// before they start. A tool that starts teams of its own (a binding plan's, a benchmark's)
/// checks them against the same rule.
unsigned max_team_size() noexcept;

/// The size of the team that runs `s`: s.threads, omp_get_max_threads() for 0, or the
/// partition's parts. Throws ccnuma::error (errc::invalid_argument) naming `operation` when
/// s.threads or the parts exceed max_team_size(), and for a partition with a chunk or with
/// threads other than its parts. Threads 0, the runtime's own default, is not checked, nor is
/// a request no larger than that default within OMP_THREAD_LIMIT: it starts when the default
/// team does.
unsigned team_size(const schedule& s, std::string_view operation = "a parallel loop");

}  // namespace ccnuma
