// Alignment alone (issue 35, item 3): one array, summed by one loop from different byte offsets
// into its first page, the offsets' repetitions interleaved. The pages, their node and their
// physical frames are the same for every offset (n elements from base + offset, base on a
// page), so a difference between offsets is the elements' alignment, nothing else. This is what
// `ccnuma-bench placement`'s b_page_offset column points at: glibc's malloc starts a large
// std::vector 16 bytes into its mapping, a parallel_new class array started 8 bytes in before
// its cells followed the cookie's page.
//
//   offset_spread [--kernel sum|dot] [--n ELEMENTS] [--offsets B1,B2,...] [--reps R]
//
// The loop is ccnuma::sum (lane_sum on each thread's static block: unaligned vector loads of
// the widest width the build allows, as the expert's sum in ccnuma-bench), or ccnuma::dot of
// two such arrays at the same offset (as two std::vectors from malloc have), built like
// ccnuma-bench for the widest vectors here.

#include "arguments.hpp"
#include "stats.hpp"

#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

const bench::command_line cli{"offset_spread", "offset_spread [--kernel sum|dot] [--n ELEMENTS] [--offsets B1,B2,...] [--reps R]"};

}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 10000000, reps = 15;
    std::vector<std::size_t> offsets = {0, 8, 16, 32, 64};
    bool dot = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) cli.fail("option " + a + " needs a value");
        const char* v = argv[++i];
        if (a == "--kernel") {
            const std::string k = v;
            if (k != "sum" && k != "dot") cli.fail("bad --kernel '" + k + "' (expected sum or dot)");
            dot = k == "dot";
        } else if (a == "--n") {
            n = cli.count(v, "--n", 1000, std::size_t{1} << 34);
        } else if (a == "--offsets") {
            offsets = cli.counts(v, "--offsets", 0, 4096);
            for (std::size_t o : offsets)
                if (o % sizeof(double) != 0) cli.fail("bad --offsets " + std::to_string(o) + " (expected multiples of 8 bytes)");
            if (offsets.front() != 0) cli.fail("bad --offsets (the first must be 0: the others are paired with it)");
        } else if (a == "--reps") {
            reps = cli.count(v, "--reps", 9, 1000);
        } else {
            cli.fail("unknown option " + a);
        }
    }
    try {
        std::size_t largest = 0;
        for (std::size_t o : offsets) largest = std::max(largest, o / sizeof(double));
        // Small integers, so that every order of summation gives the exact sum.
        ccnuma::vector<double> v(n + largest, 0.0), w(dot ? n + largest : 0, 0.0);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 8);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i % 3);
        const auto base = reinterpret_cast<std::uintptr_t>(v.data());
        const std::size_t page = ccnuma::support().page_size;
        std::vector<double> expected;
        for (std::size_t o : offsets) {
            double s = 0;
            for (std::size_t i = o / sizeof(double); i < o / sizeof(double) + n; ++i) s += dot ? v[i] * w[i] : v[i];
            expected.push_back(s);
        }
        std::vector<std::vector<double>> rate(offsets.size());
        for (std::size_t r = 0; r < reps; ++r)
            for (std::size_t k = 0; k < offsets.size(); ++k) {
                const double* p = v.data() + offsets[k] / sizeof(double);
                const double* q = dot ? w.data() + offsets[k] / sizeof(double) : nullptr;
                const auto t0 = std::chrono::steady_clock::now();
                double s = 0;
                for (int sweep = 0; sweep < 3; ++sweep)
                    s += dot ? ccnuma::dot(ccnuma::view(p, n), ccnuma::view(q, n)) : ccnuma::sum(ccnuma::view(p, n));
                const auto t1 = std::chrono::steady_clock::now();
                if (s != 3 * expected[k]) {
                    std::fprintf(stderr, "offset_spread: offset %zu summed to %.17g, expected %.17g\n", offsets[k], s,
                                 3 * expected[k]);
                    return 1;
                }
                rate[k].push_back(3 * (dot ? 16.0 : 8.0) * static_cast<double>(n) / std::chrono::duration<double>(t1 - t0).count() / 1e9);
            }
        std::printf("# %s (its data %zu bytes into a page), n = %zu (%.0f MB each) %s from each offset, %d threads, %zu "
                    "interleaved repetitions of 3 sweeps\n",
                    dot ? "two ccnuma::vector<double>" : "one ccnuma::vector<double>", static_cast<std::size_t>(base % page), n,
                    8e-6 * static_cast<double>(n), dot ? "dot" : "summed", omp_get_max_threads(), reps);
        std::printf("offset  GB/s median [95%% interval]   paired with offset 0 [95%% interval]\n");
        for (std::size_t k = 0; k < offsets.size(); ++k) {
            const auto m = bench::stats_paired::median_interval(rate[k]);
            std::string paired = "(the reference)";
            if (k > 0) {
                const auto r = bench::stats_paired::paired_ratio(rate[k], rate[0]);
                paired = bench::stats_paired::to_string(r) + ": " + bench::stats_paired::to_string(bench::stats_paired::judge(r));
            }
            std::printf("%6zu  %6.2f [%6.2f, %6.2f]          %s\n", offsets[k], m.median, m.lo, m.hi, paired.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "offset_spread: %s\n", e.what());
        return 1;
    }
}
