// Bandwidth kernels: triad (with likwid-bench as peer), stream and sum, the ccnuma containers
// against the hand-written OpenMP loop on raw arrays first-touched in parallel.

#include "kernels.hpp"
#include "peers.hpp"

#include <ccnuma/algorithm.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
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

double triad_expected(std::size_t i) { return value(i, 1) + value(i, 2) * value(i, 3); }

/// Raw arrays, default-initialized (no page touched), 64-byte aligned, first-touched in
/// parallel with the kernels' own schedule: the STREAM way.
struct raw_arrays {
    std::size_t n;
    raw_doubles a, b, c, d;
    explicit raw_arrays(std::size_t size)
        : n(size), a(make_raw_doubles(size)), b(make_raw_doubles(size)), c(make_raw_doubles(size)), d(make_raw_doubles(size)) {
        double *pa = a.get(), *pb = b.get(), *pc = c.get(), *pd = d.get();
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < size; ++i) {
            pa[i] = 0;
            pb[i] = value(i, 1);
            pc[i] = value(i, 2);
            pd[i] = value(i, 3);
        }
    }
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

/// Streaming against regular stores at one n, repetition by repetition: the two variants run
/// back to back in every round (harness.hpp), so each pair saw the same machine, and a pair's
/// ratio is free of the drift that moves whole medians on a shared machine.
struct store_duel {
    std::size_t n = 0;
    double median_gain = 0;  ///< median over the pairs of streaming GB/s / regular GB/s
    std::size_t wins = 0, pairs = 0;
    /// Streaming counts as faster when it won at least two thirds of the pairs and its median
    /// gain is above 1: one lucky median is not enough.
    bool streaming_faster() const { return 3 * wins >= 2 * pairs && pairs > 0 && median_gain > 1.0; }
};

store_duel duel(std::size_t n, const std::vector<double>& streaming, const std::vector<double>& regular) {
    store_duel d;
    d.n = n;
    std::vector<double> gains;
    for (std::size_t k = 0; k < std::min(streaming.size(), regular.size()); ++k) {
        gains.push_back(streaming[k] / regular[k]);
        d.wins += streaming[k] > regular[k];
    }
    d.pairs = gains.size();
    d.median_gain = gains.empty() ? 0 : summarize(gains).median;
    return d;
}

/// The calibration of stores::automatic for one team size: the smallest n from which streaming
/// stores are faster (store_duel) at that n and at every larger n measured. That destination
/// size is the threshold to give CCNUMA_STREAMING_THRESHOLD on this machine.
std::string calibration_note(unsigned t, const std::vector<store_duel>& list) {
    std::string evidence;
    for (const auto& d : list) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%sn = %zu: %.2fx, won %zu of %zu", evidence.empty() ? "" : "; ", d.n,
                      d.median_gain, d.wins, d.pairs);
        evidence += buf;
    }
    std::size_t from = 0;
    bool found = false;
    for (auto it = list.rbegin(); it != list.rend() && it->streaming_faster(); ++it) from = it->n, found = true;
    const std::string now = "automatic streams above " + std::to_string(ccnuma::streaming_threshold()) + " bytes now";
    const std::string head = "streaming stores against regular ones, " + thr(t) + ", paired repetitions (" + evidence + "): ";
    if (found)
        return head + "faster from n = " + std::to_string(from) + " on, so CCNUMA_STREAMING_THRESHOLD=" +
               std::to_string(from * sizeof(double) - 1) + " fits this machine (" + now + ")";
    return head + "not faster at the largest n measured, so keep CCNUMA_STREAMING_THRESHOLD above " +
           std::to_string(list.empty() ? 0 : list.back().n * sizeof(double)) + " bytes (" + now + ")";
}

}  // namespace

int triad_only(const options& o) {
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
    if (o.only == "raw") {
        triad_raw(r.a.get(), r.b.get(), r.c.get(), r.d.get(), n, o.sweeps);
        check_close("triad raw loop: a", r.a.get(), n, triad_expected);
    } else {
        triad_expr(e.a, e.b, e.c, e.d, o.sweeps);
        check_close("triad ccnuma::vector: a", e.a.data(), n, triad_expected);
    }
    std::printf("%s: %zu sweeps of n = %zu checked\n", o.only.c_str(), o.sweeps, n);
    return 0;
}

void triad(const options& o, report& out) {
    std::vector<std::string> likwid;
    if (o.peers) likwid = peers::likwid_kernels();
    const auto policy = o.container_policy();
    // Per team size and n: streaming against regular stores, for the calibration note below.
    std::map<unsigned, std::vector<store_duel>> duels;
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {1000, 100000, 10000000})) {
            need_memory("triad", 8, n);
            out.progress("triad: n = " + std::to_string(n) + ", " + thr(t));
            raw_arrays r(n);
            vec_arrays e(n, policy);
            // ccnuma::vector three times: its default (automatic) store mode, and each mode forced,
            // so the run shows where non-temporal stores pay on this machine (stores.hpp).
            const auto expr = [&](ccnuma::stores mode) {
                return [&, mode](std::size_t k) {
                    e.a.set_store_mode(mode);
                    triad_expr(e.a, e.b, e.c, e.d, k);
                };
            };
            std::vector<variant> v{timed("raw OpenMP loop", [&](std::size_t k) { triad_raw(r.a.get(), r.b.get(), r.c.get(), r.d.get(), n, k); }),
                                   timed("ccnuma::vector a = b + c * d", expr(ccnuma::stores::automatic)),
                                   timed("ccnuma::vector, regular stores", expr(ccnuma::stores::regular)),
                                   timed("ccnuma::vector, streaming stores", expr(ccnuma::stores::streaming))};
            constexpr std::size_t own = 4;  // variants of ours; the peers follow
            const bool auto_streams = ccnuma::streams(ccnuma::stores::automatic, n * sizeof(double), false, true);
            std::vector<std::size_t> peer_n(likwid.size(), n);
            for (std::size_t k = 0; k < likwid.size(); ++k) v.push_back(peers::likwid(likwid[k], n, t, &peer_n[k]));
            const auto m = measure(v, o.reps, o.min_time);
            check_close("triad raw OpenMP loop: a", r.a.get(), n, triad_expected);
            for (ccnuma::stores mode : {ccnuma::stores::regular, ccnuma::stores::streaming, ccnuma::stores::automatic}) {
                std::fill(e.a.begin(), e.a.end(), -1.0);  // each mode's own result is checked
                expr(mode)(1);
                check_close("triad ccnuma::vector (" + std::string(ccnuma::to_string(mode)) + " stores): a", e.a.data(), n,
                            triad_expected);
            }
            std::vector<result> rs;
            for (std::size_t k = 0; k < v.size(); ++k) {
                const double nn = static_cast<double>(k < own ? n : peer_n[k - own]);
                // 3 loads and 1 store of 8 bytes, 2 flops; write-allocate reads the stored line
                // once more, except with non-temporal stores (likwid's triad_mem_*, and ours
                // when streaming).
                const bool nt = k >= own ? v[k].name.find("_mem_") != std::string::npos : k == 3 || (k == 1 && auto_streams);
                rs.push_back(bandwidth("triad", v[k].name, n, t, m, k, 32 * nn, (nt ? 32 : 40) * nn, 2 * nn));
            }
            duels[t].push_back(duel(n, rs[3].values, rs[2].values));
            if (!likwid.empty()) {
                std::size_t best = own;
                for (std::size_t k = own + 1; k < rs.size(); ++k)
                    if (summarize(rs[k].values).median > summarize(rs[best].values).median) best = k;
                const double peak = summarize(rs[best].values).median;
                for (auto& r2 : rs) r2.counters["vs_best_peer"] = summarize(r2.values).median / peak;
                out.note("triad n = " + std::to_string(n) + ", " + thr(t) + ": best peer " + rs[best].variant + " at " +
                         std::to_string(peak) + " GB/s; vs_best_peer is each variant's median over it");
            }
            for (auto& r2 : rs) out.add(std::move(r2));
        }
    }
    for (const auto& [t, list] : duels) out.note(calibration_note(t, list));
}

// ---- stream --------------------------------------------------------------------------------

namespace {

constexpr double stream_scalar = 3.0;

// Each kernel reads a and b and writes c or d, so that every kernel gives the same result
// whatever ran before it (the harness interleaves them); the bytes are counted as STREAM does.
__attribute__((noinline)) void copy_raw(double* c, const double* a, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
        escape(c);
    }
}
__attribute__((noinline)) void scale_raw(double* d, const double* a, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) d[i] = stream_scalar * a[i];
        escape(d);
    }
}
__attribute__((noinline)) void add_raw(double* c, const double* a, const double* b, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
        escape(c);
    }
}
__attribute__((noinline)) void triad3_raw(double* d, const double* a, const double* b, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) d[i] = b[i] + stream_scalar * a[i];
        escape(d);
    }
}

double e_copy(std::size_t i) { return value(i, 1); }
double e_scale(std::size_t i) { return stream_scalar * value(i, 1); }
double e_add(std::size_t i) { return value(i, 1) + value(i, 2); }
double e_triad(std::size_t i) { return value(i, 2) + stream_scalar * value(i, 1); }

}  // namespace

void stream(const options& o, report& out) {
    const auto policy = o.container_policy();
    const char* names[] = {"Copy", "Scale", "Add", "Triad"};
    const double words[] = {2, 2, 3, 3}, flops[] = {0, 1, 1, 2};
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {10000000})) {
            need_memory("stream", 8, n);
            out.progress("stream: n = " + std::to_string(n) + ", " + thr(t));
            raw_arrays r(n);  // its b and c are STREAM's inputs a and b (values 1 and 2)
            cvec a(n, [](std::size_t i) { return value(i, 1); }, policy), b(n, [](std::size_t i) { return value(i, 2); }, policy),
                c(n, policy), d(n, policy);
            double *ra = r.b.get(), *rb = r.c.get(), *rc = r.a.get(), *rd = r.d.get();
            std::vector<std::function<void(std::size_t)>> raw{[&](std::size_t k) { copy_raw(rc, ra, n, k); },
                                                              [&](std::size_t k) { scale_raw(rd, ra, n, k); },
                                                              [&](std::size_t k) { add_raw(rc, ra, rb, n, k); },
                                                              [&](std::size_t k) { triad3_raw(rd, ra, rb, n, k); }};
            std::vector<std::function<void(std::size_t)>> vec{
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { c = a; escape(c.data()); } },
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { d = stream_scalar * a; escape(d.data()); } },
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { c = a + b; escape(c.data()); } },
                [&](std::size_t k) { for (std::size_t s = 0; s < k; ++s) { d = b + stream_scalar * a; escape(d.data()); } }};
            std::vector<variant> v;
            for (int k = 0; k < 4; ++k) v.push_back(timed(std::string(names[k]) + ", raw OpenMP loop", raw[static_cast<std::size_t>(k)]));
            for (int k = 0; k < 4; ++k) v.push_back(timed(std::string(names[k]) + ", ccnuma::vector", vec[static_cast<std::size_t>(k)]));
            const auto m = measure(v, o.reps, o.min_time);
            double (*expect[])(std::size_t) = {e_copy, e_scale, e_add, e_triad};
            for (std::size_t k = 0; k < 8; ++k) {
                const bool to_c = k % 4 == 0 || k % 4 == 2;
                v[k].run(1);
                check_close("stream " + v[k].name + ": ", k < 4 ? (to_c ? rc : rd) : (to_c ? c.data() : d.data()), n, expect[k % 4]);
            }
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < 8; ++k)
                out.add(bandwidth("stream", v[k].name, n, t, m, k, 8 * words[k % 4] * nn, 8 * (words[k % 4] + 1) * nn,
                                  flops[k % 4] * nn));
            // STREAM's own table: best rate from the minimum time, in MB/s (10^6 bytes).
            for (int w = 0; w < 2; ++w) {
                std::printf("\nSTREAM (%s), N = %zu, %s, %d repetitions\n", w ? "ccnuma::vector" : "raw OpenMP loop", n,
                            thr(t).c_str(), o.reps);
                std::printf("Function    Best Rate MB/s  Avg time     Min time     Max time\n");
                for (std::size_t k = 0; k < 4; ++k) {
                    const auto s = summarize(m.seconds[4 * static_cast<std::size_t>(w) + k]);
                    std::printf("%-12s%11.1f  %11.6f  %11.6f  %11.6f\n", (std::string(names[k]) + ":").c_str(),
                                8 * words[k] * nn / s.min / 1e6, s.mean, s.min, s.max);
                }
            }
            std::fflush(stdout);
        }
    }
}

// ---- sum -----------------------------------------------------------------------------------

namespace {

__attribute__((noinline)) double sum_raw(const double* a, std::size_t n, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (std::size_t i = 0; i < n; ++i) s += a[i];
        escape(&s);
    }
    return s;
}

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

}  // namespace

void sum(const options& o, report& out) {
    const auto policy = o.container_policy();
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {1000, 100000, 10000000})) {
            need_memory("sum", 6, n);
            out.progress("sum: n = " + std::to_string(n) + ", " + thr(t));
            raw_arrays r(n);
            cvec vb(n, [](std::size_t i) { return value(i, 1); }, policy);
            seg_t sb(n, [](std::size_t i) { return value(i, 1); });
            double expected = 0;
            for (std::size_t i = 0; i < n; ++i) expected += value(i, 1);
            double got[4] = {};
            std::vector<variant> v{
                timed("raw OpenMP reduction", [&](std::size_t k) { got[0] = sum_raw(r.b.get(), n, k); }),
                timed("ccnuma::sum(ccnuma::vector)", [&](std::size_t k) {
                    for (std::size_t s = 0; s < k; ++s) {
                        got[1] = ccnuma::sum(vb);
                        escape(&got[1]);
                    }
                }),
                timed("seg_array par::reduce", [&](std::size_t k) { got[2] = sum_seg_par(sb, k); }),
                timed("seg_array flat std::reduce", [&](std::size_t k) { got[3] = sum_seg_flat(sb, k); })};
            const auto m = measure(v, o.reps, o.min_time);
            for (std::size_t k = 0; k < 4; ++k)
                if (got[k] != expected) wrong("sum " + v[k].name + " = " + std::to_string(got[k]) + ", expected " + std::to_string(expected));
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < 4; ++k) out.add(bandwidth("sum", v[k].name, n, t, m, k, 8 * nn, 8 * nn, nn));
        }
    }
}

}  // namespace bench
