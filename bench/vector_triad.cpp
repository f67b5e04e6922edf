// The poster's headline benchmark: the vector triad a = b + c * d written as a ccnuma::vector
// expression, against the hand-written OpenMP loop on raw arrays first-touched in parallel,
// in one run, over N = 10^3 ... 10^8. Both variants use schedule(static) over the same team,
// so the difference is what the expression templates cost (the target is none).
//
//   vector_triad [--min-n N] [--max-n N] [--repetitions R] [--min-time SECONDS] [--csv FILE]
//   vector_triad --only raw|expr --n N --sweeps K     (one variant, for callgrind)

#include "common/harness.hpp"

#include <ccnuma/vector.hpp>

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

// Outside the timed functions: the compiler must not see through the benchmark loop, and
// callgrind toggles collection on exactly these two functions.
__attribute__((noinline)) void triad_raw(double* a, const double* b, const double* c, const double* d, std::size_t n,
                                         std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + c[i] * d[i];
    }
}

__attribute__((noinline)) void triad_expr(ccnuma::vector<double>& a, const ccnuma::vector<double>& b,
                                          const ccnuma::vector<double>& c, const ccnuma::vector<double>& d,
                                          std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) a = b + c * d;
}

double value(std::size_t i, int which) { return 0.5 + static_cast<double>((i * 7 + static_cast<std::size_t>(which)) % 101) / 64.0; }

struct raw_arrays {
    std::size_t n;
    std::unique_ptr<double[]> a, b, c, d;  // default-initialized: no page touched yet
    explicit raw_arrays(std::size_t size)
        : n(size), a(new double[size]), b(new double[size]), c(new double[size]), d(new double[size]) {
        double *pa = a.get(), *pb = b.get(), *pc = c.get(), *pd = d.get();
        // First touch in parallel with the kernel's own schedule: the STREAM way.
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < size; ++i) {
            pa[i] = 0;
            pb[i] = value(i, 1);
            pc[i] = value(i, 2);
            pd[i] = value(i, 3);
        }
    }
};

struct expr_arrays {
    ccnuma::vector<double> a, b, c, d;
    explicit expr_arrays(std::size_t n)
        : a(n), b(n, [](std::size_t i) { return value(i, 1); }), c(n, [](std::size_t i) { return value(i, 2); }),
          d(n, [](std::size_t i) { return value(i, 3); }) {}
};

// Every element, bitwise: the triad's result is one rounding of b + c * d either way (no FMA
// contraction differs between the variants, since both compile the same expression).
void check(const char* what, const double* a, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const double expected = value(i, 1) + value(i, 2) * value(i, 3);
        if (a[i] != expected) {
            std::fprintf(stderr, "vector_triad: %s gives a[%zu] = %.17g, expected %.17g\n", what, i, a[i], expected);
            std::exit(1);
        }
    }
}

struct options {
    bench::sweep_options sweep{};
    std::size_t n = 0, sweeps = 1;
    std::string only;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        if (bench::parse_sweep_option(argc, argv, i, o.sweep)) continue;
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 == argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "--only") o.only = next();
        else if (a == "--n") o.n = bench::parse_count(a, next());
        else if (a == "--sweeps") o.sweeps = bench::parse_count(a, next());
        else throw std::invalid_argument("unknown option \"" + a + "\" (see the comment at the top of vector_triad.cpp)");
    }
    if (!o.only.empty() && o.only != "raw" && o.only != "expr")
        throw std::invalid_argument("--only takes raw or expr, not \"" + o.only + "\"");
    bench::check(o.sweep);
    return o;
}

int run_one(const options& o) {
    const std::size_t n = o.n ? o.n : 1000000;
    if (o.only == "raw") {
        raw_arrays r(n);
        triad_raw(r.a.get(), r.b.get(), r.c.get(), r.d.get(), n, o.sweeps);
        check("raw loop", r.a.get(), n);
    } else {
        expr_arrays e(n);
        triad_expr(e.a, e.b, e.c, e.d, o.sweeps);
        check("expression", e.a.data(), n);
    }
    std::printf("%s: %zu sweeps of n = %zu checked\n", o.only.c_str(), o.sweeps, n);
    return 0;
}

}  // namespace

int main(int argc, char** argv) try {
    const options o = parse(argc, argv);
    // Small N gives each thread less than a page, which the placement diagnostic would report
    // once per size; in a sweep over sizes that is expected, not news.
    ccnuma::set_diagnostic_handler({});
    if (!o.only.empty()) return run_one(o);
    std::fputs(bench::context("vector triad a = b + c * d: ccnuma::vector expression vs raw OpenMP loop").c_str(), stdout);
    std::printf("# GB/s counts 32 bytes per element (3 loads, 1 store; write-allocate not counted); "
                "median [min, max] of %d repetitions\n",
                o.sweep.repetitions);
    std::printf("%12s %10s  %28s  %28s  %9s\n", "N", "batch", "raw GB/s", "expr GB/s", "expr/raw");
    bench::csv out(o.sweep.csv, "n,batch,raw_median,raw_min,raw_max,expr_median,expr_min,expr_max,ratio");
    for (std::size_t n = o.sweep.min_n; n <= o.sweep.max_n; n *= 10) {
        raw_arrays r(n);
        expr_arrays e(n);
        const auto m = bench::measure({{"raw", [&](std::size_t k) { triad_raw(r.a.get(), r.b.get(), r.c.get(), r.d.get(), n, k); }},
                                       {"expr", [&](std::size_t k) { triad_expr(e.a, e.b, e.c, e.d, k); }}},
                                      o.sweep.repetitions);
        check("raw loop", r.a.get(), n);
        check("expression", e.a.data(), n);
        const double bytes = 32.0 * static_cast<double>(n) * static_cast<double>(m.batch);
        auto rate = [&](const std::vector<double>& t) {
            auto s = bench::summarize(t);
            return bench::stats{bytes / s.max / 1e9, bytes / s.median / 1e9, bytes / s.min / 1e9};
        };
        const auto raw = rate(m.times[0]), ex = rate(m.times[1]);
        const double ratio = m.paired_ratio(1, 0);
        std::printf("%12zu %10zu  %8.2f [%7.2f, %7.2f]  %8.2f [%7.2f, %7.2f]  %9.3f\n", n, m.batch, raw.median, raw.min,
                    raw.max, ex.median, ex.min, ex.max, ratio);
        std::fflush(stdout);
        char line[256];
        std::snprintf(line, sizeof line, "%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f", n, m.batch, raw.median, raw.min,
                      raw.max, ex.median, ex.min, ex.max, ratio);
        out.row(line);
        if (n > o.sweep.max_n / 10) break;
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "vector_triad: %s\n", e.what());
    return 2;
}
