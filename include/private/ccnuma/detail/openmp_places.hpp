#pragma once
// The PUs of the OpenMP runtime's places: where a binding runtime (OMP_PROC_BIND other than
// false) will pin this process's threads, whatever their masks hold now. libgomp pins the
// initial thread to the first place in its constructor, before main, so until a team has
// started, the process's mask is one place: the topology (src/topology/restrict.cpp) and
// ccnuma-bench's peers take the places as the PUs the process has.

#include <vector>

namespace ccnuma::detail {

/// Each place's PUs (OS indexes, sorted), in the runtime's order; empty where the runtime does
/// not bind, has no places, or is starting (below).
std::vector<std::vector<unsigned>> openmp_places();

/// The union of the places' PUs, sorted; empty where openmp_places() is.
std::vector<unsigned> openmp_place_cpus();

/// Held, for its scope, by code that runs inside the OpenMP runtime's own start-up (an OMPT
/// tool's initialize): there omp_get_num_places() waits for the start-up's own lock, so libomp
/// 14 hangs (measured), and the runtime has pinned no thread yet, so the places are not needed.
class openmp_start_up {
public:
    openmp_start_up() noexcept;
    ~openmp_start_up();
    openmp_start_up(const openmp_start_up&) = delete;
    openmp_start_up& operator=(const openmp_start_up&) = delete;
};

}  // namespace ccnuma::detail
