#include "kernels.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/detail/openmp_places.hpp>
#include <ccnuma/detail/os.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bench {

std::vector<unsigned> team_sizes(const options& o) {
    if (!o.threads.empty()) return o.threads;
    if (!o.bind.empty()) return {static_cast<unsigned>(ccnuma::current_plan().spec().levels().front().threads)};
    return {static_cast<unsigned>(omp_get_max_threads())};
}

void use_threads(unsigned threads) {
    omp_set_num_threads(static_cast<int>(threads));
    // With a plan, the team is bound before anything is placed or timed, so that the raw loops'
    // first touch and the library's placement see the same threads on the same PUs.
    if (!ccnuma::current_plan().empty()) {
#pragma omp parallel
        ccnuma::bind_this_thread();
    }
}

bool automatic_streams(std::size_t n, unsigned operands) {
    return ccnuma::streams(ccnuma::stores::automatic, (std::size_t{1} + operands) * sizeof(double) * n, false, true);
}

std::pair<std::uint64_t, std::uint64_t> l2_and_llc() {
    std::uint64_t l2 = 0, llc = 0;
    unsigned top = 0;
    for (const auto& c : ccnuma::topology::current().caches()) top = std::max(top, c.level);
    for (const auto& c : ccnuma::topology::current().caches()) {
        if (c.level == 2) l2 = l2 ? std::min(l2, c.bytes) : c.bytes;
        if (c.level == top) llc += c.bytes;
    }
    return {l2, llc};
}

bool fresh_arrays(const options& o, double bytes) {
    switch (o.arrays) {
        case arrays_mode::fresh: return true;
        case arrays_mode::kept: return false;
        case arrays_mode::automatic: {
            const auto llc = static_cast<double>(l2_and_llc().second);
            return llc > 0 && bytes <= 2 * llc;
        }
    }
    return false;
}

std::string arrays_note(const options& o, const std::string& kernel, const std::vector<std::size_t>& sizes,
                        double bytes_per_element) {
    std::string fresh, kept;
    for (std::size_t n : sizes) {
        std::string& list = fresh_arrays(o, bytes_per_element * static_cast<double>(n)) ? fresh : kept;
        list += (list.empty() ? "" : ", ") + std::to_string(n);
    }
    const char* rule = o.arrays == arrays_mode::fresh  ? "--arrays fresh"
                       : o.arrays == arrays_mode::kept ? "--arrays kept"
                                                       : "--arrays auto: anew up to twice the LLC";
    std::string line = kernel + ": each variant's arrays allocated anew before every repetition";
    line += fresh.empty() ? " at no n" : " at n = " + fresh;
    if (!kept.empty()) line += "; allocated once and kept at n = " + kept;
    line += std::string(" (") + rule + "; from 128 KiB up a new allocation is a new mapping, whose frames the kernel draws again";
    if (o.peers) line += "; likwid-bench allocates anew in every call";
    return line + ")";
}

std::vector<std::size_t> sizes_or(const options& o, std::vector<std::size_t> fallback) {
    return o.sizes.empty() ? fallback : o.sizes;
}

void need_memory(const std::string& kernel, double arrays, std::size_t elements) {
    const double available = static_cast<double>(ccnuma::detail::meminfo("MemAvailable").value_or(0));
    const double need = arrays * static_cast<double>(elements) * sizeof(double);
    if (available > 0 && need > available)
    {
        char buf[200];
        std::snprintf(buf, sizeof buf, ": N = %zu needs %.1f GB, more than the %.1f GB available (lower --n)", elements,
                      need / 1e9, available / 1e9);
        throw std::runtime_error(kernel + buf);
    }
}

void wrong(const std::string& what) { throw std::runtime_error("wrong result: " + what); }

void check_close(const std::string& what, const double* got, std::size_t n, double (*expected)(std::size_t), double tol) {
    for (std::size_t i = 0; i < n; ++i) {
        const double e = expected(i);
        if (!(std::fabs(got[i] - e) <= tol * std::fabs(e))) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "[%zu] = %.17g, expected %.17g", i, got[i], e);
            wrong(what + buf);
        }
    }
}

namespace affinity {

namespace {
// The CPUs the process was started with: where the OpenMP runtime binds (OMP_PROC_BIND,
// OMP_PLACES), the union of its places, since libgomp pins the initial thread to the first place
// before main (a likwid-bench peer spawned with that mask ran all 16 threads of
// "-W N:...:16" on one core of a 16-core machine); without binding, the thread's mask, taken
// before ccnuma-bench binds anything. The places are the library's (detail/openmp_places.hpp),
// the ones the topology counts.
std::vector<unsigned> cpus_at_start() {
    auto places = ccnuma::detail::openmp_place_cpus();
    return places.empty() ? ccnuma::detail::this_thread_cpus() : places;
}
const std::vector<unsigned> start_mask = cpus_at_start();
}  // namespace

const std::vector<unsigned>& start_cpus() noexcept { return start_mask; }

// Best effort, as the runtime's own binding: a thread that cannot be pinned floats.
void pin(const ccnuma::binding_plan& plan) {
    std::vector<unsigned> path;
    for (int l = 1; l <= omp_get_level(); ++l) path.push_back(static_cast<unsigned>(omp_get_ancestor_thread_num(l)));
    try {
        (void)ccnuma::pin_this_thread(plan, path);  // beyond the plan: floats, as with the runtime's binding
    } catch (const ccnuma::error&) {
        // refused: floats too
    }
}

void release() { (void)ccnuma::detail::set_this_thread_cpus(start_mask); }

released_scope::released_scope() : own_(ccnuma::detail::this_thread_cpus()) { release(); }
released_scope::~released_scope() { (void)ccnuma::detail::set_this_thread_cpus(own_); }

}  // namespace affinity

}  // namespace bench
