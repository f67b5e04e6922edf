// The OpenMP runtime's places (include/private/ccnuma/detail/openmp_places.hpp).

#include <ccnuma/detail/openmp_places.hpp>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <utility>

namespace ccnuma::detail {

namespace {
// A count, not a flag: start-up scopes may nest (a tool that calls another's initialize).
std::atomic<int> starting{0};
}  // namespace

openmp_start_up::openmp_start_up() noexcept { starting.fetch_add(1, std::memory_order_relaxed); }
openmp_start_up::~openmp_start_up() { starting.fetch_sub(1, std::memory_order_relaxed); }

std::vector<std::vector<unsigned>> openmp_places() {
    std::vector<std::vector<unsigned>> out;
    // omp_get_proc_bind() is safe inside the start-up (it reads an ICV); omp_get_num_places()
    // is not. Without binding the places say nothing about where threads run (libomp 14 reports
    // one place of every PU even then), and the masks are the process's own.
    if (starting.load(std::memory_order_relaxed) > 0 || omp_get_proc_bind() == omp_proc_bind_false) return out;
    const int places = omp_get_num_places();
    for (int p = 0; p < places; ++p) {
        const int n = omp_get_place_num_procs(p);
        if (n <= 0) continue;
        std::vector<int> ids(static_cast<std::size_t>(n));
        omp_get_place_proc_ids(p, ids.data());
        std::vector<unsigned> place;
        for (const int id : ids)
            if (id >= 0) place.push_back(static_cast<unsigned>(id));
        std::sort(place.begin(), place.end());
        if (!place.empty()) out.push_back(std::move(place));
    }
    return out;
}

std::vector<unsigned> openmp_place_cpus() {
    std::vector<unsigned> cpus;
    for (const auto& place : openmp_places()) cpus.insert(cpus.end(), place.begin(), place.end());
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

}  // namespace ccnuma::detail
