// Bandwidth kernels: triad (with likwid-bench as peer), stream and sum, the ccnuma containers
// against the hand-written OpenMP loop on raw arrays first-touched in parallel.

#include "baselines.hpp"
#include "kernels.hpp"
#include "paired.hpp"
#include "peers.hpp"
#include "stats.hpp"

#include <ccnuma/algorithm.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/team.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

namespace bench {

namespace {

using cvec = ccnuma::vector<double, ccnuma::policy>;

// Outside the timed lambdas and noinline: the compiler must not see through the benchmark
// loop, and bench/callgrind_triad.sh toggles collection on exactly these two functions.
__attribute__((noinline)) void triad_raw(double* a, const double* b, const double* c, const double* d, std::size_t n,
                                         std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + c[i] * d[i];
        escape(a);
    }
}

__attribute__((noinline)) void triad_expr(cvec& a, const cvec& b, const cvec& c, const cvec& d, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
        a = b + c * d;
        escape(a.data());
    }
}

// The same triad in one region, as likwid-bench runs its sweeps: one ccnuma::parallel of the
// team that placed a, each sweep a team assign (each thread its part, one barrier).
__attribute__((noinline)) void triad_team(cvec& a, const cvec& b, const cvec& c, const cvec& d, std::size_t sweeps) {
    ccnuma::parallel(a.policy(), [&](ccnuma::team& team) {
        for (std::size_t s = 0; s < sweeps; ++s) {
            team.assign(a, b + c * d);
            escape(a.data());
        }
    });
}

double triad_expected(std::size_t i) { return value(i, 1) + value(i, 2) * value(i, 3); }

/// One expert array: value(i, which), or 0 for which == 0, each page first written by the
/// thread whose static block holds it.
raw_doubles raw_values(std::size_t n, int which) {
    raw_doubles a = make_raw_doubles(n);
    double* p = a.get();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) p[i] = which == 0 ? 0.0 : value(i, which);
    return a;
}

/// Raw arrays, default-initialized (no page touched), page-aligned, first-touched in
/// parallel with the kernels' own schedule, one array per loop as ccnuma::vector constructs its
/// arrays: the expert's arrays and the library's are then placed by the same pattern of first
/// touches, and a difference between their loops is the loops'.
struct raw_arrays {
    std::size_t n;
    raw_doubles a, b, c, d;
    explicit raw_arrays(std::size_t size)
        : n(size), a(raw_values(size, 0)), b(raw_values(size, 1)), c(raw_values(size, 2)), d(raw_values(size, 3)) {}
};

struct vec_arrays {
    cvec a, b, c, d;
    vec_arrays(std::size_t n, const ccnuma::policy& p)
        : a(n, p), b(n, [](std::size_t i) { return value(i, 1); }, p), c(n, [](std::size_t i) { return value(i, 2); }, p),
          d(n, [](std::size_t i) { return value(i, 3); }, p) {}
};

std::string thr(unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); }

}  // namespace

namespace {

/// A row's part in the comparison: a baseline (the expert loops, likwid-bench) or a row of
/// ccnuma's, and how it stores (a reduction stores nothing).
struct row_role {
    bool baseline = false;
    std::optional<bool> streaming;
    bool peer = false;  ///< a baseline from likwid-bench, not one of the expert loops
    bool comparable = true;  ///< false: a peer that ran another N (peer_row), no baseline of any ratio
    /// A row that explains the others rather than competing: no baseline, and not one of
    /// ccnuma's calls, so it gets the expert loops' vs_best_peer and none of the rows' ratios.
    bool reference = false;
};

/// Each ccnuma row against the best baseline (expert loop or likwid-bench kernel, by median) of
/// its store mode, the best baseline of any stores and the best expert loop of its stores, as
/// paired ratios with their 95% interval (stats.hpp): counters vs_same_stores (rows with a store
/// mode), vs_best and vs_expert (with _lo and _hi where the interval is finite), and one note
/// per row with the verdicts.
void rate(std::vector<result>& rs, const std::vector<row_role>& roles, report& out, const std::string& where) {
    auto best_where = [&](auto accept) {
        std::optional<std::size_t> best;
        for (std::size_t k = 0; k < rs.size(); ++k)
            if (roles[k].baseline && roles[k].comparable && accept(k) &&
                (!best || summarize(rs[k].values).median > summarize(rs[*best].values).median))
                best = k;
        return best;
    };
    for (std::size_t k = 0; k < rs.size(); ++k)
        if (roles[k].streaming) rs[k].counters["streaming_stores"] = *roles[k].streaming ? 1 : 0;
    const auto all = best_where([](std::size_t) { return true; });
    if (!all) return;
    // The expert loops against likwid-bench's best kernel of the same stores: how good the
    // baselines themselves are.
    for (std::size_t k = 0; k < rs.size(); ++k) {
        if (!(roles[k].baseline || roles[k].reference) || roles[k].peer) continue;
        const auto peer = best_where([&](std::size_t b) { return roles[b].peer && roles[b].streaming == roles[k].streaming; });
        if (!peer) continue;
        const auto iv = pair_with(rs[k], rs[*peer], "vs_best_peer");
        out.note(where + ": " + rs[k].variant + " over " + rs[*peer].variant + ", the best likwid-bench kernel" +
                 (roles[k].streaming ? " of its stores: " : ": ") +
                 stats_paired::to_string(iv) + ", " + stats_paired::to_string(stats_paired::judge(iv)));
    }
    for (std::size_t k = 0; k < rs.size(); ++k) {
        if (roles[k].baseline || roles[k].reference) continue;
        const auto same = roles[k].streaming
                              ? best_where([&](std::size_t b) { return roles[b].streaming == roles[k].streaming; })
                              : all;
        std::string line = where + ": " + rs[k].variant;
        if (roles[k].streaming) line += std::string(" (") + (*roles[k].streaming ? "streaming" : "regular") + " stores)";
        const auto expert = best_where([&](std::size_t b) {
            return !roles[b].peer && (!roles[k].streaming || roles[b].streaming == roles[k].streaming);
        });
        // A row without a store mode (a reduction stores nothing) has no "of its stores": its
        // vs_same_stores would be vs_best again, so it has none.
        const bool stores = roles[k].streaming.has_value();
        for (const auto& [label, base] :
             {std::pair{"vs_same_stores", stores ? same : std::nullopt}, std::pair{"vs_best", all}, std::pair{"vs_expert", expert}}) {
            if (!base) continue;
            const auto iv = pair_with(rs[k], rs[*base], label);
            const std::string what = std::string(label) == "vs_best"     ? "over the best baseline, "
                                     : std::string(label) == "vs_expert" ? (stores ? "over the best expert loop of its stores, "
                                                                                   : "over the best expert loop, ")
                                                                         : "over the best baseline of its stores, ";
            line += "; " + what +
                    rs[*base].variant + ": " + stats_paired::to_string(iv) + ", " + stats_paired::to_string(stats_paired::judge(iv));
        }
        out.note(line);
    }
}

/// A likwid-bench row, built with the N it ran (peers::ran::n, from its "Size
/// (Byte)"): likwid-bench rounds each thread's share to a multiple of its loop's stride, so a
/// row can say 992 beside ccnuma's 1000. Within 1% of `asked` it is the same experiment and a
/// baseline of the rows at `asked`; beyond (16 for 31) it is shown with its N and the note
/// that it is no baseline, which the return value says (row_role::comparable). It times its
/// iterations inside one parallel region: no fork/join flag.
bool peer_row(result& r, std::size_t asked, report& out, const std::string& where) {
    r.forks_per_sweep = false;
    r.n_asked = asked;
    const double off = std::fabs(static_cast<double>(r.n) - static_cast<double>(asked));
    if (off <= 0.01 * static_cast<double>(asked)) return true;
    out.note(where + ": " + r.variant + " ran N = " + std::to_string(r.n) + ", not " + std::to_string(asked) +
             " (likwid-bench rounds each thread's share to a multiple of its loop's stride): shown with its N, no baseline "
             "of the rows at N = " + std::to_string(asked));
    return false;
}

/// Where likwid-bench's threads ran (peers::ran::hwthreads), one note for a group of rows when
/// every peer ran on the same hardware threads, else one per peer: likwid-bench -W N: places
/// thread t on the t-th CPU of its mask, whatever binding ccnuma's rows ran under (the context's
/// binding line), which on a multi-socket machine can put them on other sockets. rs[own + k] is
/// the row of ran[k].
void note_peer_threads(const std::vector<result>& rs, std::size_t own, const std::vector<peers::ran>& ran, unsigned t, report& out,
                       const std::string& where) {
    const auto text = [](const std::string& h) { return h.empty() ? std::string("hardware threads it did not print") : "hwthreads " + h; };
    const std::string why = " (likwid-bench -W N: thread t on the t-th CPU of its mask; the other rows' threads: the binding line above)";
    if (ran.empty()) return;
    const bool same = std::all_of(ran.begin(), ran.end(), [&](const peers::ran& r) { return r.hwthreads == ran.front().hwthreads; });
    if (same) {
        out.note(where + ": likwid-bench ran its " + thr(t) + " on " + text(ran.front().hwthreads) + why);
        return;
    }
    for (std::size_t k = 0; k < ran.size(); ++k) out.note(where + ": " + rs[own + k].variant + " ran its " + thr(t) + " on " + text(ran[k].hwthreads) + why);
}

/// Streaming against regular stores at one n: the paired ratio of ccnuma::vector's two forced
/// modes, which the harness ran back to back in every round.
struct store_duel {
    std::size_t n = 0;
    stats_paired::interval ratio;
    bool streaming_faster() const { return stats_paired::judge(ratio) == stats_paired::verdict::higher; }
};

/// The calibration of stores::automatic for one team size: the smallest n from which streaming
/// stores are faster with 95% confidence (at least 9 pairs) at that n and at every larger n
/// measured. Without such evidence it recommends nothing. The duels come in the order --n named
/// the sizes; "every larger n" is by size, so they are ordered by n first.
std::string calibration_note(unsigned t, std::vector<store_duel> list) {
    std::stable_sort(list.begin(), list.end(), [](const store_duel& x, const store_duel& y) { return x.n < y.n; });
    std::string evidence;
    for (const auto& d : list)
        evidence += std::string(evidence.empty() ? "" : "; ") + "n = " + std::to_string(d.n) + ": " + stats_paired::to_string(d.ratio) +
                    ", " + stats_paired::to_string(stats_paired::judge(d.ratio));
    std::size_t from = 0;
    bool found = false;
    for (auto it = list.rbegin(); it != list.rend() && it->streaming_faster(); ++it) from = it->n, found = true;
    const std::string now = "automatic streams above " + std::to_string(ccnuma::streaming_threshold()) + " bytes now";
    const std::string head = "streaming over regular stores (ccnuma::vector), " + thr(t) + " (" + evidence + "): ";
    if (found)
        // The triad moves 32 bytes per element (a stored; b, c and d read), the bytes automatic compares.
        return head + "faster with 95% confidence from n = " + std::to_string(from) + " on, so CCNUMA_STREAMING_THRESHOLD=" +
               std::to_string(from * 4 * sizeof(double) - 1) + " fits this machine (" + now + ")";
    return head + "no n from which streaming is measurably faster up to the largest n, so this run recommends no threshold (" +
           now + ")";
}

}  // namespace

int triad_only(const options& o, report& out) {
    const std::size_t n = o.sizes.empty() ? 1000000 : o.sizes.front();
    need_memory("triad", 8, n);
    // Both variants' arrays, and the one-time read of the streaming threshold (per process, not
    // per sweep), whichever runs: the two processes that callgrind_triad.sh compares then have
    // the same heap, and libgomp's team allocation in every region (a memalign from that heap)
    // costs the same in both. With only its own arrays, the expression's process had the
    // topology snapshot's freed memory in its heap, and memalign cost it about 500 more
    // instructions per region.
    raw_arrays r(n);
    vec_arrays e(n, o.container_policy());
    (void)ccnuma::streaming_threshold();
    const double c0 = cpu_seconds_now();
    const auto t0 = std::chrono::steady_clock::now();
    if (o.only == "raw") triad_raw(r.a.get(), r.b.get(), r.c.get(), r.d.get(), n, o.sweeps);
    else triad_expr(e.a, e.b, e.c, e.d, o.sweeps);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds_now() - c0;
    if (o.only == "raw") check_close("triad raw loop: a", r.a.get(), n, triad_expected);
    else check_close("triad ccnuma::vector: a", e.a.data(), n, triad_expected);
    std::printf("%s: %zu sweeps of n = %zu checked\n", o.only.c_str(), o.sweeps, n);
    if (!o.json.empty() || !o.csv.empty()) {
        // One repetition: the sweeps as a whole, by the wall clock, as the harness would time them.
        measurement m;
        m.batch = o.sweeps;
        m.seconds = {{wall / static_cast<double>(o.sweeps)}};
        m.cpu_seconds = {{cpu / static_cast<double>(o.sweeps)}};
        const bool streams = o.only == "expr" && automatic_streams(n, 3);
        const auto nn = static_cast<double>(n);
        out.add(bandwidth("triad", o.only == "raw" ? "raw loop (omp parallel for), --only" : "ccnuma::vector a = b + c * d, --only",
                          n, static_cast<unsigned>(omp_get_max_threads()), m, 0, 32 * nn, (streams ? 32 : 40) * nn, 2 * nn));
        out.note("triad --only " + o.only + ": " + std::to_string(o.sweeps) +
                 " sweeps timed as a whole, one repetition (the run is for callgrind, not for timing)");
    }
    return 0;
}

void triad(const options& o, report& out) {
    std::vector<std::string> likwid;
    if (o.peers) likwid = peers::likwid_kernels("triad", o.peer_timeout.value_or(0));
    const auto policy = o.container_policy();
    std::map<unsigned, std::vector<store_duel>> duels;
    const auto sizes = sizes_or(o, {1000, 100000, 10000000});
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes) {
            const bool fresh = fresh_arrays(o, 32.0 * static_cast<double>(n));
            need_memory("triad", fresh ? 12 : 8, n);  // a new set is made before the old one goes
            out.progress("triad: n = " + std::to_string(n) + ", " + thr(t));
            raw_arrays r(n);
            vec_arrays e(n, policy);
            const auto expr = [&](ccnuma::stores mode) {
                return [&, mode](std::size_t k) {
                    e.a.set_store_mode(mode);
                    triad_expr(e.a, e.b, e.c, e.d, k);
                };
            };
            const auto hand = [&](expert::stores s) {
                return [&, s](std::size_t k) { expert::triad(r.a.get(), r.b.get(), r.c.get(), r.d.get(), n, k, s); };
            };
            const bool auto_streams = automatic_streams(n, 3);
            std::vector<variant> v{timed("expert loop, regular stores", hand(expert::stores::regular)),
                                   timed("expert loop, streaming stores", hand(expert::stores::streaming)),
                                   timed("ccnuma::vector a = b + c * d", expr(ccnuma::stores::automatic)),
                                   timed("ccnuma::vector, regular stores", expr(ccnuma::stores::regular)),
                                   timed("ccnuma::vector, streaming stores", expr(ccnuma::stores::streaming)),
                                   timed("ccnuma::team::assign, one region", [&](std::size_t k) {
                                       e.a.set_store_mode(ccnuma::stores::automatic);
                                       triad_team(e.a, e.b, e.c, e.d, k);
                                   })};
            std::vector<row_role> roles{{true, false},  {true, true},  {false, auto_streams}, {false, false},
                                        {false, true}, {false, auto_streams}};
            constexpr std::size_t own = 6, team_row = 5;  // variants of ours; the peers follow
            if (fresh) {  // likwid-bench allocates anew in every call anyway
                for (std::size_t k = 0; k < 2; ++k) v[k].fresh = [&] { r = raw_arrays(n); };
                for (std::size_t k = 2; k < own; ++k) v[k].fresh = [&] { e = vec_arrays(n, policy); };
            }
            std::vector<peers::ran> peer_n(likwid.size(), {n, {}});
            for (std::size_t k = 0; k < likwid.size(); ++k) {
                v.push_back(peers::likwid(likwid[k], n, t, 4, &peer_n[k], o.peer_timeout.value_or(0)));
                roles.push_back({true, peers::streams(likwid[k]), true});
            }
            const auto m = measure(v, o.reps, o.min_time, 0, start_state::own_sweep);
            for (expert::stores s : {expert::stores::regular, expert::stores::streaming}) {
                std::fill(r.a.get(), r.a.get() + n, -1.0);
                hand(s)(1);
                check_close(std::string("triad expert loop (") + expert::to_string(s) + " stores): a", r.a.get(), n, triad_expected);
            }
            for (ccnuma::stores mode : {ccnuma::stores::regular, ccnuma::stores::streaming, ccnuma::stores::automatic}) {
                std::fill(e.a.begin(), e.a.end(), -1.0);  // each mode's own result is checked
                expr(mode)(1);
                check_close("triad ccnuma::vector (" + std::string(ccnuma::to_string(mode)) + " stores): a", e.a.data(), n,
                            triad_expected);
            }
            std::fill(e.a.begin(), e.a.end(), -1.0);
            v[team_row].run(1);
            check_close("triad ccnuma::team::assign: a", e.a.data(), n, triad_expected);
            std::vector<result> rs;
            const std::string where = "triad n = " + std::to_string(n) + ", " + thr(t);
            for (std::size_t k = 0; k < v.size(); ++k) {
                const std::size_t ran = k < own ? n : peer_n[k - own].n;
                const double nn = static_cast<double>(ran);
                // 3 loads and 1 store of 8 bytes, 2 flops; write-allocate reads the stored line
                // once more, except with non-temporal stores.
                rs.push_back(bandwidth("triad", v[k].name, ran, t, m, k, 32 * nn, (*roles[k].streaming ? 32 : 40) * nn, 2 * nn));
                if (k == team_row) rs.back().forks_per_sweep = false;
                if (k >= own) roles[k].comparable = peer_row(rs.back(), n, out, where);
            }
            note_peer_threads(rs, own, peer_n, t, out, where);
            duels[t].push_back({n, stats_paired::paired_ratio(rs[4].values, rs[3].values)});
            rate(rs, roles, out, where);
            for (auto& r2 : rs) out.add(std::move(r2));
        }
    }
    out.note(arrays_note(o, "triad", sizes, 32));
    if (!likwid.empty())
        out.note("likwid-bench times its iterations inside one parallel region; every other row forks a team per sweep, which "
                 "dominates at small n (rows flagged fork/join-bound)");
    for (const auto& [t, list] : duels) out.note(calibration_note(t, list));
}

// ---- stream --------------------------------------------------------------------------------

namespace {

constexpr double stream_scalar = 3.0;

double e_copy(std::size_t i) { return value(i, 1); }
double e_scale(std::size_t i) { return stream_scalar * value(i, 1); }
double e_add(std::size_t i) { return value(i, 1) + value(i, 2); }
double e_triad(std::size_t i) { return value(i, 2) + stream_scalar * value(i, 1); }

}  // namespace

// Over 80 lines: one experiment read top to bottom, as the other kernels: the variants' lambdas
// share the arrays they capture, then each result is checked against STREAM's own formula.
void stream(const options& o, report& out) {
    const auto policy = o.container_policy();
    const char* names[] = {"Copy", "Scale", "Add", "Triad"};
    const double words[] = {2, 2, 3, 3}, flops[] = {0, 1, 1, 2};
    // likwid-bench's peers of STREAM's kernels: copy for Copy, its "stream" (a = b * s + c) for
    // Triad; it has no scale or add of doubles.
    std::vector<std::string> peer_copy, peer_triad;
    if (o.peers) peer_copy = peers::likwid_kernels("copy", o.peer_timeout.value_or(0)), peer_triad = peers::likwid_kernels("stream", o.peer_timeout.value_or(0));
    const auto sizes = sizes_or(o, {10000000});
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes) {
            // One variant's set of arrays is four, as the triad's (the expert's and the
            // vector's each hold a, b, c, d).
            const bool fresh = fresh_arrays(o, 32.0 * static_cast<double>(n));
            need_memory("stream", fresh ? 12 : 8, n);  // a new set is made before the old one goes
            out.progress("stream: n = " + std::to_string(n) + ", " + thr(t));
            raw_arrays r(n);  // its b and c are STREAM's inputs a and b (values 1 and 2)
            cvec a(n, [](std::size_t i) { return value(i, 1); }, policy), b(n, [](std::size_t i) { return value(i, 2); }, policy),
                c(n, policy), d(n, policy);
            // The expert's arrays by name, read at each call: --arrays fresh replaces r.
            const auto ra = [&r] { return r.b.get(); };
            const auto rb = [&r] { return r.c.get(); };
            const auto rc = [&r] { return r.a.get(); };
            const auto rd = [&r] { return r.d.get(); };
            // Each kernel reads a and b and writes c or d, so that every kernel gives the same
            // result whatever ran before it (the harness interleaves them).
            auto hand = [&](int kernel, expert::stores s) -> std::function<void(std::size_t)> {
                switch (kernel) {
                    case 0: return [=](std::size_t k) { expert::copy(rc(), ra(), n, k, s); };
                    case 1: return [=](std::size_t k) { expert::scale(rd(), ra(), stream_scalar, n, k, s); };
                    case 2: return [=](std::size_t k) { expert::add(rc(), ra(), rb(), n, k, s); };
                    default: return [=](std::size_t k) { expert::triad3(rd(), ra(), rb(), stream_scalar, n, k, s); };
                }
            };
            std::vector<std::function<void(std::size_t)>> vec{
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { c = a; escape(c.data()); } },
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { d = stream_scalar * a; escape(d.data()); } },
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { c = a + b; escape(c.data()); } },
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { d = b + stream_scalar * a; escape(d.data()); } }};
            // Per STREAM kernel: expert regular, expert streaming, ccnuma::vector, then peers.
            std::vector<variant> v;
            std::vector<row_role> roles;
            std::vector<int> which;  // the STREAM kernel of each variant
            std::vector<double> elements;
            std::vector<std::vector<peers::ran>> peer_n(4);
            for (int k = 0; k < 4; ++k) {
                const auto idx = static_cast<std::size_t>(k);
                v.push_back(timed(std::string(names[k]) + ", expert loop, regular stores", hand(k, expert::stores::regular)));
                roles.push_back({true, false});
                v.push_back(timed(std::string(names[k]) + ", expert loop, streaming stores", hand(k, expert::stores::streaming)));
                roles.push_back({true, true});
                v.push_back(timed(std::string(names[k]) + ", ccnuma::vector", vec[idx]));
                // copy and scale read one array, add and triad two (STREAM's kernels).
                roles.push_back({false, automatic_streams(n, k < 2 ? 1u : 2u)});
                if (fresh) {  // likwid-bench allocates anew in every call anyway
                    v[v.size() - 3].fresh = v[v.size() - 2].fresh = [&] { r = raw_arrays(n); };
                    v.back().fresh = [&] {
                        a = cvec(n, [](std::size_t i) { return value(i, 1); }, policy);
                        b = cvec(n, [](std::size_t i) { return value(i, 2); }, policy);
                        c = cvec(n, policy);
                        d = cvec(n, policy);
                    };
                }
                const auto& peer = k == 0 ? peer_copy : k == 3 ? peer_triad : std::vector<std::string>{};
                peer_n[idx].assign(peer.size(), {n, {}});
                for (std::size_t p = 0; p < peer.size(); ++p) {
                    v.push_back(peers::likwid(peer[p], n, t, k == 0 ? 2 : 3, &peer_n[idx][p], o.peer_timeout.value_or(0)));
                    roles.push_back({true, peers::streams(peer[p]), true});
                }
                for (std::size_t p = 0; p < 3 + peer.size(); ++p) which.push_back(k);
            }
            const auto m = measure(v, o.reps, o.min_time, 0, start_state::own_sweep);
            double (*expect[])(std::size_t) = {e_copy, e_scale, e_add, e_triad};
            for (int k = 0; k < 4; ++k) {
                const bool to_c = k == 0 || k == 2;
                for (expert::stores s : {expert::stores::regular, expert::stores::streaming}) {
                    double* out_array = to_c ? rc() : rd();
                    std::fill(out_array, out_array + n, -1.0);
                    hand(k, s)(1);
                    check_close("stream " + std::string(names[k]) + " expert loop (" + expert::to_string(s) + " stores): ",
                                out_array, n, expect[k]);
                }
                std::fill((to_c ? c : d).begin(), (to_c ? c : d).end(), -1.0);
                vec[static_cast<std::size_t>(k)](1);
                check_close("stream " + std::string(names[k]) + " ccnuma::vector: ", to_c ? c.data() : d.data(), n, expect[k]);
            }
            for (int k = 0; k < 4; ++k) {
                std::vector<result> rs;
                std::vector<row_role> rr;
                std::size_t peer_index = 0;
                const std::string where = "stream " + std::string(names[k]) + " n = " + std::to_string(n) + ", " + thr(t);
                for (std::size_t i = 0; i < v.size(); ++i) {
                    if (which[i] != k) continue;
                    const bool peer = roles[i].peer;
                    const std::size_t ran = peer ? peer_n[static_cast<std::size_t>(k)][peer_index++].n : n;
                    const double nn = static_cast<double>(ran);
                    const double w = words[k];
                    rs.push_back(bandwidth("stream", v[i].name, ran, t, m, i, 8 * w * nn, 8 * (w + (*roles[i].streaming ? 0 : 1)) * nn,
                                           flops[k] * nn));
                    rr.push_back(roles[i]);
                    if (peer) rr.back().comparable = peer_row(rs.back(), n, out, where);
                }
                note_peer_threads(rs, 3, peer_n[static_cast<std::size_t>(k)], t, out, where);
                rate(rs, rr, out, where);
                for (auto& r2 : rs) out.add(std::move(r2));
            }
            // STREAM's own table: best rate from the minimum time, in MB/s (10^6 bytes).
            for (int w = 0; w < 3; ++w) {
                std::printf("\nSTREAM (%s), N = %zu, %s, %d repetitions\n",
                            w == 0 ? "expert loop, regular stores" : w == 1 ? "expert loop, streaming stores" : "ccnuma::vector", n,
                            thr(t).c_str(), o.reps);
                std::printf("Function    Best Rate MB/s  Avg time     Min time     Max time\n");
                std::size_t seen[4] = {};
                for (std::size_t i = 0; i < v.size(); ++i) {
                    const auto k = static_cast<std::size_t>(which[i]);
                    if (seen[k]++ != static_cast<std::size_t>(w)) continue;
                    const auto s = summarize(m.seconds[i]);
                    std::printf("%-12s%11.1f  %11.6f  %11.6f  %11.6f\n", (std::string(names[k]) + ":").c_str(),
                                8 * words[k] * static_cast<double>(n) / s.min / 1e6, s.mean, s.min, s.max);
                }
            }
            std::fflush(stdout);
        }
    }
    out.note(arrays_note(o, "stream", sizes, 32));
}

// ---- sum -----------------------------------------------------------------------------------

namespace {

using seg_t = ccnuma::seg_array<double>;

__attribute__((noinline)) double sum_seg_par(const seg_t& a, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = ccnuma::par::reduce(a.begin(), a.end(), 0.0);
        escape(&s);
    }
    return s;
}

// std::reduce over the flat iterator, each thread on its own segment's range: what the
// segment test in every ++ costs (the seg_array claim of the poster).
__attribute__((noinline)) double sum_seg_flat(const seg_t& a, std::size_t sweeps) {
    const auto segments = a.segment_count();
    std::vector<std::size_t> starts{0};
    for (std::size_t s = 0; s < segments; ++s) starts.push_back(starts.back() + a.segment_size(s));
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        std::vector<ccnuma::padded<double>> partial(segments);
#pragma omp parallel for schedule(static)
        for (std::size_t g = 0; g < segments; ++g)
            partial[g].value = std::reduce(a.begin() + static_cast<std::ptrdiff_t>(starts[g]),
                                           a.begin() + static_cast<std::ptrdiff_t>(starts[g + 1]), 0.0);
        s = 0;
        for (const auto& p : partial) s += p.value;
        escape(&s);
    }
    return s;
}

// ccnuma's summation kernel (ccnuma::reduce over each thread's static block, lane_sum) in
// likwid-bench's structure: one region for all the sweeps, each thread summing its own block
// sweep after sweep with no reduction across the team, so nothing synchronizes the threads
// between sweeps (likwid-bench's sum kernels combine no result). What a team's sum would cost
// without the reduction every call of ccnuma::sum (and of the expert loops) must do. The last
// sweep's parts are added in thread order afterwards, for the check.
__attribute__((noinline)) double sum_unreduced(const cvec& a, std::size_t sweeps) {
    const double* p = a.data();
    const std::size_t n = a.size();
    std::vector<ccnuma::padded<double>> parts(static_cast<std::size_t>(std::max(1, omp_get_max_threads())));
#pragma omp parallel
    {
        const auto t = static_cast<unsigned>(omp_get_thread_num()), threads = static_cast<unsigned>(omp_get_num_threads());
        std::size_t lo = 0, hi = 0;
        expert::static_block(n, t, threads, lo, hi);
        double s = 0;
        for (std::size_t k = 0; k < sweeps; ++k) {
            s = ccnuma::reduce(p + lo, p + hi, 0.0);
            escape(&s);
        }
        if (t < parts.size()) parts[t].value = s;
    }
    double s = 0;
    for (const auto& part : parts) s += part.value;
    return s;
}

// ccnuma::sum in the one-region structure of the expert's orphaned reduction: one
// ccnuma::parallel region for all the sweeps, each sweep a team reduction (team.hpp), one
// barrier per sweep against the expert's two, in the team that placed the vector. Rank 0's
// result is the row's.
__attribute__((noinline)) double sum_team(const cvec& a, std::size_t sweeps) {
    double s = 0;
    ccnuma::parallel(a.policy(), [&](ccnuma::team& team) {
        double mine = 0;
        for (std::size_t k = 0; k < sweeps; ++k) {
            mine = team.sum(a);
            escape(&mine);
        }
        if (team.rank() == 0) s = mine;
    });
    return s;
}

// par::reduce in the same one-region structure: one ccnuma::parallel region of the seg_array's
// team for all the sweeps, each sweep a team reduce, each thread folding its own segment.
__attribute__((noinline)) double sum_seg_team(const seg_t& a, std::size_t sweeps) {
    double s = 0;
    ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) {
        double mine = 0;
        for (std::size_t k = 0; k < sweeps; ++k) {
            mine = team.reduce(a.begin(), a.end(), 0.0);
            escape(&mine);
        }
        if (team.rank() == 0) s = mine;
    });
    return s;
}

}  // namespace

void sum(const options& o, report& out) {
    const auto policy = o.container_policy();
    std::vector<std::string> likwid;
    if (o.peers) likwid = peers::likwid_kernels("sum", o.peer_timeout.value_or(0));
    const auto sizes = sizes_or(o, {1000, 100000, 10000000});
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes) {
            // The expert's array, the vector and the seg_array, one each; a variant's new one is
            // made before its old one goes.
            const bool fresh = fresh_arrays(o, 8.0 * static_cast<double>(n));
            need_memory("sum", fresh ? 4 : 3, n);
            out.progress("sum: n = " + std::to_string(n) + ", " + thr(t));
            raw_doubles rb = raw_values(n, 1);
            cvec vb(n, [](std::size_t i) { return value(i, 1); }, policy);
            seg_t sb(n, [](std::size_t i) { return value(i, 1); });
            double expected = 0;
            for (std::size_t i = 0; i < n; ++i) expected += value(i, 1);
            std::vector<double> got(9, 0.0);
            std::vector<variant> v{
                timed("expert omp simd reduction", [&](std::size_t k) { got[0] = expert::sum_simd(rb.get(), n, k); }),
                timed("expert 4-accumulator vector sum", [&](std::size_t k) { got[1] = expert::sum_unrolled(rb.get(), n, k); }),
                timed("expert one region, omp for reduction", [&](std::size_t k) { got[2] = expert::sum_one_region(rb.get(), n, k); }),
                timed("ccnuma::sum(ccnuma::vector)", [&](std::size_t k) {
                    for (std::size_t s = 0; s < k; ++s) {
                        got[3] = ccnuma::sum(vb);
                        escape(&got[3]);
                    }
                }),
                timed("ccnuma::team::sum, one region", [&](std::size_t k) { got[4] = sum_team(vb, k); }),
                timed("seg_array par::reduce", [&](std::size_t k) { got[5] = sum_seg_par(sb, k); }),
                timed("seg_array team::reduce, one region", [&](std::size_t k) { got[6] = sum_seg_team(sb, k); }),
                timed("seg_array flat std::reduce", [&](std::size_t k) { got[7] = sum_seg_flat(sb, k); }),
                timed("lane_sum per thread, no team reduction", [&](std::size_t k) { got[8] = sum_unreduced(vb, k); })};
            // The rows that run all their sweeps in one region: no fork in their figure.
            constexpr std::size_t one_region_expert = 2, team_row = 4, seg_team_row = 6, reference_row = 8;
            std::vector<row_role> roles{{true, {}},  {true, {}},  {true, {}},  {false, {}}, {false, {}},
                                        {false, {}}, {false, {}}, {false, {}}, {}};
            roles[reference_row].reference = true;
            constexpr std::size_t own = 9;
            if (fresh) {
                for (std::size_t k = 0; k < 3; ++k) v[k].fresh = [&] { rb = raw_values(n, 1); };
                for (std::size_t k : {std::size_t{3}, team_row, reference_row})
                    v[k].fresh = [&] { vb = cvec(n, [](std::size_t i) { return value(i, 1); }, policy); };
                for (std::size_t k = 5; k < 8; ++k) v[k].fresh = [&] { sb = seg_t(n, [](std::size_t i) { return value(i, 1); }); };
            }
            std::vector<peers::ran> peer_n(likwid.size(), {n, {}});
            for (std::size_t k = 0; k < likwid.size(); ++k) {
                v.push_back(peers::likwid(likwid[k], n, t, 1, &peer_n[k], o.peer_timeout.value_or(0)));
                roles.push_back({true, {}, true});
            }
            const auto m = measure(v, o.reps, o.min_time, 0, start_state::own_sweep);
            for (std::size_t k = 0; k < own; ++k)
                if (got[k] != expected) wrong("sum " + v[k].name + " = " + std::to_string(got[k]) + ", expected " + std::to_string(expected));
            std::vector<result> rs;
            const std::string where = "sum n = " + std::to_string(n) + ", " + thr(t);
            for (std::size_t k = 0; k < v.size(); ++k) {
                const std::size_t ran = k < own ? n : peer_n[k - own].n;
                const double nn = static_cast<double>(ran);
                rs.push_back(bandwidth("sum", v[k].name, ran, t, m, k, 8 * nn, 8 * nn, nn));
                if (k == one_region_expert || k == team_row || k == seg_team_row || k == reference_row)
                    rs.back().forks_per_sweep = false;
                if (k >= own) roles[k].comparable = peer_row(rs.back(), n, out, where);
            }
            note_peer_threads(rs, own, peer_n, t, out, where);
            rate(rs, roles, out, where);
            for (auto& r2 : rs) out.add(std::move(r2));
        }
    }
    out.note(arrays_note(o, "sum", sizes, 8));
}

}  // namespace bench
