// The tier policies' plans (placement_internal.hpp's plan_units): which node each placement
// unit goes to for weighted_interleave with weights, first_touch's tiers and fastest, from the
// bandwidths of the HMAT and each node's free memory. Which thread owns a unit is the team's
// (team_layout::unit_owner); the writing is placement.cpp's.

#include "placement_internal.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

namespace ccnuma {

namespace {

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
                            const unit_range& range, const std::string& what) {
    const std::size_t units = range.count();
    const std::size_t unit = range.unit;
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
                const auto own = team.owned_units(range, t);
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
                for (std::size_t i : team.owned_units(range, t)) {
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

}  // namespace ccnuma
