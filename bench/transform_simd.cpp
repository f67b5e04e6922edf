// Whether par::transform over a seg_array keeps up with the expert's loop (issue 35): GCC's -O2
// vectorizes no plain loop that needs an alias check or an epilogue, so std::transform inside a
// segment runs scalar there; ccnuma runs a piece as an `omp simd` loop when the operation is
// noexcept (an exception may not leave a simd loop). This program times, interleaved and
// checked, `a[i] = 2 b[i]` written four ways: the expert's `omp parallel for simd` over raw
// arrays, par::transform with an ordinary lambda, with a noexcept one, and the binary
// par::transform `a[i] = b[i] + c[i]` with a noexcept lambda against its expert twin.
//
//   transform_simd [--n N1,N2,...] [--reps R]
//
// Threads and binding come from OpenMP's environment (OMP_NUM_THREADS, OMP_PROC_BIND, OMP_PLACES).

#include "arguments.hpp"
#include "stats.hpp"

#include <ccnuma/algorithm.hpp>
#include <ccnuma/seg_array.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

const bench::command_line cli{"transform_simd", "transform_simd [--n N1,N2,...] [--reps R]"};

__attribute__((noinline)) void expert_scale(double* __restrict a, const double* __restrict b, std::size_t n) {
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = 2.0 * b[i];
}

__attribute__((noinline)) void expert_add(double* __restrict a, const double* __restrict b, const double* __restrict c, std::size_t n) {
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + c[i];
}

template <class Array>
void check(const char* what, const Array& a, double (*expected)(std::size_t)) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != expected(i)) {
            std::fprintf(stderr, "transform_simd: %s: a[%zu] = %.17g, expected %.17g\n", what, i, a[i], expected(i));
            std::exit(1);
        }
}

double b_at(std::size_t i) { return static_cast<double>(i % 1000); }
double c_at(std::size_t i) { return static_cast<double>(i % 7); }
double scaled(std::size_t i) { return 2.0 * b_at(i); }
double added(std::size_t i) { return b_at(i) + c_at(i); }

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::size_t> sizes{20000, 200000, 2000000};
    std::size_t reps = 21;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) cli.fail("missing value after " + arg);
        const std::string value = argv[++i];
        if (arg == "--n")
            sizes = cli.counts(value, "--n", 1000, std::size_t{1} << 31);
        else if (arg == "--reps")
            reps = cli.count(value, "--reps", 9, 1001);
        else
            cli.fail("unknown option " + arg);
    }
    namespace st = bench::stats_paired;
    std::printf("# transform_simd: %d threads, %zu repetitions, variants interleaved in a rotating order; ratios: the "
                "expert loop's time over the variant's (> 1: the variant is faster), median [95%% interval]\n",
                omp_get_max_threads(), reps);
    for (const std::size_t n : sizes) {
        ccnuma::seg_array<double> a(n, 0.0), b(n, [](std::size_t i) { return b_at(i); }), c(n, [](std::size_t i) { return c_at(i); });
        std::vector<double> ra(n), rb(n), rc(n);
        for (std::size_t i = 0; i < n; ++i) rb[i] = b_at(i), rc[i] = c_at(i);
        const auto regular = ccnuma::stores::regular;  // the simd loop is the regular stores' path
        struct variant {
            const char* name;
            std::function<void()> run;
            std::size_t expert;  // the variant it is compared with
        };
        const std::vector<variant> v{
            {"expert a = 2 b (omp parallel for simd)", [&] { expert_scale(ra.data(), rb.data(), n); }, 0},
            {"par::transform, ordinary lambda", [&] { ccnuma::par::transform(regular, b.begin(), b.end(), a.begin(), [](double x) { return 2.0 * x; }); }, 0},
            {"par::transform, noexcept lambda", [&] { ccnuma::par::transform(regular, b.begin(), b.end(), a.begin(), [](double x) noexcept { return 2.0 * x; }); }, 0},
            {"expert a = b + c (omp parallel for simd)", [&] { expert_add(ra.data(), rb.data(), rc.data(), n); }, 3},
            {"par::transform binary, noexcept lambda",
             [&] { ccnuma::par::transform(regular, b.begin(), b.end(), c.begin(), a.begin(), [](double x, double y) noexcept { return x + y; }); }, 3},
        };
        // Each variant checked once before the timing: a kernel that skips its work is no result.
        for (std::size_t k = 0; k < v.size(); ++k) {
            std::fill(a.begin(), a.end(), -1.0);
            std::fill(ra.begin(), ra.end(), -1.0);
            v[k].run();
            const bool scale = v[k].expert == 0;
            if (k == 0 || k == 3) check(v[k].name, ra, scale ? scaled : added);
            else check(v[k].name, a, scale ? scaled : added);
        }
        // Calls per measurement: about 10 ms at 50 GB/s of 3 arrays, at least one.
        const std::size_t calls = std::max<std::size_t>(1, static_cast<std::size_t>(0.01 * 50e9 / (24.0 * static_cast<double>(n))));
        std::vector<std::vector<double>> times(v.size());
        for (std::size_t r = 0; r < reps; ++r)
            for (std::size_t j = 0; j < v.size(); ++j) {
                const std::size_t k = (j + r) % v.size();
                const auto t0 = std::chrono::steady_clock::now();
                for (std::size_t c2 = 0; c2 < calls; ++c2) v[k].run();
                times[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
        std::printf("\nn = %zu (%.1f MB per array)\n", n, 8e-6 * static_cast<double>(n));
        for (std::size_t k = 0; k < v.size(); ++k) {
            const double gbs = (v[k].expert == 0 ? 16.0 : 24.0) * static_cast<double>(n * calls) * 1e-9 / st::median_interval(times[k]).median;
            if (k == v[k].expert) {
                std::printf("  %-44s %8.2f GB/s\n", v[k].name, gbs);
            } else {
                const st::interval ratio = st::paired_ratio(times[v[k].expert], times[k]);
                std::printf("  %-44s %8.2f GB/s  over the expert: %s, %s\n", v[k].name, gbs, st::to_string(ratio).c_str(),
                            st::to_string(st::judge(ratio)).c_str());
            }
        }
    }
    return 0;
}
