// tiers: what tiered memory (CXL, HBM, far DRAM as CPU-less nodes) gives a memory-bound loop.
// The bandwidth matrix, as Intel MLC's --bandwidth_matrix: each package's threads, bound to its
// PUs, read an array on each node. Then STREAM's triad over a sweep of the DRAM:far interleave
// ratio, with the library's tier policies as variants, and where the optimum lies by the paired
// statistics. Every array is written before it is timed (no zero page), every result checked.

#include "baselines.hpp"
#include "kernels.hpp"
#include "paired.hpp"
#include "stats.hpp"

#include <ccnuma/detail/os.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/system.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

namespace {

using array = ccnuma::vector<double, ccnuma::policy>;

constexpr double triad_scalar = 3.0;  // a = b + 3 c stays exact on value()'s multiples of 1/64

/// One package's PUs (the team that initiates, thread t on pus[t]), its DRAM node and the
/// CPU-less node nearest it.
struct initiator {
    std::string name;  // "package 0"
    std::vector<unsigned> pus;
    int dram = -1;
    int far = -1;
};

bool has_memory(const ccnuma::numa_node& n) { return n.memory_bytes > 0; }

const ccnuma::numa_node* node_of(const ccnuma::topology& topo, int os) {
    for (const auto& n : topo.numa_nodes())
        if (static_cast<int>(n.os_index) == os) return &n;
    return nullptr;
}

/// The CPU-less node near `pu`: the first CPU-less entry of its local nodes (fastest first, by
/// the firmware's bandwidths), else the CPU-less node nearest its DRAM by distance.
int far_node_near(const ccnuma::topology& topo, unsigned pu, int dram) {
    for (unsigned n : topo.pu(pu).local_nodes)
        if (const auto* nd = node_of(topo, static_cast<int>(n)); nd && !nd->has_cpus && has_memory(*nd))
            return static_cast<int>(n);
    const auto& nodes = topo.numa_nodes();
    const auto& d = topo.distances();
    std::size_t row = nodes.size();
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (static_cast<int>(nodes[i].os_index) == dram) row = i;
    int best = -1;
    unsigned best_distance = ~0u;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].has_cpus || !has_memory(nodes[i])) continue;
        const unsigned dist = row < d.size() && i < d[row].size() ? d[row][i] : ~0u - 1;
        if (best < 0 || dist < best_distance) {
            best = static_cast<int>(nodes[i].os_index);
            best_distance = dist;
        }
    }
    return best;
}

std::vector<initiator> initiators(const ccnuma::topology& topo) {
    std::vector<initiator> out;
    auto add = [&](std::string name, std::vector<unsigned> pus) {
        if (pus.empty()) return;
        initiator i{std::move(name), std::move(pus)};
        i.dram = topo.pu(i.pus.front()).numa;
        i.far = far_node_near(topo, i.pus.front(), i.dram);
        out.push_back(std::move(i));
    };
    for (const auto& p : topo.packages()) add("package " + std::to_string(p.logical_index), p.pus);
    if (out.empty()) add("all PUs", topo.allowed_cpus());
    return out;
}

/// Pins thread t of a team of pus.size() threads to pus[t]. Untimed, before every timed call:
/// the OpenMP runtime keeps the threads of a team of one size, so the timed region that follows
/// runs on them, and the next initiator's team is pinned afresh.
void pin_team(const std::vector<unsigned>& pus) {
#pragma omp parallel num_threads(static_cast<int>(pus.size()))
    {
        (void)ccnuma::pin_this_thread(pus[static_cast<std::size_t>(omp_get_thread_num())]);
    }
}

/// Threads of a team of pus.size() that do not run on their PU now: 0 unless the pinning failed.
std::size_t threads_off_their_pu(const std::vector<unsigned>& pus) {
    std::size_t off = 0;
#pragma omp parallel num_threads(static_cast<int>(pus.size())) reduction(+ : off)
    off += sched_getcpu() != static_cast<int>(pus[static_cast<std::size_t>(omp_get_thread_num())]) ? 1 : 0;
    return off;
}

/// The read-only kernel: each thread of the team sums its static block with the expert's
/// four-accumulator vector loop.
__attribute__((noinline)) double read_sweeps(int threads, const double* a, std::size_t n, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
        {
            std::size_t lo = 0, hi = 0;
            expert::static_block(n, static_cast<unsigned>(omp_get_thread_num()), static_cast<unsigned>(threads), lo, hi);
            s += expert::sum_piece(a + lo, hi - lo);
        }
        escape(&s);
    }
    return s;
}

/// STREAM's triad with the static schedule, the partition the containers' placement used.
__attribute__((noinline)) void triad_sweeps(int threads, double* a, const double* b, const double* c, std::size_t n,
                                            std::size_t sweeps) {
    for (std::size_t k = 0; k < sweeps; ++k) {
#pragma omp parallel num_threads(threads)
        {
            std::size_t lo = 0, hi = 0;
            expert::static_block(n, static_cast<unsigned>(omp_get_thread_num()), static_cast<unsigned>(threads), lo, hi);
            expert::scaled_triad_piece(a + lo, b + lo, c + lo, triad_scalar, hi - lo);
        }
        escape(a);
    }
}

std::string gbs(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

/// "12.34 [12.10, 12.51]": the median with its distribution-free 95% interval, or
/// "12.34 (no interval)" from fewer repetitions than one needs.
std::string median_text(const std::vector<double>& v) {
    const auto m = stats_paired::median_interval(v);
    return gbs(m.median) + (m.has_interval ? " [" + gbs(m.lo) + ", " + gbs(m.hi) + "]" : " (no interval)");
}

/// Pages per node of the arrays (page_nodes: where the frames are now); -1 counts pages without one.
std::map<int, std::size_t> pages_per_node(std::initializer_list<const array*> arrays) {
    std::map<int, std::size_t> h;
    for (const array* x : arrays)
        for (int node : ccnuma::page_nodes(x->data(), x->size() * sizeof(double))) ++h[node];
    return h;
}

/// One point of the sweep: a placement of a, b, c and what it asked for.
struct point {
    std::string name;
    ccnuma::policy policy;
    unsigned dram_weight = 0, far_weight = 0;  ///< 0:0 for the policy variants
    bool ratio = false;
    std::unique_ptr<array> a, b, c;
    std::map<int, std::size_t> pages;
    std::string skipped;  ///< why the policy could not place here (no bandwidths known)
};

/// Arrays of n doubles each node must hold for the matrix and the sweep: the largest n that
/// fits is the default.
double arrays_on(int node, const initiator* sweep, const std::vector<std::pair<unsigned, unsigned>>& ratios) {
    double k = 1;  // the matrix's array
    constexpr double policy_variants = 3;  // each may put all three arrays on either node
    if (sweep && (node == sweep->dram || node == sweep->far)) {
        for (const auto& [d, f] : ratios) k += 3.0 * (node == sweep->dram ? d : f) / (d + f);
        k += 3 * policy_variants;
    }
    return k;
}


/// What the run compares: the machine's initiators and memory nodes, the DRAM:far ratios and the
/// initiator the sweep runs on (nullptr without a CPU-less node near an initiator).
struct tier_run {
    const ccnuma::topology& topo;
    std::vector<initiator> inits;
    std::vector<unsigned> memory_nodes;
    const initiator* sweep_at = nullptr;
    std::vector<std::pair<unsigned, unsigned>> ratios;
    ccnuma::page_kind pages = ccnuma::page_kind::base;
    bool emulated = false;
};

/// --n, or four times the last-level caches (at least 64 MiB per array) as far as every node
/// holds it; every size is checked against the nodes' free memory before the first one runs.
std::vector<std::size_t> tier_sizes(const options& o, const tier_run& t) {
    const auto& topo = t.topo;
    const auto& memory_nodes = t.memory_nodes;
    const auto* sweep_at = t.sweep_at;
    const auto& ratios = t.ratios;
    std::vector<std::size_t> sizes = o.sizes;
    if (sizes.empty()) {
        // Four times the last-level caches, at least 64 MiB per array, as far as every node holds it.
        std::uint64_t llc = 0;
        unsigned level = 0;
        for (const auto& c : topo.caches()) level = std::max(level, c.level);
        for (const auto& c : topo.caches())
            if (c.level == level) llc += c.bytes;
        double n = static_cast<double>(std::max<std::uint64_t>(4 * llc, std::uint64_t{64} << 20)) / sizeof(double);
        for (unsigned node : memory_nodes)
            if (const auto free = ccnuma::node_free_bytes(node))
                n = std::min(n, 0.7 * static_cast<double>(*free) / sizeof(double) /
                                    arrays_on(static_cast<int>(node), sweep_at, ratios));
        sizes.push_back(std::max<std::size_t>(static_cast<std::size_t>(n), 1024));
    }

    // Every size of the sweep is checked before the first one runs: an oversized last size of
    // 1:1e10:100/decade was refused only when the sweep reached it, minutes later.
    for (const std::size_t n : sizes) {
        double total = 0;
        for (unsigned node : memory_nodes) {
            const double k = arrays_on(static_cast<int>(node), sweep_at, ratios);
            total += k;
            const auto free = ccnuma::node_free_bytes(node);
            const double need = k * static_cast<double>(n) * sizeof(double);
            if (free && need > static_cast<double>(*free)) {
                char buf[200];
                std::snprintf(buf, sizeof buf, ": N = %zu needs %.1f MB on node %u, which has %.1f MB free (lower --n)", n,
                              need / 1e6, node, static_cast<double>(*free) / 1e6);
                throw std::runtime_error("tiers" + std::string(buf));
            }
        }
        need_memory("tiers", total, n);
    }

    return sizes;
}

/// The bandwidth matrix at n: each initiator's threads, bound to its PUs, read an array on each
/// memory node (on_node), interleaved over the repetitions; a table of medians in the notes.
void bandwidth_matrix(const options& o, report& out, const tier_run& t, std::size_t n) {
    const auto& topo = t.topo;
    const auto& inits = t.inits;
    const auto& memory_nodes = t.memory_nodes;
    const auto pages = t.pages;
    const int reps = o.reps;
    const double nn = static_cast<double>(n);
    std::vector<std::unique_ptr<array>> on;
    for (unsigned node : memory_nodes)
        on.push_back(std::make_unique<array>(n, [](std::size_t i) { return value(i, 1); },
                                             ccnuma::policy{ccnuma::on_node{node, pages}}));
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += value(i, 1);
    for (const std::size_t cap : o.threads.empty() ? std::vector<std::size_t>{0}
                                                   : std::vector<std::size_t>(o.threads.begin(), o.threads.end())) {
        std::vector<initiator> team = inits;
        for (auto& i : team)
            if (cap && i.pus.size() > cap) i.pus.resize(cap);
        std::vector<variant> vs;
        std::vector<double> sums(team.size() * memory_nodes.size());
        struct cell {
            std::size_t init, node;
        };
        std::vector<cell> cells;
        for (std::size_t i = 0; i < team.size(); ++i)
            for (std::size_t k = 0; k < memory_nodes.size(); ++k) {
                const auto* pus = &team[i].pus;
                const double* a = on[k]->data();
                double* sum = &sums[cells.size()];
                vs.push_back(timed(
                    team[i].name + " reads node " + std::to_string(memory_nodes[k]),
                    [pus, a, n, sum](std::size_t b) { *sum = read_sweeps(static_cast<int>(pus->size()), a, n, b); },
                    [pus] { pin_team(*pus); }));
                cells.push_back({i, k});
            }
        out.progress("tiers: bandwidth matrix, n = " + std::to_string(n) + ", " + std::to_string(vs.size()) + " cells");
        const auto m = measure(vs, reps, o.min_time);
        std::vector<std::string> rows;
        std::string head = "tiers bandwidth matrix, n = " + std::to_string(n) +
                           ": GB/s of a read-only sum (the expert's 4-accumulator loop), median [95% interval of the "
                           "median] over " + std::to_string(reps) +
                           " interleaved repetitions; rows: each package's threads, bound to its PUs; columns: the "
                           "node the array is on (on_node)";
        std::vector<std::string> line(team.size());
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const auto& init = team[cells[c].init];
            const unsigned node = memory_nodes[cells[c].node];
            if (sums[c] != expected)
                wrong("tiers matrix " + vs[c].name + ": sum " + std::to_string(sums[c]) + ", expected " +
                      std::to_string(expected));
            pin_team(init.pus);
            auto r = bandwidth("tiers-read", vs[c].name, n, static_cast<unsigned>(init.pus.size()), m, c, 8 * nn, 8 * nn,
                               nn);
            const auto* nd = node_of(topo, static_cast<int>(node));
            r.counters["node"] = node;
            r.counters["node_has_cpus"] = nd && nd->has_cpus ? 1 : 0;
            r.counters["local"] = static_cast<int>(node) == init.dram ? 1 : 0;
            r.counters["threads_off_their_pu"] = static_cast<double>(threads_off_their_pu(init.pus));
            const auto mi = stats_paired::median_interval(r.values);
            if (mi.has_interval) {
                r.counters["median_lo"] = mi.lo;
                r.counters["median_hi"] = mi.hi;
            }
            line[cells[c].init] += "  node " + std::to_string(node) + (nd && !nd->has_cpus ? " (CPU-less)" : "") +
                                   ": " + median_text(r.values);
            out.add(std::move(r));
        }
        out.note(head);
        for (std::size_t i = 0; i < team.size(); ++i)
            out.note("  " + team[i].name + " (" + std::to_string(team[i].pus.size()) +
                     (team[i].pus.size() == 1 ? " thread" : " threads") + ", DRAM node " +
                     std::to_string(team[i].dram) + "):" + line[i]);
    }
}

/// The sweep's placements at n, made by the pinned timing team: one per DRAM:far ratio (on_node
/// at the ends, weighted_interleave between) and the three tier policies (a policy that cannot
/// place without the firmware's bandwidths is left out with a note). Each ratio's pages are
/// checked to be where it asked for them. `pus` gets the timing team's PUs.
std::vector<point> sweep_points(const options& o, report& out, const tier_run& t, std::size_t n,
                                std::vector<unsigned>& pus) {
    const auto pages = t.pages;
    const auto& ratios = t.ratios;
    const initiator& init = *t.sweep_at;
    pus = init.pus;
    if (!o.threads.empty() && pus.size() > o.threads.front()) pus.resize(o.threads.front());
    const int threads = static_cast<int>(pus.size());
    const auto dram = static_cast<unsigned>(init.dram), far = static_cast<unsigned>(init.far);
    // The placing team is the timing team: first_touch's tiers and fastest plan by the PUs
    // its threads run on, so they must be pinned while the arrays are made.
    omp_set_num_threads(threads);
    pin_team(pus);
    std::vector<point> points;
    for (const auto& [d, f] : ratios) {
        point p;
        p.ratio = true;
        p.dram_weight = d;
        p.far_weight = f;
        if (f == 0) p.policy = ccnuma::on_node{dram, pages};
        else if (d == 0) p.policy = ccnuma::on_node{far, pages};
        else p.policy = ccnuma::weighted_interleave{}.nodes({dram, far}).weights({d, f}).pages(pages);
        p.name = "DRAM:far " + std::to_string(d) + ":" + std::to_string(f) + " " + ccnuma::to_string(p.policy);
        points.push_back(std::move(p));
    }
    for (ccnuma::policy pol : {ccnuma::policy{ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth).pages(pages)},
                               ccnuma::policy{ccnuma::weighted_interleave{}.nodes({dram, far}).weights(ccnuma::by_bandwidth).pages(pages)},
                               ccnuma::policy{ccnuma::fastest{}.pages(pages)}}) {
        point p;
        p.policy = pol;
        p.name = ccnuma::to_string(pol);
        points.push_back(std::move(p));
    }
    for (auto& p : points) {
        try {
            p.a = std::make_unique<array>(n, 0.0, p.policy);
            p.b = std::make_unique<array>(n, [](std::size_t i) { return value(i, 1); }, p.policy);
            p.c = std::make_unique<array>(n, [](std::size_t i) { return value(i, 2); }, p.policy);
        } catch (const ccnuma::error& e) {
            // by_bandwidth without the firmware's bandwidths: the policy says so, the sweep goes on.
            if (p.ratio || e.code() != ccnuma::errc::not_supported) throw;
            p.skipped = e.what();
            p.a.reset();
            p.b.reset();
            p.c.reset();
            continue;
        }
        p.pages = pages_per_node({p.a.get(), p.b.get(), p.c.get()});
    }
    std::erase_if(points, [&](const point& p) {
        if (p.skipped.empty()) return false;
        out.note("tiers: " + p.name + " not measured: " + p.skipped);
        return true;
    });
    // Each ratio's pages where it asked for them: within one round of the pattern per array
    // (in base pages of the unit), the ends all on their node.
    const std::size_t page = ccnuma::support().page_size;
    const std::size_t unit_pages =
        pages == ccnuma::page_kind::huge && ccnuma::support().huge_page_size ? ccnuma::support().huge_page_size / page : 1;
    for (const auto& p : points) {
        if (!p.ratio) continue;
        std::size_t placed = 0, on_far = 0;
        for (const auto& [node, count] : p.pages) {
            placed += count;
            if (node == static_cast<int>(far)) on_far += count;
        }
        const double asked = static_cast<double>(p.far_weight) / (p.dram_weight + p.far_weight);
        const double slack = 3.0 * (p.dram_weight + p.far_weight) * static_cast<double>(unit_pages) + 3;
        const auto elsewhere = placed - on_far - (p.pages.count(static_cast<int>(dram)) ? p.pages.at(static_cast<int>(dram)) : 0);
        if (elsewhere != 0 || std::fabs(static_cast<double>(on_far) - asked * static_cast<double>(placed)) > slack)
            wrong("tiers sweep " + p.name + ": " + std::to_string(on_far) + " of " + std::to_string(placed) +
                  " pages on far node " + std::to_string(far) + " (" + std::to_string(elsewhere) +
                  " on neither node), not the share asked for");
    }

    return points;
}

/// Times the sweep's placements at n, interleaved, checks each result, and says where the
/// optimum lies: the ratio with the highest median, every other paired with it round by round.
void time_sweep(const options& o, report& out, const tier_run& t, std::size_t n, std::vector<point>& points,
                const std::vector<unsigned>& pus) {
    const initiator& init = *t.sweep_at;
    const int threads = static_cast<int>(pus.size());
    const auto dram = static_cast<unsigned>(init.dram), far = static_cast<unsigned>(init.far);
    const int reps = o.reps;
    const double nn = static_cast<double>(n);
    const bool emulated = t.emulated;
    std::vector<variant> vs;
    for (auto& p : points) {
        double* a = p.a->data();
        const double *b = p.b->data(), *c = p.c->data();
        vs.push_back(timed(
            p.name, [threads, a, b, c, n](std::size_t k) { triad_sweeps(threads, a, b, c, n, k); },
            [&pus] { pin_team(pus); }));
    }
    out.progress("tiers: DRAM:far triad sweep, n = " + std::to_string(n) + ", " + std::to_string(vs.size()) + " variants");
    const auto m = measure(vs, reps, o.min_time);
    std::vector<result> rs;
    for (std::size_t k = 0; k < points.size(); ++k) {
        const auto& p = points[k];
        for (std::size_t i = 0; i < n; ++i)
            if ((*p.a)[i] != value(i, 1) + triad_scalar * value(i, 2))
                wrong("tiers sweep " + p.name + ": a[" + std::to_string(i) + "]");
        auto r = bandwidth("tiers-triad", p.name, n, static_cast<unsigned>(threads), m, k, 24 * nn, 32 * nn, 2 * nn);
        r.counters["dram_node"] = dram;
        r.counters["far_node"] = far;
        if (p.ratio) {
            r.counters["dram_weight"] = p.dram_weight;
            r.counters["far_weight"] = p.far_weight;
        }
        std::size_t placed = 0;
        for (const auto& [node, count] : p.pages) placed += count;
        for (const auto& [node, count] : p.pages)
            r.counters[node < 0 ? std::string("pages_not_present") : "pages_on_node" + std::to_string(node)] =
                static_cast<double>(count);
        const auto f = p.pages.find(static_cast<int>(far));
        r.counters["far_share"] = placed ? static_cast<double>(f == p.pages.end() ? 0 : f->second) / static_cast<double>(placed) : 0;
        r.counters["threads_off_their_pu"] = static_cast<double>(threads_off_their_pu(pus));
        rs.push_back(std::move(r));
    }
    // The optimum: the ratio with the highest median, and each variant paired with it round
    // by round; a ratio whose interval holds 1 is as good as far as this run can tell.
    std::size_t best = 0;
    for (std::size_t k = 0; k < rs.size(); ++k)
        if (points[k].ratio && summarize(rs[k].values).median > summarize(rs[best].values).median) best = k;
    auto ratio_name = [&](std::size_t k) {
        return std::to_string(points[k].dram_weight) + ":" + std::to_string(points[k].far_weight);
    };
    std::string against, ties, policies;
    const bool enough = rs[best].values.size() >= stats_paired::min_pairs;
    for (std::size_t k = 0; k < rs.size(); ++k) {
        if (k == best) continue;
        const auto iv = pair_with(rs[k], rs[best], "vs_best_ratio");
        const auto v = stats_paired::judge(iv);
        const std::string what = stats_paired::to_string(iv) + ", " + stats_paired::to_string(v);
        if (points[k].ratio) {
            against += (against.empty() ? "" : "; ") + ratio_name(k) + " " + what;
            if (v == stats_paired::verdict::no_difference) ties += (ties.empty() ? "" : ", ") + ratio_name(k);
        } else {
            policies += (policies.empty() ? "" : "; ") + points[k].name + " " + what;
        }
    }
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "tiers-triad n = %zu, %s (%d threads), DRAM node %u, far node %u: the highest median is DRAM:far %s "
                  "(%s GB/s); ",
                  n, init.name.c_str(), threads, dram, far, ratio_name(best).c_str(),
                  gbs(summarize(rs[best].values).median).c_str());
    std::string verdict;
    if (!enough)
        verdict = "the optimum is not located: " + stats_paired::to_string(stats_paired::verdict::too_few_pairs);
    else if (ties.empty())
        verdict = "the optimum is DRAM:far " + ratio_name(best) + ", above every other ratio with 95% confidence";
    else
        verdict = "the optimum is DRAM:far " + ratio_name(best) + " or " + ties +
                  " (no difference measurable between them)";
    out.note(buf + verdict + (emulated ? " [emulated: not a finding]" : ""));
    out.note("  each ratio over DRAM:far " + ratio_name(best) + ", paired by round: " + against);
    if (!policies.empty()) out.note("  each policy over DRAM:far " + ratio_name(best) + ": " + policies);
    for (auto& r : rs) out.add(std::move(r));
}

}  // namespace

void tiers(const options& o, report& out) {
    tier_run t{ccnuma::topology::current(), {}, {}, nullptr, {{1, 0}, {4, 1}, {3, 1}, {2, 1}, {1, 1}, {1, 2}, {0, 1}},
               o.pages ? *o.pages : ccnuma::page_kind::base, ccnuma::emulated_machine::current().has_value()};
    t.inits = initiators(t.topo);
    // The sweep runs on the first initiator with DRAM and a far node near it: those are the tiers.
    const auto at = std::find_if(t.inits.begin(), t.inits.end(), [](const initiator& i) { return i.dram >= 0 && i.far >= 0; });
    t.sweep_at = at == t.inits.end() ? nullptr : &*at;
    for (const auto& n : t.topo.numa_nodes())
        if (has_memory(n)) t.memory_nodes.push_back(n.os_index);
    if (t.emulated)
        out.note("tiers: in ccnuma-vm (emulated machine): QEMU TCG's speeds are not the memory's, so only the placement "
                 "(pages per node of each sweep point) is meaningful here, not the GB/s nor the optimum");
    if (!t.sweep_at)
        out.note("tiers: no CPU-less node among the allowed nodes (" + ccnuma::format_list(t.memory_nodes) +
                 "): the DRAM:far sweep needs one, so only the bandwidth matrix ran");
    for (const std::size_t n : tier_sizes(o, t)) {
        bandwidth_matrix(o, out, t, n);
        if (!t.sweep_at) continue;
        std::vector<unsigned> pus;
        auto points = sweep_points(o, out, t, n, pus);
        time_sweep(o, out, t, n, points, pus);
        affinity::release();
    }
    // The threads that were pinned to one PU each go back to the whole mask.
#pragma omp parallel
    affinity::release();
}

}  // namespace bench
