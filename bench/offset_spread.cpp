// Alignment alone (issue 35, item 3): arrays read (and written) by one loop from different byte
// offsets into their first page, the offsets' repetitions interleaved. The pages, their node and
// their physical frames are the same for every offset (n elements from base + offset, base on a
// page), so a difference between offsets is the elements' alignment, nothing else. This is what
// `ccnuma-bench placement`'s b_page_offset column points at: glibc's malloc starts a large
// std::vector 16 bytes into its mapping, a parallel_new class array started 8 bytes in before
// its cells followed the cookie's page.
//
//   offset_spread [--kernel sum|dot|triad] [--n ELEMENTS] [--offsets B1,B2,...] [--reps R]
//
// The kernels, on views of ccnuma::vector<double>s at the same offset (as std::vectors from
// malloc are): ccnuma::sum (lane_sum on each thread's static block), ccnuma::dot of two arrays,
// or the triad a = b + c * d with regular stores (detail/parallel.hpp's elementwise loop; the
// streaming stores align themselves). Built like ccnuma-bench, for the widest vectors here.

#include "arguments.hpp"
#include "stats.hpp"

#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

const bench::command_line cli{"offset_spread", "offset_spread [--kernel sum|dot|triad] [--n ELEMENTS] [--offsets B1,B2,...] [--reps R]"};

}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 10000000, reps = 15;
    std::vector<std::size_t> offsets = {0, 8, 16, 32, 64};
    std::string kernel = "sum";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) cli.fail("option " + a + " needs a value");
        const char* v = argv[++i];
        if (a == "--kernel") {
            kernel = v;
            if (kernel != "sum" && kernel != "dot" && kernel != "triad")
                cli.fail("bad --kernel '" + kernel + "' (expected sum, dot or triad)");
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
        const bool dot = kernel == "dot", triad = kernel == "triad";
        std::size_t largest = 0;
        for (std::size_t o : offsets) largest = std::max(largest, o / sizeof(double));
        // Small integers, so that every order of summation gives the exact sum, and the triad's
        // every element is exact.
        const std::size_t m = n + largest;
        ccnuma::vector<double> v(m, 0.0), w(dot || triad ? m : 0, 0.0), c(triad ? m : 0, 3.0), a(triad ? m : 0, 0.0);
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
        // Bytes a sweep moves: the triad reads three arrays and writes one (its write-allocate
        // reads not counted, as ccnuma-bench counts them).
        const double bytes = (triad ? 32.0 : dot ? 16.0 : 8.0) * static_cast<double>(n);
        const auto triad_at = [&](std::size_t o) {
            auto x = ccnuma::view(a.data() + o, n);
            x.set_store_mode(ccnuma::stores::regular);
            x = ccnuma::view(std::as_const(v).data() + o, n) +
                ccnuma::view(std::as_const(w).data() + o, n) * ccnuma::view(std::as_const(c).data() + o, n);
        };
        // The triad's result from each offset, checked once before the timed runs (a check in
        // every repetition would leave a in one core's cache before the next offset's run).
        for (std::size_t k = 0; triad && k < offsets.size(); ++k) {
            const std::size_t o = offsets[k] / sizeof(double);
            std::fill(a.begin(), a.end(), -1.0);
            triad_at(o);
            for (std::size_t i = 0; i < m; ++i) {
                const double want = i >= o && i < o + n ? v[i] + w[i] * 3.0 : -1.0;
                if (a[i] != want) {
                    std::fprintf(stderr, "offset_spread: triad from offset %zu: a[%zu] = %.17g, expected %.17g\n", offsets[k], i,
                                 a[i], want);
                    return 1;
                }
            }
        }
        std::vector<std::vector<double>> rate(offsets.size());
        for (std::size_t r = 0; r < reps; ++r)
            for (std::size_t k = 0; k < offsets.size(); ++k) {
                const std::size_t o = offsets[k] / sizeof(double);
                const auto t0 = std::chrono::steady_clock::now();
                double s = 0;
                for (int sweep = 0; sweep < 3; ++sweep) {
                    if (triad)
                        triad_at(o);
                    else
                        s += dot ? ccnuma::dot(ccnuma::view(v.data() + o, n), ccnuma::view(w.data() + o, n))
                                 : ccnuma::sum(ccnuma::view(v.data() + o, n));
                }
                const auto t1 = std::chrono::steady_clock::now();
                if (!triad && s != 3 * expected[k]) {
                    std::fprintf(stderr, "offset_spread: offset %zu summed to %.17g, expected %.17g\n", offsets[k], s,
                                 3 * expected[k]);
                    return 1;
                }
                rate[k].push_back(3 * bytes / std::chrono::duration<double>(t1 - t0).count() / 1e9);
            }
        std::printf("# %s (the first's data %zu bytes into a page), n = %zu (%.0f MB each), %s from each offset, %d threads, %zu "
                    "interleaved repetitions of 3 sweeps\n",
                    triad ? "four ccnuma::vector<double>" : dot ? "two ccnuma::vector<double>" : "one ccnuma::vector<double>",
                    static_cast<std::size_t>(base % page), n, 8e-6 * static_cast<double>(n),
                    triad ? "a = b + c * d (regular stores)" : dot ? "dot" : "summed", omp_get_max_threads(), reps);
        std::printf("offset  GB/s median [95%% interval]   paired with offset 0 [95%% interval]\n");
        for (std::size_t k = 0; k < offsets.size(); ++k) {
            const auto md = bench::stats_paired::median_interval(rate[k]);
            std::string paired = "(the reference)";
            if (k > 0) {
                const auto r = bench::stats_paired::paired_ratio(rate[k], rate[0]);
                paired = bench::stats_paired::to_string(r) + ": " + bench::stats_paired::to_string(bench::stats_paired::judge(r));
            }
            std::printf("%6zu  %6.2f [%6.2f, %6.2f]          %s\n", offsets[k], md.median, md.lo, md.hi, paired.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "offset_spread: %s\n", e.what());
        return 1;
    }
}
