// What the OpenMP runtime and the caches cost: false sharing (the course), EPCC-style
// synchronization overhead and nested STREAM, bound and unbound (the binding paper).

#include "kernels.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>

#include <cmath>
#include <memory>
#include <string>

namespace bench {

// ---- false-sharing ---------------------------------------------------------------------------

namespace {

// a[i] = a[i] * 0.5 + 1: every element written, by the thread the schedule gives it to. With
// schedule(static,1) neighbours in one cache line belong to different threads.
__attribute__((noinline)) void update_static1(double* a, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static, 1)
        for (std::size_t i = 0; i < n; ++i) a[i] = a[i] * 0.5 + 1.0;
        escape(a);
    }
}
__attribute__((noinline)) void update_static(double* a, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) a[i] = a[i] * 0.5 + 1.0;
        escape(a);
    }
}
// Partial sums kept in memory, one per thread: adjacent doubles in one line, or one padded
// slot per thread (ccnuma::per_thread). The volatile store is what a real accumulator that is
// read elsewhere costs; without it the compiler keeps the sum in a register and there is no
// sharing to measure.
__attribute__((noinline)) double partial_shared(const double* x, std::size_t n, double* partial, std::size_t sweeps) {
    double total = 0;
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel
        {
            volatile double* mine = &partial[omp_get_thread_num()];
            *mine = 0;
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < n; ++i) *mine = *mine + x[i];
        }
        total = 0;
        for (int t = 0; t < omp_get_max_threads(); ++t) total += partial[t];
    }
    return total;
}
__attribute__((noinline)) double partial_padded(const double* x, std::size_t n, ccnuma::per_thread<double>& partial,
                                                std::size_t sweeps) {
    double total = 0;
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel
        {
            volatile double* mine = &partial.local();
            *mine = 0;
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < n; ++i) *mine = *mine + x[i];
        }
        total = partial.reduce();
    }
    return total;
}

}  // namespace

void false_sharing(const options& o, report& out) {
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {100000})) {
            need_memory("false-sharing", 3, n);
            out.progress("false-sharing: n = " + std::to_string(n) + ", " + std::to_string(t) + " threads");
            std::unique_ptr<double[]> a1(new double[n]), a2(new double[n]), x(new double[n]);
            std::vector<double> shared(t + 8);
            ccnuma::per_thread<double> padded(t);
            double* pa1 = a1.get();
            double* pa2 = a2.get();
            double* px = x.get();
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < n; ++i) {
                pa1[i] = pa2[i] = 2.0;  // the fixed point of a * 0.5 + 1: any number of sweeps leaves 2
                px[i] = value(i, 1);
            }
            double s_shared = 0, s_padded = 0;
            std::vector<variant> v{
                timed("a[i] update, schedule(static,1)", [&](std::size_t k) { update_static1(pa1, n, k); }),
                timed("a[i] update, schedule(static)", [&](std::size_t k) { update_static(pa2, n, k); }),
                timed("partial sums in double[threads]", [&](std::size_t k) { s_shared = partial_shared(px, n, shared.data(), k); }),
                timed("partial sums in ccnuma::per_thread", [&](std::size_t k) { s_padded = partial_padded(px, n, padded, k); })};
            const auto m = measure(v, o.reps, o.min_time);
            for (const double* a : {pa1, pa2})
                for (std::size_t i = 0; i < n; ++i)
                    if (a[i] != 2.0) wrong("false-sharing update: a[" + std::to_string(i) + "] = " + std::to_string(a[i]));
            double expected = 0;
            for (std::size_t i = 0; i < n; ++i) expected += value(i, 1);
            if (s_shared != expected || s_padded != expected)
                wrong("false-sharing partial sums " + std::to_string(s_shared) + ", " + std::to_string(s_padded) + ", expected " +
                      std::to_string(expected));
            for (std::size_t k = 0; k < v.size(); ++k) {
                result r;
                r.kernel = "false-sharing";
                r.variant = v[k].name;
                r.n = n;
                r.threads = t;
                r.batch = m.batch;
                r.seconds = m.seconds[k];
                r.unit = "Mupd/s";
                for (double s : r.seconds) r.values.push_back(static_cast<double>(n) / s / 1e6);
                out.add(std::move(r));
            }
        }
    }
}

// ---- sync (EPCC syncbench) -------------------------------------------------------------------

namespace {

// EPCC's delay: a dependent chain the compiler cannot shorten.
__attribute__((noinline)) void delay(int length) {
    double a = 0;
    for (int i = 0; i < length; ++i) {
        a += i;
        escape(&a);
    }
}

constexpr int delay_length = 200;

}  // namespace

void sync(const options& o, report& out) {
    const auto topo = ccnuma::topology::load({});
    for (unsigned t : team_sizes(o)) {
        omp_set_num_threads(static_cast<int>(t));
        ccnuma::plan_options po;
        po.oversubscribe = true;
        const auto plan = ccnuma::make_plan(topo, ccnuma::binding_spec::parse(o.bind.empty() ? std::to_string(t) + ",compact" : o.bind), po);
        out.progress("sync: " + std::to_string(t) + " threads, plan " + (o.bind.empty() ? std::to_string(t) + ",compact" : o.bind));
        auto bound = [&plan] {
#pragma omp parallel
            affinity::pin(plan);
        };
        auto unbound = [] {
#pragma omp parallel
            affinity::release();
        };
        const int threads = static_cast<int>(t);
        long reduced = 0;
        auto par = [threads](std::size_t k) {
            for (std::size_t i = 0; i < k; ++i) {
#pragma omp parallel num_threads(threads)
                delay(delay_length);
            }
        };
        auto barrier = [threads](std::size_t k) {
#pragma omp parallel num_threads(threads)
            for (std::size_t i = 0; i < k; ++i) {
                delay(delay_length);
#pragma omp barrier
            }
        };
        auto reduction = [threads, &reduced](std::size_t k) {
            long total = 0;
            for (std::size_t i = 0; i < k; ++i) {
                long x = 0;
#pragma omp parallel num_threads(threads) reduction(+ : x)
                {
                    delay(delay_length);
                    x += 1;
                }
                total += x;
            }
            reduced = total;
        };
        std::vector<variant> v{timed("reference (delay only)", [](std::size_t k) {
                                   for (std::size_t i = 0; i < k; ++i) delay(delay_length);
                               }),
                               timed("parallel, unbound", par, unbound),      timed("parallel, bound", par, bound),
                               timed("barrier, unbound", barrier, unbound),   timed("barrier, bound", barrier, bound),
                               timed("reduction, unbound", reduction, unbound), timed("reduction, bound", reduction, bound)};
        const auto m = measure(v, o.reps, o.min_time);
        const std::size_t k_check = 10;
        reduction(k_check);
        if (reduced != static_cast<long>(k_check) * threads)
            wrong("sync reduction gave " + std::to_string(reduced) + ", expected " + std::to_string(k_check * t));
#pragma omp parallel
        affinity::release();
        // EPCC: overhead = (time per construct with the delay inside) - (time of the delay alone),
        // paired repetition by repetition.
        for (std::size_t k = 1; k < v.size(); ++k) {
            result r;
            r.kernel = "sync";
            r.variant = v[k].name;
            r.n = static_cast<std::size_t>(delay_length);
            r.threads = t;
            r.batch = m.batch;
            r.seconds = m.seconds[k];
            r.unit = "us";
            r.higher_is_better = false;
            for (std::size_t i = 0; i < r.seconds.size(); ++i) r.values.push_back((r.seconds[i] - m.seconds[0][i]) * 1e6);
            if (k % 2 == 0) {  // bound: its overhead over the unbound one, paired
                std::vector<double> ratio;
                for (std::size_t i = 0; i < r.seconds.size(); ++i) {
                    const double ub = m.seconds[k - 1][i] - m.seconds[0][i];
                    ratio.push_back((r.seconds[i] - m.seconds[0][i]) / ub);
                }
                r.counters["bound_over_unbound"] = summarize(ratio).median;
            }
            out.add(std::move(r));
        }
    }
}

// ---- nested-stream ---------------------------------------------------------------------------

namespace {

__attribute__((noinline)) void stream_triad(double* a, const double* b, const double* c, std::size_t n) {
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    escape(a);
}

}  // namespace

void nested_stream(const options& o, report& out) {
    const auto topo = ccnuma::topology::load({});
    const unsigned pus = static_cast<unsigned>(topo.allowed_cpus().size());
    std::vector<std::string> shapes = o.teams;
    if (shapes.empty())
        for (const char* s : {"1x1", "2x1", "1x2", "2x2"})
            if (static_cast<unsigned>((s[0] - '0') * (s[2] - '0')) <= std::max(2u, pus)) shapes.push_back(s);
    omp_set_max_active_levels(2);
    for (const auto& shape : shapes) {
        const auto x = shape.find('x');
        const int outer = std::stoi(shape.substr(0, x)), inner = std::stoi(shape.substr(x + 1));
        ccnuma::plan_options po;
        po.oversubscribe = true;
        const auto plan = ccnuma::make_plan(
            topo, ccnuma::binding_spec::parse(std::to_string(outer) + ",scatter," + std::to_string(inner) + ",subscatter"), po);
        for (std::size_t n : sizes_or(o, {2000000})) {
            need_memory("nested-stream", 3.0 * outer, n);
            out.progress("nested-stream: " + shape + ", n = " + std::to_string(n) + " per team");
            // One set of arrays per inner team, first touched by that team inside the nested
            // region (with the binding of the variant that runs first: each variant re-binds).
            std::vector<std::unique_ptr<double[]>> a, b, c;
            for (int k = 0; k < outer; ++k) {
                a.emplace_back(new double[n]);
                b.emplace_back(new double[n]);
                c.emplace_back(new double[n]);
            }
            auto run = [&](bool bind, std::size_t sweeps, bool init) {
#pragma omp parallel num_threads(outer)
                {
                    if (bind) affinity::pin(plan);
                    else affinity::release();
                    const auto team = static_cast<std::size_t>(omp_get_thread_num());
                    double *pa = a[team].get(), *pb = b[team].get(), *pc = c[team].get();
#pragma omp parallel num_threads(inner)
                    {
                        if (bind) affinity::pin(plan);
                        else affinity::release();
                        if (init) {
#pragma omp for schedule(static)
                            for (std::size_t i = 0; i < n; ++i) {
                                pa[i] = 0;
                                pb[i] = value(i, 1);
                                pc[i] = value(i, 2);
                            }
                        }
                        for (std::size_t s = 0; s < sweeps; ++s) stream_triad(pa, pb, pc, n);
                    }
                }
            };
            run(true, 0, true);
            std::vector<variant> v{timed("unbound", [&](std::size_t k) { run(false, k, false); }),
                                   timed("bound " + std::to_string(outer) + ",scatter," + std::to_string(inner) + ",subscatter",
                                         [&](std::size_t k) { run(true, k, false); })};
            const auto m = measure(v, o.reps, o.min_time);
            for (int k = 0; k < outer; ++k)
                check_close("nested-stream team " + std::to_string(k) + ": a", a[static_cast<std::size_t>(k)].get(), n,
                            [](std::size_t i) { return value(i, 1) + 3.0 * value(i, 2); });
            const double nn = static_cast<double>(n) * outer;
            for (std::size_t k = 0; k < 2; ++k) {
                auto r = bandwidth("nested-stream", shape + " " + v[k].name, n, static_cast<unsigned>(outer * inner), m, k, 24 * nn,
                                   32 * nn, 2 * nn);
                out.add(std::move(r));
            }
        }
    }
#pragma omp parallel
    affinity::release();
}

}  // namespace bench
