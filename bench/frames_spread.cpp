// What besides placement makes one array stream faster than another (issue 35, item 3): K
// arrays of the same kind, the same policy and the same node, summed by the same loop, their
// repetitions interleaved. Any spread between them is not placement's. Each array's median
// bandwidth is printed with its 95% interval and the number of runs of consecutive physical
// frames behind it (ccnuma::physical_runs; root only), with the rank correlation of the two.
//
//   frames_spread [--kind ccnuma|std|mixed] [--n ELEMENTS] [--copies K] [--reps R]
//
// ccnuma: ccnuma::vector<double>(n, 1.0), first touch by the team; std: std::vector<double>(n,
// 1.0), written by the master thread; mixed: ccnuma's first touch and on_node (mbind to node 0,
// the placement table's slowest variant) in turn, on a machine whose one node is node 0.

#include "arguments.hpp"
#include "stats.hpp"

#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

const bench::command_line cli{"frames_spread", "frames_spread [--kind ccnuma|std|mixed] [--n ELEMENTS] [--copies K] [--reps R]"};

// The library's sum (lane_sum on each thread's static block), the same code over every copy.
double sum(const double* a, std::size_t n) { return ccnuma::sum(ccnuma::view(a, n)); }

// Spearman's rank correlation (no ties expected in bandwidths; ties in runs get mean ranks).
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
    auto ranks = [](const std::vector<double>& v) {
        std::vector<std::size_t> order(v.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
        std::vector<double> r(v.size());
        for (std::size_t i = 0; i < order.size();) {
            std::size_t j = i;
            while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
            for (std::size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
            i = j + 1;
        }
        return r;
    };
    const auto rx = ranks(x), ry = ranks(y);
    const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / static_cast<double>(rx.size());
    const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / static_cast<double>(ry.size());
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < rx.size(); ++i) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string kind = "ccnuma";
    std::size_t n = 10000000, copies = 9, reps = 11;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) cli.fail("option " + a + " needs a value");
        const char* v = argv[++i];
        if (a == "--kind") {
            kind = v;
            if (kind != "ccnuma" && kind != "std" && kind != "mixed")
                cli.fail("bad --kind '" + kind + "' (expected ccnuma, std or mixed)");
        } else if (a == "--n") {
            n = cli.count(v, "--n", 1000, std::size_t{1} << 34);
        } else if (a == "--copies") {
            copies = cli.count(v, "--copies", 2, 64);
        } else if (a == "--reps") {
            reps = cli.count(v, "--reps", 5, 1000);
        } else {
            cli.fail("unknown option " + a);
        }
    }
    try {
        std::vector<std::unique_ptr<ccnuma::vector<double>>> cv;
        std::vector<std::unique_ptr<ccnuma::vector<double, ccnuma::on_node>>> bound;
        std::vector<std::vector<double>> sv;
        std::vector<const double*> p;
        for (std::size_t k = 0; k < copies; ++k) {
            if (kind == "mixed" && k % 2 == 1) {
                bound.push_back(std::make_unique<ccnuma::vector<double, ccnuma::on_node>>(n, 1.0, ccnuma::on_node{0}));
                p.push_back(bound.back()->data());
            } else if (kind != "std") {
                cv.push_back(std::make_unique<ccnuma::vector<double>>(n, 1.0));
                p.push_back(cv.back()->data());
            } else {
                sv.emplace_back(n, 1.0);
                p.push_back(sv.back().data());
            }
        }
        const auto expected = static_cast<double>(n);
        std::vector<std::vector<double>> seconds(copies);
        for (std::size_t r = 0; r < reps; ++r)
            for (std::size_t k = 0; k < copies; ++k) {
                const auto t0 = std::chrono::steady_clock::now();
                double s = 0;
                for (int sweep = 0; sweep < 3; ++sweep) s += sum(p[k], n);
                const auto t1 = std::chrono::steady_clock::now();
                if (s != 3 * expected) {
                    std::fprintf(stderr, "frames_spread: copy %zu summed to %.17g, expected %.17g\n", k, s, 3 * expected);
                    return 1;
                }
                seconds[k].push_back(std::chrono::duration<double>(t1 - t0).count() / 3);
            }
        const bool frames = ccnuma::support().pfn_visible;
        std::printf("# %zu copies of %s, n = %zu (%.0f MB each), %d threads, %zu interleaved repetitions of 3 sweeps\n", copies,
                    kind == "ccnuma" ? "ccnuma::vector<double>(n, 1.0)"
                    : kind == "std" ? "std::vector<double>(n, 1.0)"
                                    : "ccnuma::vector<double>(n, 1.0) (even) and ccnuma::vector<double, on_node>(n, 1.0, on_node{0}) (odd)", n, 8e-6 * static_cast<double>(n),
                    omp_get_max_threads(), reps);
        std::printf("copy  GB/s median [95%% interval]       physical runs\n");
        std::vector<double> gbs, runs;
        std::vector<bench::stats_paired::median_ci> ci;
        for (std::size_t k = 0; k < copies; ++k) {
            std::vector<double> rate;
            for (double s : seconds[k]) rate.push_back(8.0 * static_cast<double>(n) / s / 1e9);
            const auto m = bench::stats_paired::median_interval(rate);
            gbs.push_back(m.median);
            ci.push_back(m);
            std::string r = "hidden (no CAP_SYS_ADMIN)";
            if (frames) {
                runs.push_back(static_cast<double>(ccnuma::physical_runs(p[k], n * sizeof(double))));
                r = std::to_string(static_cast<std::size_t>(runs.back()));
            }
            std::printf("%4zu  %6.2f [%6.2f, %6.2f]          %s\n", k, m.median, m.lo, m.hi, r.c_str());
        }
        const auto slow = static_cast<std::size_t>(std::min_element(gbs.begin(), gbs.end()) - gbs.begin());
        const auto fast = static_cast<std::size_t>(std::max_element(gbs.begin(), gbs.end()) - gbs.begin());
        // Noise is said where it covers the spread: the two extremes' intervals overlap.
        std::printf("largest/smallest median: %.3f (copies %zu and %zu; their 95%% intervals %s)\n", gbs[fast] / gbs[slow],
                    fast, slow, ci[fast].lo <= ci[slow].hi ? "overlap: not a measurable difference" : "do not overlap");
        if (frames) {
            // A permutation test of the correlation (fixed seed, so that a run can be repeated):
            // the share of random pairings of the same values that correlate as strongly.
            const double rho = spearman(runs, gbs);
            std::mt19937_64 rng(35);
            std::vector<double> shuffled = gbs;
            constexpr int trials = 20000;
            int as_strong = 0;
            for (int i = 0; i < trials; ++i) {
                std::shuffle(shuffled.begin(), shuffled.end(), rng);
                if (std::abs(spearman(runs, shuffled)) >= std::abs(rho) - 1e-12) ++as_strong;
            }
            std::printf("rank correlation of physical runs and GB/s: %.2f (permutation p = %.3f, %d pairings)\n", rho,
                        static_cast<double>(as_strong) / trials, trials);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "frames_spread: %s\n", e.what());
        return 1;
    }
}
