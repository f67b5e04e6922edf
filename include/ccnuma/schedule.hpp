#pragma once
/// @file
/// ccnuma::schedule: the OpenMP static partition that placements, containers and algorithms
/// share. A policy of placement.hpp carries one; the containers' loops and the ownership of
/// segments (detail/parallel.hpp) follow it, so it sits below both in a header of its own.
///
///     ccnuma::schedule s{.chunk = 4096, .threads = 8};   // schedule(static, 4096), 8 threads
///     auto p = ccnuma::first_touch{}.chunk(4096).threads(8);
///     assert(p.sched == s);

#include <cstddef>

namespace ccnuma {

/// The OpenMP schedule whose partition a placement follows: `schedule(static)` when chunk is 0,
/// else `schedule(static, chunk)` (chunks handed out round-robin in thread order). threads 0
/// means omp_get_max_threads(), the size of the next parallel region's team.
struct schedule {
    std::size_t chunk = 0;
    unsigned threads = 0;
    friend bool operator==(const schedule&, const schedule&) = default;
};

}  // namespace ccnuma
