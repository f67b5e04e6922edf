// Placement: allocate, place and the policies' actions on a range. What a policy means is
// policy.cpp's (meaning_of), the team that owns each unit team.cpp's, the system calls the OS
// layer's (os/os.hpp).

#include "placement_internal.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>

namespace ccnuma {

namespace {

// The nodes a policy may put pages on, checked against the allowed set.
std::vector<unsigned> target_nodes(const policy& p, std::size_t bytes) {
    const auto m = detail::meaning_of(p);
    return detail::policy_nodes(m, "placement " + m.name + " of " + detail::human_bytes(bytes));
}

// A first touch that is a write fault, whatever the page holds. A plain read and write of the
// same byte is two faults where the kernel maps the zero page on reads: the read maps the huge
// zero page, and the write then splits it into base pages, so a huge-page policy got no huge
// page on such kernels (Debian's 6.1 and 6.12 among them). MADV_POPULATE_WRITE (Linux 5.14)
// faults the range in writable, on the calling thread's node, and keeps the content; older
// kernels get a compare-and-swap of 0 with 0, a locked read-modify-write that faults as a write
// on x86 and on ARMv8.1 atomics and never changes a byte.
void touch_range(std::uintptr_t from, std::uintptr_t to) {
    const std::size_t page = detail::page_bytes();
    const std::uintptr_t first_page = from / page * page;
    if (detail::populate_write(reinterpret_cast<void*>(first_page), to - first_page) == 0) return;
    for (std::uintptr_t b = from; b < to; b = (b / page + 1) * page) {
        char expected = 0;
        std::atomic_ref<char>(*reinterpret_cast<char*>(b)).compare_exchange_strong(expected, 0);
    }
}

void touch_units(const detail::team_layout& team, unsigned t, char* base, std::size_t bytes, std::size_t element_size,
                 std::size_t unit) {
    const auto begin = reinterpret_cast<std::uintptr_t>(base);
    const auto end = begin + bytes;
    // Consecutive units of this thread are touched as one range: one system call each.
    std::uintptr_t run_from = 0, run_to = 0;
    for (std::uintptr_t u = begin / unit * unit; u < end; u += unit) {
        if (team.owner(detail::unit_owner_element(u, unit, begin, end, element_size, team.elements)) != t) continue;
        const std::uintptr_t from = std::max(u, begin), to = std::min<std::uintptr_t>(u + unit, end);
        if (run_to != from) {
            if (run_to != run_from) touch_range(run_from, run_to);
            run_from = from;
        }
        run_to = to;
    }
    if (run_to != run_from) touch_range(run_from, run_to);
}

void warn_small_chunks(const detail::team_layout& team, std::size_t bytes, std::size_t element_size, std::size_t unit,
                       const policy& p) {
    if (team.threads < 2 || team.elements == 0) return;
    const std::size_t smallest = team.smallest_share();
    if (smallest == 0) {
        // Threads that own no element have no chunk to be small: chunk(SIZE_MAX), or fewer
        // elements than threads. Say how many, and what the chunk is, in elements (a chunk's
        // bytes may be beyond the address space).
        unsigned idle = 0;
        for (unsigned t = 0; t < team.threads; ++t)
            idle += detail::static_count(team.elements, team.chunk, t, team.threads) == 0 ? 1 : 0;
        detail::diagnose(to_string(p) + " of " + detail::human_bytes(bytes) + " over " +
                         std::to_string(team.threads) + " threads: " + std::to_string(idle) + " of them own no element (" +
                         std::to_string(team.elements) + " elements" +
                         (team.chunk != 0 ? " in chunks of " + std::to_string(team.chunk) : std::string()) +
                         "), so every page lands on the nodes of the others; use a smaller chunk or fewer threads");
        return;
    }
    const std::size_t share = smallest * element_size;
    if (share >= unit) return;
    detail::diagnose(to_string(p) + " of " + detail::human_bytes(bytes) + " over " + std::to_string(team.threads) +
                     " threads: a thread's chunk (" + detail::human_bytes(share) + ") is smaller than a " +
                     (unit > detail::page_bytes() ? "huge page" : "page") + " (" + detail::human_bytes(unit) +
                     "), so threads share pages and each page lands on one of their nodes; use larger blocks, "
                     "fewer threads, or interleave");
}

// The calling thread's memory policy, put back when a planned write ends, so the OpenMP pool
// threads leave an allocation with the policy they came with.
class thread_policy_guard {
public:
    explicit thread_policy_guard(const std::string& what) {
        if (const int err = detail::get_thread_policy(mode_, nodes_))
            detail::throw_system_error(err, what + ": get_mempolicy failed");
    }
    thread_policy_guard(const thread_policy_guard&) = delete;
    thread_policy_guard& operator=(const thread_policy_guard&) = delete;
    ~thread_policy_guard() { restore(); }
    void set(int mode, unsigned node, const std::string& what) {
        if (changed_ && node == node_) return;
        if (const int err = detail::set_thread_policy(mode, {node}))
            detail::throw_system_error(err, what + ": set_mempolicy to node " + std::to_string(node) + " failed");
        changed_ = true;
        node_ = node;
    }
    void restore() noexcept {
        if (changed_) (void)detail::set_thread_policy(mode_, nodes_);
        changed_ = false;
    }

private:
    int mode_ = 0;
    std::vector<unsigned> nodes_;
    bool changed_ = false;
    unsigned node_ = 0;
};

// Thread t writes its units, each run of one planned node under the thread policy `mode` on that
// node, so the page faults put them there. A thread policy and not one mbind per run: runs of
// different nodes alternate (2:1 weights make a run every two pages), and a mapping split into
// that many VMAs fails at vm.max_map_count (65530) after about 256 MiB.
void write_planned(const detail::team_layout& team, unsigned t, const std::vector<int>& plan, int mode, char* base,
                   std::size_t bytes, std::size_t element_size, std::size_t unit, const std::string& what) {
    const auto begin = reinterpret_cast<std::uintptr_t>(base);
    const auto end = begin + bytes;
    const std::uintptr_t first = begin / unit * unit;
    thread_policy_guard guard(what);
    std::uintptr_t run_from = 0, run_to = 0;
    int run_node = -1;
    auto flush = [&] {
        if (run_to == run_from) return;
        if (run_node >= 0) guard.set(mode, static_cast<unsigned>(run_node), what);
        else guard.restore();
        touch_range(run_from, run_to);
    };
    for (std::uintptr_t u = first; u < end; u += unit) {
        if (team.owner(detail::unit_owner_element(u, unit, begin, end, element_size, team.elements)) != t) continue;
        const std::uintptr_t from = std::max(u, begin), to = std::min<std::uintptr_t>(u + unit, end);
        const int node = plan[(u - first) / unit];
        if (run_to != from || node != run_node) {
            flush();
            run_from = from;
            run_node = node;
        }
        run_to = to;
    }
    flush();
}

// The units of [begin, end) that thread t owns, in address order, as indices from the first unit.
std::vector<std::size_t> owned_units(const detail::team_layout& team, unsigned t, std::uintptr_t begin,
                                     std::uintptr_t end, std::size_t element_size, std::size_t unit) {
    std::vector<std::size_t> units;
    const std::uintptr_t first = begin / unit * unit;
    for (std::uintptr_t u = first; u < end; u += unit)
        if (team.owner(detail::unit_owner_element(u, unit, begin, end, element_size, team.elements)) == t)
            units.push_back((u - first) / unit);
    return units;
}

// Free memory that fastest leaves on a node. MemFree counts what allocations cannot have: the
// zones' low watermarks, below which a page fault already falls back to the next node, and the
// lowmem reserve of the DMA zones; the page tables of the new pages come out of it too. With a
// 16 MiB margin, 2.2% of a 485 MiB allocation still fell back to node 1 in the 512 MiB nodes of
// tier_placement_vm_test (node 0's DMA zone and watermarks). 1/16 of the node, from 64 MiB to
// 1 GiB.
std::uint64_t fastest_margin(std::uint64_t total) {
    return std::clamp<std::uint64_t>(total / 16, std::uint64_t{64} << 20, std::uint64_t{1} << 30);
}

// The other allowed nodes, nearest to `from` first by the distance matrix, then by OS index.
std::vector<unsigned> by_distance(int from, const std::vector<unsigned>& allowed) {
    std::vector<unsigned> order = allowed;
    const auto& topo = topology::current();
    const auto& nodes = topo.numa_nodes();
    const auto& dist = topo.distances();
    auto row = [&](unsigned n) -> std::ptrdiff_t {
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (nodes[i].os_index == n) return static_cast<std::ptrdiff_t>(i);
        return -1;
    };
    const std::ptrdiff_t r = from < 0 || !topo.is_this_system() ? -1 : row(static_cast<unsigned>(from));
    auto distance = [&](unsigned n) -> unsigned {
        const std::ptrdiff_t c = row(n);
        if (r < 0 || c < 0 || static_cast<std::size_t>(r) >= dist.size()) return std::numeric_limits<unsigned>::max();
        return dist[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
    };
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) { return distance(a) < distance(b); });
    return order;
}

}  // namespace

namespace detail {

std::vector<unsigned> bandwidth_weights(const std::vector<unsigned>& targets, const std::vector<int>& initiators,
                                        const std::string& what) {
    std::vector<unsigned> from;
    for (int i : initiators)
        if (i >= 0 && std::find(from.begin(), from.end(), static_cast<unsigned>(i)) == from.end())
            from.push_back(static_cast<unsigned>(i));
    std::sort(from.begin(), from.end());
    // One node takes every unit whatever its bandwidth: no ratio to ask the firmware for.
    if (targets.size() == 1) return {1};
    const auto& topo = topology::current();
    std::vector<double> mean;
    for (unsigned target : targets) {
        double sum = 0;
        unsigned known = 0;
        for (unsigned i : from)
            if (const auto* a = topo.access(i, target); a != nullptr && a->read_bandwidth != 0) {
                sum += static_cast<double>(a->read_bandwidth);
                ++known;
            }
        if (known == 0)
            throw_error(errc::not_supported,
                        what + ": node " + std::to_string(target) + " has no known read bandwidth from the team's nodes {" +
                            format_list(from) +
                            "}: the machine's firmware gives no HMAT bandwidths (ccnuma-vm --memory-node "
                            "SIZE,bandwidth=RATIO makes a machine that does); give the weights instead");
        mean.push_back(sum / known);
    }
    const double top = *std::max_element(mean.begin(), mean.end());
    std::vector<unsigned> w;
    unsigned g = 0;
    for (double m : mean) {
        w.push_back(std::max(1u, static_cast<unsigned>(std::lround(100.0 * m / top))));
        g = std::gcd(g, w.back());
    }
    for (auto& x : w) x /= g;
    return w;
}

std::vector<int> plan_units(const policy_meaning& m, const std::vector<unsigned>& nodes, const team_layout& team,
                            const void* ptr, std::size_t bytes, std::size_t element_size, std::size_t unit,
                            const std::string& what) {
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    const auto end = begin + bytes;
    const std::size_t units = bytes == 0 ? 0 : (end - 1) / unit - begin / unit + 1;
    std::vector<int> plan(units, -1);
    switch (m.how) {
        case policy_meaning::plan::none: break;
        case policy_meaning::plan::weights: {
            const auto weights = m.weights_by_bandwidth ? bandwidth_weights(nodes, team.node, what) : m.weights;
            // The round of the pattern: slot s belongs to the node whose weights' running sum
            // first exceeds s.
            std::vector<int> round;
            for (std::size_t k = 0; k < nodes.size(); ++k) round.insert(round.end(), weights[k], static_cast<int>(nodes[k]));
            for (std::size_t i = 0; i < units; ++i) plan[i] = round[i % round.size()];
            break;
        }
        case policy_meaning::plan::tiers: {
            for (unsigned t = 0; t < team.threads; ++t) {
                const auto local = thread_local_nodes(team, t);
                if (local.size() < 2) continue;  // one local node: plain first touch
                const auto& topo = topology::current();
                const int from = team.node[t];
                std::vector<double> cumulative;
                double total = 0;
                for (unsigned n : local) {
                    const auto* a = from < 0 ? nullptr : topo.access(static_cast<unsigned>(from), n);
                    if (a == nullptr || a->read_bandwidth == 0)
                        throw_error(errc::not_supported,
                                    what + ": thread " + std::to_string(t) + " runs on CPU " + std::to_string(team.cpu[t]) +
                                        " with local nodes {" + format_list(local) + "}, but node " + std::to_string(n) +
                                        " has no known read bandwidth from node " + std::to_string(from) +
                                        ": the machine's firmware gives no HMAT bandwidths (ccnuma-vm --memory-node "
                                        "SIZE,bandwidth=RATIO makes a machine that does)");
                    total += static_cast<double>(a->read_bandwidth);
                    cumulative.push_back(total);
                }
                const auto own = owned_units(team, t, begin, end, element_size, unit);
                // Share k ends at the rounded cumulative fraction: off by at most one unit each.
                std::size_t j = 0;
                for (std::size_t k = 0; k < local.size(); ++k) {
                    const auto stop = static_cast<std::size_t>(
                        std::llround(static_cast<double>(own.size()) * cumulative[k] / total));
                    for (; j < std::min(stop, own.size()); ++j) plan[own[j]] = static_cast<int>(local[k]);
                }
            }
            break;
        }
        case policy_meaning::plan::fastest: {
            std::vector<std::int64_t> budget;  // per node of `nodes`
            for (unsigned n : nodes) {
                const auto free = node_meminfo(n, "MemFree").value_or(0);
                const auto margin = fastest_margin(node_memory(n));
                budget.push_back(free > margin ? static_cast<std::int64_t>(free - margin) : 0);
            }
            auto slot = [&](unsigned n) {
                return static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), n) - nodes.begin());
            };
            for (unsigned t = 0; t < team.threads; ++t) {
                // Its local nodes fastest first, then every other allowed node by distance.
                auto order = thread_local_nodes(team, t);
                for (unsigned n : by_distance(team.node[t], nodes))
                    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
                for (std::size_t i : owned_units(team, t, begin, end, element_size, unit)) {
                    int chosen = -1;
                    for (unsigned n : order) {
                        const std::size_t k = slot(n);
                        if (k < nodes.size() && budget[k] >= static_cast<std::int64_t>(unit)) {
                            budget[k] -= static_cast<std::int64_t>(unit);
                            chosen = static_cast<int>(n);
                            break;
                        }
                    }
                    // No node has room by the estimate: the first choice, and the kernel's
                    // fallback of MPOL_PREFERRED decides.
                    plan[i] = chosen >= 0 ? chosen : order.empty() ? -1 : static_cast<int>(order.front());
                }
            }
            break;
        }
    }
    return plan;
}

}  // namespace detail

namespace {

void apply(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size) {
    if (bytes == 0) return;
    element_size = std::max<std::size_t>(element_size, 1);
    const std::size_t unit = detail::unit_bytes(page_kind_of(p));
    const std::string what = "placement " + to_string(p) + " of " + detail::human_bytes(bytes);
    if (page_kind_of(p) == page_kind::huge) (void)detail::advise_huge(ptr, bytes, true);
    auto fail = [&](int err, const std::string& call) {
        detail::throw_system_error(err, what + ": " + call + " failed");
    };
    const auto m = detail::meaning_of(p);
    const std::size_t n = bytes / element_size + (bytes % element_size ? 1 : 0);
    switch (m.act) {
        case detail::policy_meaning::action::touch: {
            auto team = detail::run_team(
                n, m.sched,
                [&](unsigned t, const detail::team_layout& layout) {
                    touch_units(layout, t, static_cast<char*>(ptr), bytes, element_size, unit);
                },
                what);
            warn_small_chunks(team, bytes, element_size, unit, p);
            return;
        }
        case detail::policy_meaning::action::bind_units: {
            const auto team = detail::run_team(n, m.sched, {}, what);
            warn_small_chunks(team, bytes, element_size, unit, p);
            const auto nodes = detail::unit_nodes(team, ptr, bytes, element_size, unit);
            // One mbind per run of units with the same node.
            const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
            const std::size_t page = detail::page_bytes();
            for (std::size_t i = 0, j = 0; i < nodes.size(); i = j) {
                for (j = i + 1; j < nodes.size() && nodes[j] == nodes[i]; ++j) {
                }
                const std::uintptr_t from = std::max<std::uintptr_t>(begin, (begin / unit + i) * unit);
                const std::uintptr_t to = std::min<std::uintptr_t>(begin + bytes, (begin / unit + j) * unit);
                const std::uintptr_t to_page = (to + page - 1) / page * page;
                if (nodes[i] < 0) continue;
                if (int err = detail::mbind_range(reinterpret_cast<void*>(from), to_page - from, m.mode,
                                                  {static_cast<unsigned>(nodes[i])}, 0))
                    fail(err, "mbind to node " + std::to_string(nodes[i]));
            }
            return;
        }
        case detail::policy_meaning::action::kernel_policy: {
            const auto nodes = detail::policy_nodes(m, what);
            const std::size_t len =
                (bytes + detail::page_bytes() - 1) / detail::page_bytes() * detail::page_bytes();
            // A spilling policy names its own nodes to the kernel, not every node it may spill to.
            if (int err = detail::mbind_range(ptr, len, m.mode, m.spills ? m.nodes : nodes, 0)) {
                // The nodes are checked above, so EINVAL for this mode means the kernel lacks it.
                if (err == EINVAL && m.mode == detail::mpol_weighted_interleave)
                    detail::throw_error(errc::not_supported,
                                        what + ": this kernel lacks MPOL_WEIGHTED_INTERLEAVE (Linux 6.9 or later); "
                                               "give the weights (.weights({...})) to place by weight on any kernel");
                fail(err, "mbind");
            }
            return;
        }
        case detail::policy_meaning::action::write_planned: {
            const auto nodes = detail::policy_nodes(m, what);
            const auto learned = detail::run_team(n, m.sched, {}, what);
            warn_small_chunks(learned, bytes, element_size, unit, p);
            const auto plan = detail::plan_units(m, nodes, learned, ptr, bytes, element_size, unit, what);
            (void)detail::run_team(
                n, m.sched,
                [&](unsigned t, const detail::team_layout& layout) {
                    write_planned(layout, t, plan, m.mode, static_cast<char*>(ptr), bytes, element_size, unit, what);
                },
                what);
            return;
        }
    }
}

std::size_t mapping_length(std::size_t bytes, page_kind pg) {
    const std::size_t unit = detail::unit_bytes(pg);
    return (bytes + unit - 1) / unit * unit;
}

}  // namespace

void* allocate(std::size_t bytes, const policy& p, std::size_t element_size, std::size_t alignment) {
    const std::size_t page = detail::page_bytes();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > page)
        detail::throw_error(errc::invalid_argument, "allocate of " + detail::human_bytes(bytes) + ": alignment " +
                                                        std::to_string(alignment) +
                                                        " is not a power of two up to the page size (" +
                                                        std::to_string(page) + ")");
    // Validate nodes first, so that a bad node is reported as such even for small blocks.
    const auto nodes = target_nodes(p, bytes);
    if (bytes < page) return ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{alignment});


    // More than the policy's nodes hold can never be placed; refusing here is better than the
    // OOM killer later, when the pages are touched.
    std::uint64_t capacity = 0;
    std::string held;
    for (unsigned n : nodes) {
        const auto memory = detail::node_memory(n);
        capacity += memory;
        held += (held.empty() ? "node " : ", node ") + std::to_string(n) + ": " + detail::human_bytes(memory);
    }
    if (capacity != 0 && bytes > capacity)
        detail::throw_error(errc::infeasible, "placement " + to_string(p) + " of " + detail::human_bytes(bytes) +
                                                  ": more memory than the policy's nodes hold (" + held +
                                                  "; valid: at most " + detail::human_bytes(capacity) + ")");
    if (bytes > std::numeric_limits<std::size_t>::max() - 2 * detail::huge_page_bytes()) throw std::bad_alloc();

    const page_kind pg = page_kind_of(p);
    const std::size_t len = mapping_length(bytes, pg);
    // Aligned to the placement unit, so that huge pages line up with it.
    auto* start = static_cast<char*>(detail::map_anonymous(len, detail::unit_bytes(pg)));
    if (start == nullptr) throw std::bad_alloc();
    try {
        apply(start, bytes, p, element_size);
    } catch (...) {
        (void)detail::unmap(start, len);
        throw;
    }
    return start;
}

void deallocate(void* ptr, std::size_t bytes, const policy& p, std::size_t alignment) noexcept {
    if (ptr == nullptr) return;
    if (bytes < detail::page_bytes()) {
        ::operator delete(ptr, std::align_val_t{alignment});
        return;
    }
    (void)detail::unmap(ptr, mapping_length(bytes, page_kind_of(p)));
}

void place(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size) {
    char at[32];
    std::snprintf(at, sizeof at, "%p", ptr);
    const std::string what = "place " + to_string(p) + " of " + detail::human_bytes(bytes) + " at " + at;
    const std::size_t page = detail::page_bytes();
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    if (begin % page != 0)
        detail::throw_error(errc::invalid_argument, what + ": the address is not page-aligned (expected a multiple of " +
                                                        std::to_string(page) + ")");
    if (bytes == 0) return;
    // The range must end inside the address space, its last page included.
    if (bytes > std::numeric_limits<std::uintptr_t>::max() - begin - (page - 1))
        detail::throw_error(errc::invalid_argument,
                            what + ": the range runs past the end of the address space (valid: at most " +
                                std::to_string(std::numeric_limits<std::uintptr_t>::max() - begin - (page - 1)) +
                                " bytes from this address)");
    if (ptr == nullptr) detail::throw_error(errc::invalid_argument, what + ": the address is null");
    (void)target_nodes(p, bytes);
    const bool writes = detail::meaning_of(p).writes();
    // /proc/self/maps, because first_touch and the tier policies write every page (a fault there
    // is a SIGSEGV, not an errno), and mbind reports a hole only for part of the policies.
    // Without procfs the kernel calls still report EFAULT.
    if (!detail::maps_cover(begin, begin + bytes, writes).value_or(true))
        detail::throw_error(errc::invalid_argument,
                            what + (writes ? ": the range is not (entirely) mapped writable memory (this policy "
                                             "writes every page; expected memory from mmap or allocate)"
                                           : ": the range is not (entirely) mapped memory (expected memory from mmap "
                                             "or allocate)"));
    apply(ptr, bytes, p, element_size);
}

}  // namespace ccnuma
