// The planner (binding.hpp, middle stage: spec from binding_spec.cpp, realized by bind.cpp):
// maps every thread path of a spec to a PU of a topology snapshot.
// The rules are written down, with examples, in docs/binding.md.

#include <ccnuma/detail/json.hpp>

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/throw_error.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace ccnuma {

namespace {

class planner {
public:
    explicit planner(const topology& topo) : topo_(topo), usage_(topo.pus().size(), 0) {
        const auto& doms = topo.domains();
        const auto& pus = topo.pus();
        dom_pus_.resize(doms.size());
        for (std::size_t d = 0; d < doms.size(); ++d)
            for (unsigned os : doms[d].pus) dom_pus_[d].push_back(index_of(os));
        team_load_.assign(doms.size(), 0);

        // Per PU: its NUMA node and core by position, and its ancestors of every kind, so that a
        // candidate's balance key is a few lookups.
        std::map<unsigned, std::size_t> core_pos;
        for (std::size_t c = 0; c < topo.cores().size(); ++c) core_pos[topo.cores()[c].logical_index] = c;
        std::map<int, std::size_t> node_pos;
        for (std::size_t n = 0; n < topo.numa_nodes().size(); ++n)
            node_pos[static_cast<int>(topo.numa_nodes()[n].os_index)] = n;
        info_.resize(pus.size());
        for (std::size_t p = 0; p < pus.size(); ++p) {
            auto& i = info_[p];
            i.core = core_pos.at(pus[p].core);
            i.node = pus[p].numa >= 0 ? static_cast<std::ptrdiff_t>(node_pos.at(pus[p].numa)) : -1;
            for (auto d = doms[leaf_of(p)].parent; d >= 0; d = doms[static_cast<std::size_t>(d)].parent) {
                const auto dd = static_cast<std::size_t>(d);
                switch (doms[dd].kind) {
                case domain_kind::group: i.groups.push_back(dd); break;
                case domain_kind::package: i.level[0] = d; break;
                case domain_kind::die: i.level[1] = d; break;
                case domain_kind::l3: i.level[2] = d; break;
                case domain_kind::l2: i.level[3] = d; break;
                default: break;
                }
            }
        }
        core_usage_.assign(topo.cores().size(), 0);
        team_core_load_.assign(topo.cores().size(), 0);
        node_load_.assign(topo.numa_nodes().size(), 0);
        node_usage_.assign(topo.numa_nodes().size(), 0);
    }

    // Places a team of `count` new threads. With a master, the team is the master plus these
    // threads and `sub` selects the smallest domain around the master with room.
    std::vector<std::size_t> place_team(strategy how, std::optional<std::size_t> master, unsigned count) {
        // Where a strategy draws from and how it fills: a switch without a default, so that a
        // strategy added to the enum does not compile (-Wswitch, an error in CI) until it is placed.
        enum class fill { compact, scatter };
        enum class within { machine, master_domain };
        const auto [how_fill, where] = [how] {
            switch (how) {
            case strategy::compact: return std::pair{fill::compact, within::machine};
            case strategy::scatter: return std::pair{fill::scatter, within::machine};
            case strategy::subcompact: return std::pair{fill::compact, within::master_domain};
            case strategy::subscatter: return std::pair{fill::scatter, within::master_domain};
            }
            std::abort();  // not an enumerator: a corrupted value, never a strategy
        }();
        std::size_t object = 0;  // the root: the whole allowed machine
        if (master && where == within::master_domain) object = smallest_with_room(*master, count + 1);
        const auto& candidates = dom_pus_[object];
        std::vector<std::size_t> placed;
        placed.reserve(count);
        if (how_fill == fill::compact) {
            compact_fill(candidates, master, count, placed);
        } else {
            std::fill(team_load_.begin(), team_load_.end(), 0);
            std::fill(node_load_.begin(), node_load_.end(), 0);
            std::fill(team_core_load_.begin(), team_core_load_.end(), 0);
            no_package_load_ = 0;
            if (master) add_load(*master);
            for (unsigned i = 0; i < count; ++i) {
                const std::size_t pu = scatter_one(candidates);
                take(pu);
                add_load(pu);
                placed.push_back(pu);
            }
        }
        return placed;
    }

    void take(std::size_t pu) {
        ++usage_[pu];
        ++core_usage_[info_[pu].core];
        if (info_[pu].node >= 0) ++node_usage_[static_cast<std::size_t>(info_[pu].node)];
    }
    std::size_t index_of(unsigned os) const { return static_cast<std::size_t>(&topo_.pu(os) - topo_.pus().data()); }

private:
    struct pu_links {
        std::size_t core = 0;                           // position in topology::cores()
        std::ptrdiff_t node = -1;                       // position in topology::numa_nodes()
        std::array<std::ptrdiff_t, 4> level{-1, -1, -1, -1};  // package, die, L3, L2 domains
        std::vector<std::size_t> groups;                // group domains above the PU
    };

    std::size_t leaf_of(std::size_t pu) const { return topo_.pus()[pu].domain; }

    // A PU outside every NUMA node with CPUs has no local memory (its node is offline,
    // disallowed or masked).
    bool outside_nodes(std::size_t pu) const { return info_[pu].node < 0; }

    void add_load(std::size_t pu) {
        for (auto d = static_cast<std::ptrdiff_t>(leaf_of(pu)); d >= 0; d = topo_.domains()[static_cast<std::size_t>(d)].parent)
            ++team_load_[static_cast<std::size_t>(d)];
        if (info_[pu].node >= 0) ++node_load_[static_cast<std::size_t>(info_[pu].node)];
        if (info_[pu].level[0] < 0) ++no_package_load_;
        ++team_core_load_[info_[pu].core];
    }

    // Room, counted in cores so that a team never lands on SMT siblings while whole cores
    // nearby are free: cores whose PUs are all unused, plus the master's own core.
    std::size_t smallest_with_room(std::size_t master, unsigned team) const {
        const auto& doms = topo_.domains();
        const unsigned master_core = topo_.pus()[master].core;
        std::optional<std::size_t> by_pus;
        for (auto d = doms[leaf_of(master)].parent; d >= 0; d = doms[static_cast<std::size_t>(d)].parent) {
            const auto dd = static_cast<std::size_t>(d);
            std::set<unsigned> cores, busy_cores;
            std::size_t free_pus = 0;
            for (std::size_t p : dom_pus_[dd]) {
                const unsigned c = topo_.pus()[p].core;
                cores.insert(c);
                if (usage_[p] > 0 && c != master_core) busy_cores.insert(c);
                if (usage_[p] == 0) ++free_pus;
            }
            if (cores.size() - busy_cores.size() >= team) return dd;
            if (!by_pus && free_pus + 1 >= team) by_pus = dd;
        }
        return by_pus.value_or(0);
    }

    // Compact: PUs ordered by (SMT round, core position). Core positions follow topology order,
    // which is the order of core L# (lstopo's in the same restriction; issue 22: the first
    // thread goes to the first allowed core, whatever its NUMA node), starting at the master's
    // core so an inner team sits next to its master. Cores that already carry a thread count as
    // having used their first round, so no core gets a second thread while a whole core is free.
    void compact_fill(const std::vector<std::size_t>& candidates, std::optional<std::size_t> master, unsigned count,
                      std::vector<std::size_t>& placed) {
        const auto& pus = topo_.pus();
        while (placed.size() < count) {
            unsigned umin = std::numeric_limits<unsigned>::max();
            for (std::size_t p : candidates) umin = std::min(umin, usage_[p]);
            std::vector<std::size_t> sorted = candidates;
            std::stable_sort(sorted.begin(), sorted.end(),
                             [&](std::size_t a, std::size_t b) { return pus[a].core < pus[b].core; });
            std::vector<unsigned> core_order;  // logical core indices, ascending
            for (std::size_t p : sorted)
                if (core_order.empty() || core_order.back() != pus[p].core) core_order.push_back(pus[p].core);
            std::size_t shift = 0;
            if (master) {
                const auto it = std::lower_bound(core_order.begin(), core_order.end(), pus[*master].core);
                if (it != core_order.end()) shift = static_cast<std::size_t>(it - core_order.begin());
            }
            std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> keyed;  // (round, core pos, pu)
            std::size_t ci = 0;
            for (std::size_t i = 0; i < sorted.size();) {
                std::size_t j = i, busy = 0, rank = 0;
                while (j < sorted.size() && pus[sorted[j]].core == pus[sorted[i]].core) {
                    if (usage_[sorted[j]] > umin) ++busy;
                    ++j;
                }
                const std::size_t pos = (ci + core_order.size() - shift) % core_order.size();
                for (std::size_t k = i; k < j; ++k)
                    if (usage_[sorted[k]] == umin) keyed.emplace_back(busy + rank++, pos, sorted[k]);
                i = j;
                ++ci;
            }
            std::sort(keyed.begin(), keyed.end());
            for (const auto& k : keyed) {
                if (placed.size() == count) break;
                take(std::get<2>(k));
                placed.push_back(std::get<2>(k));
            }
        }
    }

    // Scatter: among the candidates with the fewest threads, and among those on the least used
    // cores (one thread per core before any SMT sibling, on every kind of core), the PU whose
    // NUMA node, then package, die, L3 and L2 hold the fewest members of this team. Each level
    // is balanced by kind, not by tree depth, so a Group above some packages cannot unbalance
    // them (issue 12.3).
    // A PU outside every NUMA node with CPUs (its node is offline, disallowed or masked) counts,
    // at the node level, the team members of its own package, and loses ties to a PU in a node:
    // every node with CPUs gets a thread first (issue 12.1), yet no package stays empty while
    // another one holds more than its share (issue 22). Ties: fewer team members in the PU's
    // groups, then the least occupied node by other threads, then topology order.
    std::size_t scatter_one(const std::vector<std::size_t>& candidates) const {
        unsigned umin = std::numeric_limits<unsigned>::max();
        for (std::size_t p : candidates) umin = std::min(umin, usage_[p]);
        unsigned cmin = std::numeric_limits<unsigned>::max();
        for (std::size_t p : candidates)
            if (usage_[p] == umin) cmin = std::min(cmin, core_usage_[info_[p].core]);
        // Once every candidate core carries a thread (the SMT round), a sibling on a core of
        // this team (its master's, or a member's) comes before a sibling of another team's
        // thread: sharing a core's caches with its own team is local, sharing them with another
        // team is interference, and no spread is left to gain (issue 32: on linux-8ia64-2s2c2t
        // restricted to PUs 0-5, 2,scatter,2,scatter put thread (1,1) on PU 1 beside thread
        // (0,0) in package 0, while PU 5 beside its master was free).
        const bool smt_round = cmin > 0;
        const auto key = [&](std::size_t p) {
            const auto& i = info_[p];
            std::array<std::size_t, 9> k{};
            const std::size_t package = i.level[0] >= 0 ? team_load_[static_cast<std::size_t>(i.level[0])]
                                                        : no_package_load_;
            k[0] = smt_round && team_core_load_[i.core] == 0 ? 1 : 0;
            k[1] = i.node >= 0 ? node_load_[static_cast<std::size_t>(i.node)] : package;
            k[2] = outside_nodes(p) ? 1 : 0;
            k[3] = package;
            for (std::size_t l = 1; l < 4; ++l)
                k[l + 3] = i.level[l] >= 0 ? team_load_[static_cast<std::size_t>(i.level[l])] : 0;
            for (std::size_t g : i.groups) k[7] += team_load_[g];
            k[8] = other_load(i.node);
            return k;
        };
        std::optional<std::size_t> best;
        std::array<std::size_t, 9> best_key{};
        for (std::size_t p : candidates) {
            if (usage_[p] != umin || core_usage_[info_[p].core] != cmin) continue;
            const auto k = key(p);
            if (!best || k < best_key) {
                best = p;
                best_key = k;
            }
        }
        return *best;  // candidates is never empty: every domain holds a PU
    }

    // Threads of earlier teams on a node, per 1024 of its PUs (a tie-break only).
    std::size_t other_load(std::ptrdiff_t node) const {
        if (node < 0) return 0;
        const auto n = static_cast<std::size_t>(node);
        const auto size = topo_.numa_nodes()[n].cpus.size();
        return size == 0 ? 0 : std::size_t{node_usage_[n]} * 1024 / size;
    }

    const topology& topo_;
    std::vector<unsigned> usage_;                   // threads per PU, by position in topo.pus()
    std::vector<unsigned> core_usage_;              // threads per core, by position in topo.cores()
    std::vector<std::vector<std::size_t>> dom_pus_;  // PU positions per domain
    std::vector<pu_links> info_;                    // per PU position
    std::vector<unsigned> team_load_;                // members of the current team per domain
    std::vector<unsigned> node_load_;                // members of the current team per NUMA node
    std::vector<unsigned> node_usage_;               // threads of all teams per NUMA node
    std::vector<unsigned> team_core_load_;           // members of the current team per core
    std::size_t no_package_load_ = 0;                // members of the current team in no package
};

}  // namespace

binding_plan make_plan(const topology& topo, const binding_spec& spec, const plan_options& options) {
    if (spec.empty())
        detail::throw_error(errc::invalid_argument, "make_plan: empty binding spec (expected "
                                                    "N,strategy[,N,strategy]...)");
    const std::size_t total = spec.total_threads();
    const std::size_t allowed = topo.pus().size();
    if (total > allowed && !options.oversubscribe)
        detail::throw_error(errc::infeasible,
                            "binding spec \"" + spec.to_string() + "\" needs " + std::to_string(total) +
                                " PUs but only " + std::to_string(allowed) + (allowed == 1 ? " is" : " are") + " allowed (" +
                                format_list(topo.allowed_cpus()) +
                                "); use fewer threads or allow oversubscription (ccnuma-run --oversubscribe, "
                                "CCNUMA_OVERSUBSCRIBE=1)");

    planner p(topo);
    std::vector<std::size_t> current;  // PU positions of the threads of the last placed level
    for (std::size_t level = 0; level < spec.levels().size(); ++level) {
        const auto& l = spec.levels()[level];
        std::vector<std::size_t> next;
        next.reserve(current.empty() ? l.threads : current.size() * l.threads);
        if (level == 0) {
            next = p.place_team(l.how, std::nullopt, l.threads);
        } else {
            // Breadth first: every master of this level is placed before any inner team, so
            // inner teams see all masters as taken.
            for (std::size_t master : current) {
                next.push_back(master);
                const auto team = p.place_team(l.how, master, l.threads - 1);
                next.insert(next.end(), team.begin(), team.end());
            }
        }
        current = std::move(next);
    }

    binding_plan plan;
    plan.spec_ = spec;
    plan.topology_ = topo.description();
    plan.oversubscribed_ = total > allowed;
    const auto& levels = spec.levels();
    plan.stride_.assign(levels.size(), 1);
    for (std::size_t l = levels.size() - 1; l > 0; --l) plan.stride_[l - 1] = plan.stride_[l] * levels[l].threads;
    plan.threads_.reserve(current.size());
    for (std::size_t i = 0; i < current.size(); ++i) {
        const pu_info& pu = topo.pus()[current[i]];
        thread_slot slot{{}, pu.os_index, pu.core, pu.numa, pu.package};
        std::size_t rest = i;
        for (std::size_t l = 0; l < levels.size(); ++l) {
            slot.path.push_back(static_cast<unsigned>(rest / plan.stride_[l]));
            rest %= plan.stride_[l];
        }
        plan.threads_.push_back(std::move(slot));
    }
    return plan;
}

unsigned binding_plan::team_size(std::size_t level) const noexcept {
    if (level == 0 || level > spec_.levels().size()) return 1;
    return spec_.levels()[level - 1].threads;
}

const thread_slot* binding_plan::find(std::span<const unsigned> path) const noexcept {
    if (threads_.empty()) return nullptr;
    std::size_t index = 0;
    for (std::size_t l = 0; l < path.size(); ++l) {
        if (l >= stride_.size()) {
            if (path[l] != 0) return nullptr;  // deeper than the plan: only masters are known
            continue;
        }
        if (path[l] >= spec_.levels()[l].threads) return nullptr;
        index += path[l] * stride_[l];
    }
    return &threads_[index];
}

const thread_slot& binding_plan::at(std::span<const unsigned> path) const {
    if (const thread_slot* s = find(path)) return *s;
    std::string p;
    for (unsigned i : path) p += (p.empty() ? "" : ",") + std::to_string(i);
    detail::throw_error(errc::invalid_argument, "thread path (" + p + ") is not in binding plan \"" +
                                                    spec_.to_string() + "\"");
}

std::size_t binding_plan::numa_nodes_used() const {
    std::set<int> nodes;
    for (const auto& t : threads_)
        if (t.numa >= 0) nodes.insert(t.numa);
    return nodes.size();
}

namespace {
std::string path_text(const std::vector<unsigned>& path) {
    std::string s = "(";
    for (std::size_t i = 0; i < path.size(); ++i) s += (i ? "," : "") + std::to_string(path[i]);
    return s + ")";
}
}  // namespace

namespace detail {
json to_json_value(const binding_plan& plan) {
    json threads = json::array();
    for (const auto& t : plan.threads())
        threads.push_back({{"path", t.path},
                           {"pu", t.pu},
                           {"core", t.core},
                           {"numa", t.numa},
                           {"package", t.package == no_package ? std::int64_t{-1} : std::int64_t{t.package}}});
    return {{"threads", std::move(threads)}};
}
}  // namespace detail

std::string binding_plan::to_json() const { return detail::dump(detail::to_json_value(*this)); }

std::string binding_plan::to_text() const {
    std::string out = "binding plan \"" + spec_.to_string() + "\" on " + topology_ + ": " +
                      std::to_string(threads_.size()) + " threads on " + std::to_string(numa_nodes_used()) +
                      " NUMA node(s)" + (oversubscribed_ ? ", oversubscribed" : "") + "\n";
    const auto pad = [](std::string s, std::size_t w) {
        if (s.size() < w) s.append(w - s.size(), ' ');
        return s;
    };
    std::size_t pw = 6;
    for (const auto& t : threads_) pw = std::max(pw, path_text(t.path).size() + 2);
    out += pad("path", pw) + pad("pu", 6) + pad("core", 6) + pad("numa", 6) + "package\n";
    for (const auto& t : threads_)
        out += pad(path_text(t.path), pw) + pad(std::to_string(t.pu), 6) + pad(std::to_string(t.core), 6) +
               pad(t.numa < 0 ? "-" : std::to_string(t.numa), 6) +
               (t.package == no_package ? "-" : std::to_string(t.package)) + "\n";
    return out;
}

omp_realization to_omp_environment(const binding_plan& plan) {
    omp_realization r;
    if (plan.empty()) return r;
    std::string threads, bind;
    for (std::size_t l = 1; l <= plan.levels(); ++l) {
        threads += (l > 1 ? "," : "") + std::to_string(plan.team_size(l));
        bind += std::string(l > 1 ? "," : "") + (l < plan.levels() ? "spread" : "close");
    }
    if (plan.oversubscribed()) {
        r.level_expressed.assign(plan.levels(), false);
        r.notes.push_back("the plan puts several threads on one PU, which a list of OpenMP places cannot "
                          "express; OMP_PLACES and OMP_PROC_BIND are not set. Call ccnuma::bind_this_thread() "
                          "at the start of every parallel region to realize it in process");
    } else {
        // Depth-first places, spread at every level but the innermost and close there. spread
        // splits a partition into team-size subpartitions of consecutive places and gives each
        // thread the first place of its own: the plan's depth-first position of that thread,
        // and the block its inner team works in. At the innermost level close gives thread j
        // place j of the block: the same as spread for a team of the planned size, and for a
        // smaller team the plan's first PUs, where bind_this_thread and the OMPT tool put it.
        // spread there spaced a smaller team out instead: a team of 2 under "4,scatter" on two
        // nodes took places 0 and 2, both on node 0, and a seg::per_node array put both its
        // segments there.
        std::string places;
        for (const auto& t : plan.threads()) places += (places.empty() ? "{" : ",{") + std::to_string(t.pu) + "}";
        r.variables.push_back({"OMP_PLACES", places});
        r.variables.push_back({"OMP_PROC_BIND", bind});
        r.uses_places = true;
        r.level_expressed.assign(plan.levels(), true);
    }
    r.variables.push_back({"OMP_NUM_THREADS", threads});
    r.variables.push_back({"OMP_MAX_ACTIVE_LEVELS", std::to_string(plan.levels())});
    return r;
}

}  // namespace ccnuma
