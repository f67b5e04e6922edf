// The poster's seg_array claim: hierarchical algorithms on a segmented array run at the speed
// of a raw loop, where std:: algorithms over its flat iterator pay for the segment test in every
// ++. Three kernels (sum, triad-style transform a = b + s * c, fill), each as
//   (a) ccnuma::par:: hierarchical algorithm on seg_array (segment s on thread s, raw inner loop)
//   (b) the std:: algorithm over the flat iterator, each thread on its own segment's range
//   (c) a raw OpenMP loop over plain arrays first-touched in parallel, schedule(static)
// in one run, over N = 10^6 ... 10^7 by default. All three use the same team and give each
// thread the same elements on the same node, so (b)/(c) is the flat iterator's cost and
// (a)/(c) what is left of it. Build it optimized (CMAKE_BUILD_TYPE=Release): at GCC 12's -O2
// (RelWithDebInfo) the raw fill loop compiles to a scalar loop and runs at half the speed of
// the other two, which says nothing about segments.
//
//   seg_array_bench [--min-n N] [--max-n N] [--repetitions R] [--min-time SECONDS] [--csv FILE]
//
// --min-time is the shortest timed call (the harness batches sweeps up to it; 2 ms by default).
// On a shared or virtual machine a longer one (0.05) averages out what other processes do.

#include "common/harness.hpp"

#include <ccnuma/algorithm.hpp>
#include <ccnuma/seg_array.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Multiples of 1/64 below 2: every partial sum of up to 10^9 of them is exact in a double, so
// every summation order gives the same bits and the sums are checked exactly.
double value(std::size_t i, int which) { return static_cast<double>((i * 7 + static_cast<std::size_t>(which)) % 101) / 64.0; }
constexpr double scalar = 3.0;

using seg_t = ccnuma::seg_array<double>;

// The flat ranges of a seg_array's segments: thread t of the team works on segment t's range.
std::vector<std::size_t> segment_starts(const seg_t& a) {
    std::vector<std::size_t> starts{0};
    for (std::size_t s = 0; s < a.segment_count(); ++s) starts.push_back(starts.back() + a.segment_size(s));
    return starts;
}

// ---- (a) hierarchical ----
__attribute__((noinline)) double sum_hierarchical(const seg_t& a, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) s = ccnuma::par::reduce(a.begin(), a.end(), 0.0);
    return s;
}
__attribute__((noinline)) void triad_hierarchical(seg_t& a, const seg_t& b, const seg_t& c, std::size_t sweeps) {
    for (std::size_t k = 0; k < sweeps; ++k)
        ccnuma::par::transform(b.begin(), b.end(), c.begin(), a.begin(), [](double x, double y) { return x + scalar * y; });
}
__attribute__((noinline)) void fill_hierarchical(seg_t& a, double v, std::size_t sweeps) {
    for (std::size_t k = 0; k < sweeps; ++k) ccnuma::par::fill(a.begin(), a.end(), v);
}

// ---- (b) std:: over the flat iterator, same threads and ranges ----
__attribute__((noinline)) double sum_flat(const seg_t& a, const std::vector<std::size_t>& starts, std::size_t sweeps) {
    const auto threads = static_cast<int>(a.segment_count());
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        std::vector<ccnuma::padded<double>> partial(a.segment_count());
#pragma omp parallel num_threads(threads)
        {
            const auto t = static_cast<std::size_t>(omp_get_thread_num());
            const auto b = a.begin() + static_cast<std::ptrdiff_t>(starts[t]);
            const auto e = a.begin() + static_cast<std::ptrdiff_t>(starts[t + 1]);
            partial[t].value = std::reduce(b, e, 0.0);
        }
        s = 0;
        for (const auto& p : partial) s += p.value;
    }
    return s;
}
__attribute__((noinline)) void triad_flat(seg_t& a, const seg_t& b, const seg_t& c, const std::vector<std::size_t>& starts,
                                          std::size_t sweeps) {
    const auto threads = static_cast<int>(a.segment_count());
    for (std::size_t k = 0; k < sweeps; ++k) {
#pragma omp parallel num_threads(threads)
        {
            const auto t = static_cast<std::ptrdiff_t>(omp_get_thread_num());
            const auto lo = static_cast<std::ptrdiff_t>(starts[static_cast<std::size_t>(t)]);
            const auto hi = static_cast<std::ptrdiff_t>(starts[static_cast<std::size_t>(t) + 1]);
            std::transform(b.begin() + lo, b.begin() + hi, c.begin() + lo, a.begin() + lo,
                           [](double x, double y) { return x + scalar * y; });
        }
    }
}
__attribute__((noinline)) void fill_flat(seg_t& a, double v, const std::vector<std::size_t>& starts, std::size_t sweeps) {
    const auto threads = static_cast<int>(a.segment_count());
    for (std::size_t k = 0; k < sweeps; ++k) {
#pragma omp parallel num_threads(threads)
        {
            const auto t = static_cast<std::size_t>(omp_get_thread_num());
            std::fill(a.begin() + static_cast<std::ptrdiff_t>(starts[t]), a.begin() + static_cast<std::ptrdiff_t>(starts[t + 1]),
                      v);
        }
    }
}

// ---- (c) raw loops ----
__attribute__((noinline)) double sum_raw(const double* a, std::size_t n, int threads, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : s)
        for (std::size_t i = 0; i < n; ++i) s += a[i];
    }
    return s;
}
__attribute__((noinline)) void triad_raw(double* a, const double* b, const double* c, std::size_t n, int threads,
                                         std::size_t sweeps) {
    for (std::size_t k = 0; k < sweeps; ++k) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
    }
}
__attribute__((noinline)) void fill_raw(double* a, double v, std::size_t n, int threads, std::size_t sweeps) {
    for (std::size_t k = 0; k < sweeps; ++k) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (std::size_t i = 0; i < n; ++i) a[i] = v;
    }
}

struct raw_arrays {
    std::unique_ptr<double[]> a, b, c;  // default-initialized: no page touched yet
    raw_arrays(std::size_t n, int threads) : a(new double[n]), b(new double[n]), c(new double[n]) {
        double *pa = a.get(), *pb = b.get(), *pc = c.get();
        // First touch in parallel with the kernels' own schedule: the STREAM way.
#pragma omp parallel for schedule(static) num_threads(threads)
        for (std::size_t i = 0; i < n; ++i) {
            pa[i] = 0;
            pb[i] = value(i, 1);
            pc[i] = value(i, 2);
        }
    }
};

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "seg_array_bench: %s\n", what.c_str());
    std::exit(1);
}

template <class It>
void check_triad(const char* what, It a, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, ++a) {
        const double expected = value(i, 1) + scalar * value(i, 2);
        if (*a != expected)
            fail(std::string(what) + ": a[" + std::to_string(i) + "] = " + std::to_string(*a) + ", expected " +
                 std::to_string(expected));
    }
}
template <class It>
void check_fill(const char* what, It a, std::size_t n, double v) {
    for (std::size_t i = 0; i < n; ++i, ++a)
        if (*a != v) fail(std::string(what) + ": a[" + std::to_string(i) + "] is not the fill value");
}
void check_sum(const char* what, double got, double expected) {
    if (got != expected) fail(std::string(what) + ": sum " + std::to_string(got) + ", expected " + std::to_string(expected));
}

struct options {
    bench::sweep_options sweep{.min_n = 1000000, .max_n = 10000000};
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i)
        if (!bench::parse_sweep_option(argc, argv, i, o.sweep))
            throw std::invalid_argument(std::string("unknown option \"") + argv[i] +
                                        "\" (see the comment at the top of seg_array_bench.cpp)");
    bench::check(o.sweep);
    return o;
}

}  // namespace

int main(int argc, char** argv) try {
    const options o = parse(argc, argv);
    ccnuma::set_diagnostic_handler({});
    std::fputs(bench::context("seg_array: (a) ccnuma::par:: hierarchical, (b) std:: over the flat iterator, (c) raw "
                              "OpenMP loop on plain arrays")
                   .c_str(),
               stdout);
    std::printf("# GB/s counts 8 bytes per element for sum and fill, 24 for the triad (write-allocate not counted); "
                "median [min, max] of %d repetitions (timed calls of at least %g s); a/c and b/c are medians of paired "
                "ratios\n",
                o.sweep.repetitions, o.sweep.min_time);
    std::printf("%-6s %10s %8s  %26s  %26s  %26s  %6s  %6s\n", "kernel", "N", "batch", "(a) hierarchical GB/s",
                "(b) flat std:: GB/s", "(c) raw loop GB/s", "a/c", "b/c");
    bench::csv out(o.sweep.csv, "kernel,n,batch,a_median,a_min,a_max,b_median,b_min,b_max,c_median,c_min,c_max,a_over_c,b_over_c");
    for (std::size_t n = o.sweep.min_n; n <= o.sweep.max_n; n *= 10) {
        seg_t a(n), b(n, [](std::size_t i) { return value(i, 1); }), c(n, [](std::size_t i) { return value(i, 2); });
        const int threads = static_cast<int>(a.segment_count());
        const auto starts = segment_starts(a);
        raw_arrays r(n, threads);
        double expected_sum = 0;
        for (std::size_t i = 0; i < n; ++i) expected_sum += value(i, 1);

        auto report = [&](const char* kernel, const bench::measurement& m, double bytes_per_element) {
            const double bytes = bytes_per_element * static_cast<double>(n) * static_cast<double>(m.batch);
            auto rate = [&](const std::vector<double>& t) {
                const auto s = bench::summarize(t);
                return bench::stats{bytes / s.max / 1e9, bytes / s.median / 1e9, bytes / s.min / 1e9};
            };
            const auto ha = rate(m.times[0]), fb = rate(m.times[1]), rc = rate(m.times[2]);
            const double ac = m.paired_ratio(0, 2), bc = m.paired_ratio(1, 2);
            std::printf("%-6s %10zu %8zu  %7.2f [%7.2f, %7.2f]  %7.2f [%7.2f, %7.2f]  %7.2f [%7.2f, %7.2f]  %6.3f  %6.3f\n",
                        kernel, n, m.batch, ha.median, ha.min, ha.max, fb.median, fb.min, fb.max, rc.median, rc.min,
                        rc.max, ac, bc);
            std::fflush(stdout);
            char line[320];
            std::snprintf(line, sizeof line, "%s,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f", kernel, n,
                          m.batch, ha.median, ha.min, ha.max, fb.median, fb.min, fb.max, rc.median, rc.min, rc.max, ac, bc);
            out.row(line);
        };

        {
            double sa = 0, sb = 0, sc = 0;
            const auto m = bench::measure({{"hierarchical", [&](std::size_t k) { sa = sum_hierarchical(b, k); }},
                                           {"flat", [&](std::size_t k) { sb = sum_flat(b, starts, k); }},
                                           {"raw", [&](std::size_t k) { sc = sum_raw(r.b.get(), n, threads, k); }}},
                                          o.sweep.repetitions, o.sweep.min_time);
            check_sum("sum (a)", sa, expected_sum);
            check_sum("sum (b)", sb, expected_sum);
            check_sum("sum (c)", sc, expected_sum);
            report("sum", m, 8);
        }
        {
            const auto m = bench::measure({{"hierarchical", [&](std::size_t k) { triad_hierarchical(a, b, c, k); }},
                                           {"flat", [&](std::size_t k) { triad_flat(a, b, c, starts, k); }},
                                           {"raw", [&](std::size_t k) { triad_raw(r.a.get(), r.b.get(), r.c.get(), n, threads, k); }}},
                                          o.sweep.repetitions, o.sweep.min_time);
            check_triad("triad (c)", r.a.get(), n);
            ccnuma::fill(a.begin(), a.end(), 0.0);
            triad_flat(a, b, c, starts, 1);
            check_triad("triad (b)", a.begin(), n);
            ccnuma::fill(a.begin(), a.end(), 0.0);
            triad_hierarchical(a, b, c, 1);
            check_triad("triad (a)", a.begin(), n);
            report("triad", m, 24);
        }
        {
            const auto m = bench::measure({{"hierarchical", [&](std::size_t k) { fill_hierarchical(a, 1.5, k); }},
                                           {"flat", [&](std::size_t k) { fill_flat(a, 2.5, starts, k); }},
                                           {"raw", [&](std::size_t k) { fill_raw(r.a.get(), 3.5, n, threads, k); }}},
                                          o.sweep.repetitions, o.sweep.min_time);
            check_fill("fill (c)", r.a.get(), n, 3.5);
            check_fill("fill (b)", a.begin(), n, 2.5);  // the last variant to write a in each round
            fill_hierarchical(a, 1.5, 1);
            check_fill("fill (a)", a.begin(), n, 1.5);
            report("fill", m, 8);
        }
        if (n > o.sweep.max_n / 10) break;
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "seg_array_bench: %s\n", e.what());
    return 2;
}
