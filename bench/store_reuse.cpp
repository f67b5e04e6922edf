// Whether the triad's result should stay in the caches (issue 35, item 3): a = b + c * d
// followed by a kernel that reads a again (s = sum(a)), once with regular stores and once with
// streaming ones, their repetitions interleaved, at sizes from the L2s to past the last-level
// caches. A benchmark of the triad alone (likwid-bench's triad_mem, ccnuma-bench triad) never
// reads a again, so it scores streaming stores by the write alone; a program reads its results.
// `automatic` streams when the bytes the write moves (its 4 arrays here) exceed
// streaming_threshold() (the LLCs' total); this program shows what each choice costs or gains on
// the machine at hand, for the triad alone and for the pair.
//
//   store_reuse [--n N1,N2,...] [--reps R]
//
// Threads, binding and team size come from OpenMP's environment (OMP_NUM_THREADS,
// OMP_PROC_BIND, OMP_PLACES), as for any ccnuma::vector.

#include "arguments.hpp"
#include "stats.hpp"

#include <ccnuma/stores.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const bench::command_line cli{"store_reuse", "store_reuse [--n N1,N2,...] [--reps R]"};

using seconds = std::chrono::duration<double>;

// One measurement: `calls` times the triad, then the sum of its result, timed apart. Returns the
// two totals; a wrong sum ends the program (the kernels must have done their work).
struct pair_time {
    double triad = 0, sum = 0;
};

pair_time measure(ccnuma::vector<double>& a, const ccnuma::vector<double>& b, const ccnuma::vector<double>& c,
                  const ccnuma::vector<double>& d, std::size_t calls) {
    pair_time t;
    const double expect = 7.0 * static_cast<double>(a.size());
    for (std::size_t k = 0; k < calls; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        a = b + c * d;
        const auto t1 = std::chrono::steady_clock::now();
        const double s = ccnuma::sum(a);
        const auto t2 = std::chrono::steady_clock::now();
        if (s != expect) {
            std::fprintf(stderr, "store_reuse: sum(a) = %.17g after the triad, expected %.17g\n", s, expect);
            std::exit(1);
        }
        t.triad += seconds(t1 - t0).count();
        t.sum += seconds(t2 - t1).count();
    }
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::size_t> sizes{100000, 300000, 1000000, 3000000, 10000000, 30000000};
    std::size_t reps = 11;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) cli.fail("missing value after " + arg);
        const std::string value = argv[++i];
        if (arg == "--n")
            sizes = cli.counts(value, "--n", 1000, std::size_t{1} << 32);
        else if (arg == "--reps")
            reps = cli.count(value, "--reps", 9, 1001);
        else
            cli.fail("unknown option " + arg);
    }
    namespace st = bench::stats_paired;
    std::printf("# store_reuse: %d threads, streaming_threshold() = %zu bytes (automatic streams a write that moves more), %zu "
                "repetitions, regular and streaming interleaved\n",
                omp_get_max_threads(), ccnuma::streaming_threshold(), reps);
    std::printf("# triad: a = b + c * d on ccnuma::vector<double>, GB/s of its 4 streams (no write-allocate); "
                "then: s = ccnuma::sum(a), which reads a again\n");
    std::printf("# ratios streaming over regular (speed; > 1: streaming faster): median [95%% interval] of the "
                "paired repetitions\n");
    std::printf("%12s %9s %10s | %8s %8s %22s | %22s | %s\n", "N", "MB (4)", "automatic", "reg GB/s", "str GB/s",
                "triad alone str/reg", "triad + sum str/reg", "verdict for the pair");
    for (const std::size_t n : sizes) {
        ccnuma::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0), d(n, 3.0);
        const double bytes = 32.0 * static_cast<double>(n);
        // Enough calls per measurement for about 20 ms of the triad at 50 GB/s, at least one.
        const std::size_t calls = std::max<std::size_t>(1, static_cast<std::size_t>(0.02 * 50e9 / bytes));
        // What `automatic` does with this triad: it moves 4 arrays (a stored; b, c, d read).
        const bool automatic_streams = ccnuma::streams(ccnuma::stores::automatic, 4 * sizeof(double) * n, false, true);
        std::vector<double> triad_reg, triad_str, pair_reg, pair_str, rate_reg, rate_str;
        auto run = [&](ccnuma::stores mode, bool keep) {
            a.set_store_mode(mode);
            const pair_time t = measure(a, b, c, d, calls);
            if (!keep) return;
            auto& tr = mode == ccnuma::stores::regular ? triad_reg : triad_str;
            auto& pr = mode == ccnuma::stores::regular ? pair_reg : pair_str;
            auto& rr = mode == ccnuma::stores::regular ? rate_reg : rate_str;
            tr.push_back(t.triad);
            pr.push_back(t.triad + t.sum);
            rr.push_back(bytes * static_cast<double>(calls) / t.triad * 1e-9);
        };
        run(ccnuma::stores::regular, false);
        run(ccnuma::stores::streaming, false);
        for (std::size_t r = 0; r < reps; ++r) {
            // Alternating which goes first, so that neither always follows the other.
            const bool reg_first = r % 2 == 0;
            run(reg_first ? ccnuma::stores::regular : ccnuma::stores::streaming, true);
            run(reg_first ? ccnuma::stores::streaming : ccnuma::stores::regular, true);
        }
        // Times: regular over streaming is the speed of streaming over regular.
        const st::interval triad = st::paired_ratio(triad_reg, triad_str);
        const st::interval pair = st::paired_ratio(pair_reg, pair_str);
        std::printf("%12zu %9.1f %10s | %8.2f %8.2f %22s | %22s | %s\n", n, bytes * 1e-6,
                    automatic_streams ? "streaming" : "regular", st::median_interval(rate_reg).median,
                    st::median_interval(rate_str).median, st::to_string(triad).c_str(), st::to_string(pair).c_str(),
                    st::to_string(st::judge(pair)).c_str());
    }
    return 0;
}
