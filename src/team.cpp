// The ownership team (see team.hpp) and the team-size check of detail/parallel.hpp.

#include "team.hpp"

#include "os/os.hpp"

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <mutex>
#include <string>

namespace ccnuma::detail {

int max_team_threads() noexcept {
    const int per_cpu = 64 * std::max(1, omp_get_num_procs());
    int limit = std::min(omp_get_thread_limit(), std::max(256, per_cpu));
    // A team beyond `ulimit -u` cannot start: libomp aborts the process. The user's other
    // processes count too, which this cannot see, so this bound is necessary, not sufficient.
    if (const auto nproc = thread_rlimit())
        limit = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(limit), *nproc > 1 ? *nproc - 1 : 1));
    return std::max(1, limit);
}

int team_size(const schedule& s, operation_name operation) {
    const unsigned requested = requested_team_size(s.threads);
    if (s.threads == 0) return static_cast<int>(requested);
    const int limit = max_team_threads();
    if (requested > static_cast<unsigned>(limit))
        throw_error(errc::invalid_argument, operation,
                    "a team of " + std::to_string(s.threads) + " threads is more than this process can start",
                    "valid: threads(1) to threads(" + std::to_string(limit) +
                        "), 64 per available CPU, at most OMP_THREAD_LIMIT and below ulimit -u, or 0 for the OpenMP "
                        "default of " + std::to_string(requested_team_size(0)));
    return static_cast<int>(requested);
}

unsigned team_layout::owner(std::size_t element) const noexcept {
    return elements == 0 ? 0 : static_owner(elements, chunk, threads, std::min(element, elements - 1));
}

std::size_t team_layout::smallest_share() const noexcept {
    std::size_t smallest = std::numeric_limits<std::size_t>::max();
    for (unsigned t = 0; t < threads; ++t) smallest = std::min(smallest, static_count(elements, chunk, t, threads));
    return smallest;
}

team_layout run_team(std::size_t elements, const schedule& s,
                     const std::function<void(unsigned, const team_layout&)>& in_thread, std::string_view operation) {
    const auto requested = static_cast<unsigned>(team_size(s, operation));
    team_layout team;
    team.elements = elements;
    team.chunk = s.chunk;
    team.node.assign(requested, -1);
    team.cpu.assign(requested, -1);
    std::exception_ptr error;
    std::once_flag error_once;
    open_team(static_cast<int>(requested), [&] {
        const auto t = static_cast<unsigned>(omp_get_thread_num());
        team.node[t] = current_node();
        team.cpu[t] = current_cpu();
        // Its barrier also publishes every thread's node before in_thread reads the layout.
#pragma omp single
        team.threads = static_cast<unsigned>(omp_get_num_threads());
        if (in_thread) {
            try {
                in_thread(t, team);
            } catch (...) {
                std::call_once(error_once, [&] { error = std::current_exception(); });
            }
        }
    });
    if (error) std::rethrow_exception(error);
    return team;
}

std::vector<unsigned> thread_local_nodes(const team_layout& team, unsigned t) {
    const int cpu = t < team.cpu.size() ? team.cpu[t] : -1;
    const int node = t < team.node.size() ? team.node[t] : -1;
    if (cpu >= 0) {
        try {
            const auto& topo = topology::current();
            // Another machine's snapshot (CCNUMA_TOPOLOGY) says nothing about this one's nodes.
            if (topo.is_this_system()) {
                const auto& pu = topo.pu(static_cast<unsigned>(cpu));
                if (!pu.local_nodes.empty()) return pu.local_nodes;
            }
        } catch (const error&) {
            // A CPU outside the snapshot (the affinity mask changed since it was taken): its node.
        }
    }
    if (node >= 0) return {static_cast<unsigned>(node)};
    return {};
}

std::size_t unit_owner_element(std::uintptr_t unit_start, std::size_t unit, std::uintptr_t begin, std::uintptr_t end,
                               std::size_t element_size, std::size_t elements) {
    // The element in the middle of the unit's part of the range: a unit goes to the thread that
    // owns most of it, so a chunk boundary a few bytes into a huge page (an array cookie, an
    // odd element size) does not hand the whole huge page to the wrong thread.
    const std::uintptr_t from = std::max(unit_start, begin), to = std::min<std::uintptr_t>(unit_start + unit, end);
    const std::size_t element = (from + (to - from) / 2 - begin) / element_size;
    return std::min(element, elements == 0 ? 0 : elements - 1);
}

std::vector<int> unit_nodes(const team_layout& team, const void* ptr, std::size_t bytes, std::size_t element_size,
                            std::size_t unit) {
    std::vector<int> nodes;
    if (bytes == 0) return nodes;
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    const auto end = begin + bytes;
    for (std::uintptr_t u = begin / unit * unit; u < end; u += unit)
        nodes.push_back(team.node[team.owner(unit_owner_element(u, unit, begin, end, element_size, team.elements))]);
    return nodes;
}

}  // namespace ccnuma::detail
