// The ownership team (see team.hpp) and the team-size check of detail/parallel.hpp.

#include "team.hpp"

#include "os/os.hpp"

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/team.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>
#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
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
    if (!s.partition.empty()) {
        const unsigned parts = s.partition.parts();
        if (s.chunk != 0)
            throw_error(errc::invalid_argument, operation,
                        "a partition of " + std::to_string(parts) + " parts with chunk " + std::to_string(s.chunk),
                        "a partition gives each thread one range: chunk(0) with it");
        if (s.threads != 0 && s.threads != parts)
            throw_error(errc::invalid_argument, operation,
                        "a partition of " + std::to_string(parts) + " parts for a team of " + std::to_string(s.threads) +
                            " threads",
                        "threads(" + std::to_string(parts) + ") or threads(0): one thread per part");
        const int limit = max_team_threads();
        if (parts > static_cast<unsigned>(limit))
            throw_error(errc::invalid_argument, operation,
                        "a partition of " + std::to_string(parts) + " parts is more threads than this process can start",
                        "at most " + std::to_string(limit) +
                            " parts: 64 per available CPU, at most OMP_THREAD_LIMIT and below ulimit -u");
        return static_cast<int>(parts);
    }
    const unsigned requested = requested_team_size(s.threads);
    if (s.threads == 0) return static_cast<int>(requested);
    // No larger than the team a plain `omp parallel` opens, which nothing checks, and within
    // OMP_THREAD_LIMIT: it starts if the runtime's default team does. The full rule reads
    // `ulimit -u` (getuid and getrlimit): two system calls on every par:: call over a seg_array,
    // whose team size is explicit, 0.3 us of a 3.5 us sum of 512 KB on 2 threads (issue 35).
    if (requested <= requested_team_size(0) && requested <= static_cast<unsigned>(std::max(1, omp_get_thread_limit())))
        return static_cast<int>(requested);
    const int limit = max_team_threads();
    if (requested > static_cast<unsigned>(limit))
        throw_error(errc::invalid_argument, operation,
                    "a team of " + std::to_string(s.threads) + " threads is more than this process can start",
                    "valid: threads(1) to threads(" + std::to_string(limit) +
                        "), 64 per available CPU, at most OMP_THREAD_LIMIT and below ulimit -u, or 0 for the OpenMP "
                        "default of " + std::to_string(requested_team_size(0)));
    return static_cast<int>(requested);
}

void partition_mismatch(const schedule& s, std::size_t n, operation_name operation) {
    throw_error(errc::invalid_argument, operation,
                to_string(s.partition) + " covers " + std::to_string(s.partition.elements()) + " elements, the range " +
                    std::to_string(n),
                "a partition of exactly the " + std::to_string(n) + " elements it places or loops over");
}

unsigned team_layout::owner(std::size_t element) const noexcept {
    return elements == 0 ? 0 : static_owner(elements, sched, threads, std::min(element, elements - 1));
}

std::size_t team_layout::share(unsigned t) const noexcept { return static_count(elements, sched, t, threads); }

std::size_t team_layout::smallest_share() const noexcept {
    std::size_t smallest = std::numeric_limits<std::size_t>::max();
    for (unsigned t = 0; t < threads; ++t) smallest = std::min(smallest, share(t));
    return smallest;
}

unsigned team_layout::unit_owner(const unit_range& r, std::size_t i) const noexcept {
    // The element in the middle of the unit's part of the range: a unit goes to the thread that
    // owns most of it, so a chunk boundary a few bytes into a huge page (an array cookie, an
    // odd element size) does not hand the whole huge page to the wrong thread.
    const std::uintptr_t u = r.start(i);
    const std::uintptr_t from = std::max(u, r.begin), to = std::min<std::uintptr_t>(u + r.unit, r.end);
    const std::size_t element = (from + (to - from) / 2 - r.begin) / r.element_size;
    return owner(element);
}

std::vector<std::size_t> team_layout::owned_units(const unit_range& r, unsigned t) const {
    std::vector<std::size_t> units;
    for (std::size_t i = 0; i < r.count(); ++i)
        if (unit_owner(r, i) == t) units.push_back(i);
    return units;
}

team_layout run_team(std::size_t elements, const schedule& s,
                     const std::function<void(unsigned, const team_layout&)>& in_thread, std::string_view operation) {
    const auto requested = static_cast<unsigned>(detail::team_size(s, operation));
    team_layout team;
    check_covers(s, elements, operation);
    team.elements = elements;
    team.sched = s;
    team.node.assign(requested, -1);
    team.cpu.assign(requested, -1);
    first_exception carried;
    open_team(static_cast<int>(requested), [&] {
        const auto t = static_cast<unsigned>(omp_get_thread_num());
        team.node[t] = current_node();
        team.cpu[t] = current_cpu();
        // Its barrier also publishes every thread's node before in_thread reads the layout.
#pragma omp single
        team.threads = static_cast<unsigned>(omp_get_num_threads());
        if (in_thread) carried.run([&] { in_thread(t, team); });
    });
    carried.rethrow();
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

unit_range::unit_range(const void* ptr, std::size_t bytes, std::size_t element_bytes, std::size_t unit_bytes) noexcept
    : begin(reinterpret_cast<std::uintptr_t>(ptr)),
      end(begin + bytes),
      element_size(std::max<std::size_t>(element_bytes, 1)),
      unit(unit_bytes),
      first(begin / unit * unit) {}

std::size_t unit_range::count() const noexcept { return end == begin ? 0 : (end - 1) / unit - begin / unit + 1; }

std::vector<int> unit_nodes(const team_layout& team, const unit_range& r) {
    std::vector<int> nodes;
    nodes.reserve(r.count());
    for (std::size_t i = 0; i < r.count(); ++i) nodes.push_back(team.node[team.unit_owner(r, i)]);
    return nodes;
}

// ccnuma::team (include/ccnuma/team.hpp): its messages and its spinning.

void team_state::left(operation_name what) {
    throw_error(errc::invalid_argument, what, "a thread of the team returned from its function while this thread waits in this call",
                "every thread of the team makes the same team calls, in the same order");
}

void team_call_mismatch(operation_name what, unsigned rank, unsigned other, std::size_t n, std::size_t other_n, bool other_called) {
    const std::string me = "thread " + std::to_string(rank);
    const std::string them = "thread " + std::to_string(other);
    throw_error(errc::invalid_argument, what,
                other_called ? me + "'s operand has " + std::to_string(n) + " elements and " + them + "'s " + std::to_string(other_n)
                             : them + " made another call than " + me + "'s (another operation, another value type, a barrier, or none)",
                "every thread of the team makes the same team calls, in the same order, with operands of the same size");
}

unsigned team_spins(unsigned size) noexcept {
    // OMP_WAIT_POLICY, as both runtimes read it: `passive` waits sleep at once (a hybrid MPI
    // rank that shares its cores), `active` ones poll until the barrier completes. Read once,
    // as the runtimes read it at start-up.
    static const int policy = [] {
        const char* v = std::getenv("OMP_WAIT_POLICY");
        if (v == nullptr) return 0;
        if (strcasecmp(v, "passive") == 0) return -1;
        if (strcasecmp(v, "active") == 0) return 1;
        return 0;
    }();
    // Never in a team larger than the CPUs, where a polling thread holds a CPU the awaited one
    // needs. Otherwise 20,000 polls with a pause each: 0.36 ms on the Zen 5 VM (18 ns a pause),
    // about 1 ms where a pause takes 140 cycles (Intel since Skylake). Far longer than threads
    // that reduce equal parts wait for each other, shorter than libgomp's default spin (300,000
    // polls).
    if (policy < 0 || size > static_cast<unsigned>(std::max(1, omp_get_num_procs()))) return 0U;
    return policy > 0 ? std::numeric_limits<unsigned>::max() : 20000U;
}

}  // namespace ccnuma::detail

namespace ccnuma {

// The public faces of the two rules above, for tools and users that start teams themselves.
unsigned max_team_size() noexcept { return static_cast<unsigned>(detail::max_team_threads()); }

unsigned team_size(const schedule& s, std::string_view operation) {
    return static_cast<unsigned>(detail::team_size(s, operation));
}

}  // namespace ccnuma
