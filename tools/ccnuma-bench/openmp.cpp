// What the OpenMP runtime and the caches cost: false sharing (the course), EPCC-style
// synchronization overhead and nested STREAM, bound and unbound (the binding paper).

#include "kernels.hpp"
#include "paired.hpp"
#include "stats.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// ---- false-sharing ---------------------------------------------------------------------------

namespace {

// a[i] = a[i] * 0.5 + 1: every element written, by the thread the schedule gives it to. With
// schedule(static,1) neighbours in one cache line belong to different threads. The team is an
// argument so that the 1-thread control runs the same code in the same measurement.
__attribute__((noinline)) void update_static1(double* a, std::size_t n, std::size_t sweeps, int threads) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static, 1) num_threads(threads)
        for (std::size_t i = 0; i < n; ++i) a[i] = a[i] * 0.5 + 1.0;
        escape(a);
    }
}
__attribute__((noinline)) void update_static(double* a, std::size_t n, std::size_t sweeps, int threads) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (std::size_t i = 0; i < n; ++i) a[i] = a[i] * 0.5 + 1.0;
        escape(a);
    }
}
// Partial sums kept in memory, one per thread: adjacent doubles in one line, or one padded
// slot per thread (ccnuma::per_thread). The volatile store is what a real accumulator that is
// read elsewhere costs; without it the compiler keeps the sum in a register and there is no
// sharing to measure.
__attribute__((noinline)) double partial_shared(const double* x, std::size_t n, double* partial, std::size_t sweeps,
                                                int threads) {
    double total = 0;
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel num_threads(threads)
        {
            volatile double* mine = &partial[omp_get_thread_num()];
            *mine = 0;
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < n; ++i) *mine = *mine + x[i];
        }
        total = 0;
        for (int t = 0; t < threads; ++t) total += partial[t];
    }
    return total;
}
__attribute__((noinline)) double partial_padded(const double* x, std::size_t n, ccnuma::per_thread<double>& partial,
                                                std::size_t sweeps, int threads) {
    double total = 0;
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel num_threads(threads)
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

/// The arrays of one team size: each variant updates its own array, so that no variant finds
/// another's lines in its cache.
struct fs_team {
    int threads;
    raw_doubles a_static1, a_static;
    std::vector<double> shared;
    ccnuma::per_thread<double> padded;
    double s_shared = 0, s_padded = 0;
    fs_team(int t, std::size_t n)
        : threads(t), a_static1(make_raw_doubles(n)), a_static(make_raw_doubles(n)), shared(static_cast<std::size_t>(t) + 8),
          padded(static_cast<unsigned>(t)) {
        double* p1 = a_static1.get();
        double* p2 = a_static.get();
#pragma omp parallel for schedule(static) num_threads(t)
        for (std::size_t i = 0; i < n; ++i) p1[i] = p2[i] = 2.0;  // the fixed point of a * 0.5 + 1
    }
};

std::string ratio_text(const stats_paired::interval& r) {
    if (r.pairs == 0) return "no pairs";
    if (!(std::isfinite(r.hi) && r.lo > 0)) return stats_paired::ratio_text(r.estimate) + " (no interval)";
    return stats_paired::ratio_text(r.estimate) + " [" + stats_paired::ratio_text(r.lo) + ", " + stats_paired::ratio_text(r.hi) + "]";
}

}  // namespace

// Over 80 lines: one experiment read top to bottom: the four variants and their 1-thread
// controls share the arrays their lambdas capture, and each count is checked where it is made.
void false_sharing(const options& o, report& out) {
    // The 1-thread control runs in every measurement, interleaved with the team it controls, so
    // that each round gives a real pair: a team of 1 runs the same schedules and layouts, where
    // no line can be shared, and what it costs is loop and schedule overhead.
    std::vector<unsigned> teams;
    for (unsigned t : team_sizes(o))
        if (t > 1 && std::find(teams.begin(), teams.end(), t) == teams.end()) teams.push_back(t);
    if (teams.empty())
        out.note("false-sharing: no thread count above 1 (--threads): only the 1-thread control runs, false sharing is not "
                 "measured");
    const bool control_only = teams.empty();
    if (control_only) teams.push_back(1);
    for (unsigned t : teams) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {100000})) {
            need_memory("false-sharing", control_only ? 3 : 5, n);
            out.progress("false-sharing: n = " + std::to_string(n) + ", " + std::to_string(t) + " threads and the 1-thread control");
            raw_doubles x = make_raw_doubles(n);
            double* px = x.get();
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < n; ++i) px[i] = value(i, 1);
            std::vector<std::unique_ptr<fs_team>> runs;
            runs.push_back(std::make_unique<fs_team>(1, n));
            if (!control_only) runs.push_back(std::make_unique<fs_team>(static_cast<int>(t), n));
            std::vector<variant> v;
            for (auto& run : runs) {
                fs_team* r = run.get();
                const int th = r->threads;
                v.push_back(timed("a[i] update, schedule(static,1)", [r, n, th](std::size_t k) { update_static1(r->a_static1.get(), n, k, th); }));
                v.push_back(timed("a[i] update, schedule(static)", [r, n, th](std::size_t k) { update_static(r->a_static.get(), n, k, th); }));
                v.push_back(timed("partial sums in double[threads]",
                                  [r, px, n, th](std::size_t k) { r->s_shared = partial_shared(px, n, r->shared.data(), k, th); }));
                v.push_back(timed("partial sums in ccnuma::per_thread",
                                  [r, px, n, th](std::size_t k) { r->s_padded = partial_padded(px, n, r->padded, k, th); }));
            }
            const auto m = measure(v, o.reps, o.min_time);
            double expected = 0;
            for (std::size_t i = 0; i < n; ++i) expected += value(i, 1);
            for (const auto& r : runs) {
                const std::string team = std::to_string(r->threads) + " thread(s)";
                for (const double* a : {r->a_static1.get(), r->a_static.get()})
                    for (std::size_t i = 0; i < n; ++i)
                        if (a[i] != 2.0)
                            wrong("false-sharing update, " + team + ": a[" + std::to_string(i) + "] = " + std::to_string(a[i]));
                if (r->s_shared != expected || r->s_padded != expected)
                    wrong("false-sharing partial sums, " + team + ": " + std::to_string(r->s_shared) + ", " +
                          std::to_string(r->s_padded) + ", expected " + std::to_string(expected));
            }
            // Per round: (static,1 / static at t threads) / (the same at 1 thread), and likewise
            // for the layouts. What remains above 1 is what sharing lines costs.
            const auto& s = m.seconds;
            auto per_round = [&s](std::size_t a, std::size_t b) {
                std::vector<double> r;
                for (std::size_t i = 0; i < s[a].size(); ++i) r.push_back(s[a][i] / s[b][i]);
                return r;
            };
            stats_paired::interval schedule_alone, layout_alone;
            if (!control_only) {
                schedule_alone = stats_paired::paired_ratio(per_round(4, 5), per_round(0, 1));
                layout_alone = stats_paired::paired_ratio(per_round(6, 7), per_round(2, 3));
            }
            const bool several = teams.size() > 1;
            for (std::size_t k = 0; k < v.size(); ++k) {
                const unsigned th = static_cast<unsigned>(runs[k / 4]->threads);
                result r;
                r.kernel = "false-sharing";
                // One control per measurement: with several team sizes each has its own, named
                // for the team it was paired with.
                r.variant = v[k].name + (several && th == 1 ? " (paired with " + std::to_string(t) + " thr)" : "");
                r.n = n;
                r.threads = th;
                r.batch = m.batch;
                r.seconds = s[k];
                if (k < m.cpu_seconds.size()) r.cpu_seconds = m.cpu_seconds[k];
                r.unit = "Mupd/s";
                for (double sec : r.seconds) r.values.push_back(static_cast<double>(n) / sec / 1e6);
                if (k % 4 == 0 || k % 4 == 2)
                    put_ratio(r, k % 4 == 0 ? "time_over_static" : "time_over_per_thread", stats_paired::paired_ratio(s[k], s[k + 1]));
                if (th > 1 && (k % 4 == 0 || k % 4 == 2)) put_ratio(r, "false_sharing_alone", k % 4 == 0 ? schedule_alone : layout_alone);
                out.add(std::move(r));
            }
            if (control_only) continue;
            auto verdict = [](const stats_paired::interval& r) {
                const auto j = stats_paired::judge(r);
                if (j == stats_paired::verdict::higher) return std::string("false sharing measurable (higher with 95% confidence)");
                return stats_paired::to_string(j);
            };
            const std::string team = std::to_string(t) + " threads";
            out.note("false-sharing n = " + std::to_string(n) + ": time ratios, Hodges-Lehmann estimate [95% interval] over " +
                     std::to_string(s[0].size()) + " rounds, each pairing " + team + " with the 1-thread control");
            out.note("  a[i] update, static,1 / static: " + ratio_text(stats_paired::paired_ratio(s[4], s[5])) + " at " + team +
                     ", " + ratio_text(stats_paired::paired_ratio(s[0], s[1])) +
                     " at 1 thread (loop and schedule overhead); false sharing alone " + stats_paired::to_string(schedule_alone) +
                     ": " + verdict(schedule_alone));
            out.note("  partial sums, double[threads] / ccnuma::per_thread: " + ratio_text(stats_paired::paired_ratio(s[6], s[7])) +
                     " at " + team + ", " + ratio_text(stats_paired::paired_ratio(s[2], s[3])) +
                     " at 1 thread; false sharing alone " + stats_paired::to_string(layout_alone) + ": " + verdict(layout_alone));
        }
    }
}

// ---- sync (EPCC syncbench, nested) -----------------------------------------------------------

namespace {

// EPCC's delay: a dependent chain the compiler cannot shorten.
__attribute__((noinline)) void delay(int length) {
    double a = 0;
    for (int i = 0; i < length; ++i) {
        a += i;
        escape(&a);
    }
}

// What this kernel last did to the calling thread's mask: a PU, released, or nothing yet (a
// thread the runtime has just created inherits its creator's mask, which may be either).
constexpr int placed_unknown = -1, placed_released = -2;
thread_local int placed_on = placed_unknown;

struct alignas(64) counter_slot {
    long n = 0;
};

enum class construct { parallel, for_loop, barrier, reduction };
constexpr construct constructs[] = {construct::parallel, construct::for_loop, construct::barrier, construct::reduction};
const char* name_of(construct c) {
    switch (c) {
        case construct::parallel: return "PARALLEL";
        case construct::for_loop: return "FOR";
        case construct::barrier: return "BARRIER";
        case construct::reduction: return "REDUCTION";
    }
    return "?";
}

/// One Y x Z shape: the outer team of Y threads each opens an inner team of Z threads, and the
/// construct timed is executed by the inner teams (the binding paper's nested syncbench).
class nested_sync {
public:
    nested_sync(int outer, int inner, const ccnuma::binding_plan& plan)
        : y_(outer), z_(inner), plan_(plan), pu_(static_cast<std::size_t>(outer * inner)),
          delays_(static_cast<std::size_t>(outer * inner)), reduced_(static_cast<std::size_t>(outer)) {
        for (int y = 0; y < y_; ++y)
            for (int z = 0; z < z_; ++z) {
                const unsigned path[] = {static_cast<unsigned>(y), static_cast<unsigned>(z)};
                const auto* slot = plan.find(path);
                pu_[index(y, z)] = slot ? static_cast<int>(slot->pu) : placed_released;
            }
    }

    int delay_length = 0;

    /// Untimed, before every timed call: every thread of the shape placed as the next call
    /// wants it (the variants alternate bound and unbound), the counts cleared, and the
    /// rebinds the timed call will make counted into `rebinds`.
    void prepare(bool bound, long* rebinds) {
        long ignored = 0;
        rebinds_ = &ignored;
        for (auto& d : delays_) d.n = 0;
        int outer_team = 0, inner_short = 0;
#pragma omp parallel num_threads(y_)
        {
            const int y = omp_get_thread_num();
            place(bound, y, 0);
#pragma omp single
            outer_team = omp_get_num_threads();
#pragma omp parallel num_threads(z_)
            {
                place(bound, y, omp_get_thread_num());
                if (omp_get_thread_num() == 0 && omp_get_num_threads() != z_) {
#pragma omp atomic write
                    inner_short = omp_get_num_threads();
                }
            }
        }
        if (outer_team != y_ || inner_short)
            throw std::runtime_error("sync " + shape() + ": the runtime gave teams of " + std::to_string(outer_team) + " x " +
                                     std::to_string(inner_short ? inner_short : z_) +
                                     " threads (OMP_THREAD_LIMIT, OMP_MAX_ACTIVE_LEVELS or OMP_DYNAMIC?)");
        rebinds_ = rebinds;
    }

    /// k constructs of kind c in every inner team, as EPCC's syncbench times them.
    // Over 80 lines: one switch over EPCC's constructs, each its own nested region inline, as
    // syncbench writes them; a function per construct would put a call inside the timed region.
    void run(construct c, bool bound, std::size_t k) {
        switch (c) {
            case construct::parallel:
#pragma omp parallel num_threads(y_)
            {
                const int y = omp_get_thread_num();
                place(bound, y, 0);
                for (std::size_t j = 0; j < k; ++j) {
#pragma omp parallel num_threads(z_)
                    {
                        // The paper bound at every fork (OPARI's pomp_parallel_begin), since the
                        // runtime may hand out other threads; here only a thread whose mask is
                        // not the one wanted pays the system call.
                        const int z = omp_get_thread_num();
                        place(bound, y, z);
                        delay(delay_length);
                        ++delays_[index(y, z)].n;
                    }
                }
            }
                break;
            case construct::for_loop:
#pragma omp parallel num_threads(y_)
            {
                const int y = omp_get_thread_num();
                place(bound, y, 0);
#pragma omp parallel num_threads(z_)
                {
                    const int z = omp_get_thread_num();
                    place(bound, y, z);
                    long mine = 0;
                    for (std::size_t j = 0; j < k; ++j) {
#pragma omp for schedule(static)
                        for (int i = 0; i < z_; ++i) {
                            delay(delay_length);
                            ++mine;
                        }
                    }
                    delays_[index(y, z)].n = mine;
                }
            }
                break;
            case construct::barrier:
#pragma omp parallel num_threads(y_)
            {
                const int y = omp_get_thread_num();
                place(bound, y, 0);
#pragma omp parallel num_threads(z_)
                {
                    const int z = omp_get_thread_num();
                    place(bound, y, z);
                    long mine = 0;
                    for (std::size_t j = 0; j < k; ++j) {
                        delay(delay_length);
                        ++mine;
#pragma omp barrier
                    }
                    delays_[index(y, z)].n = mine;
                }
            }
                break;
            case construct::reduction:
#pragma omp parallel num_threads(y_)
            {
                const int y = omp_get_thread_num();
                place(bound, y, 0);
                long total = 0;
                for (std::size_t j = 0; j < k; ++j) {
                    long x = 0;
#pragma omp parallel num_threads(z_) reduction(+ : x)
                    {
                        const int z = omp_get_thread_num();
                        place(bound, y, z);
                        delay(delay_length);
                        x += 1;
                        ++delays_[index(y, z)].n;
                    }
                    total += x;
                }
                reduced_[static_cast<std::size_t>(y)] = total;
            }
                break;
        }
        // Checked in every call, outside the outer region: O(Y x Z), nothing beside k constructs.
        if (!error_.empty()) return;
        for (int y = 0; y < y_; ++y) {
            for (int z = 0; z < z_; ++z)
                if (delays_[index(y, z)].n != static_cast<long>(k))
                    error_ = "sync " + shape() + " " + name_of(c) + (bound ? ", bound" : ", unbound") + ": inner thread (" +
                             std::to_string(y) + ", " + std::to_string(z) + ") ran " + std::to_string(delays_[index(y, z)].n) +
                             " delays in " + std::to_string(k) + " constructs, expected one per construct";
            if (c == construct::reduction && reduced_[static_cast<std::size_t>(y)] != static_cast<long>(k) * z_)
                error_ = "sync " + shape() + " REDUCTION" + (bound ? ", bound" : ", unbound") + ": team " + std::to_string(y) +
                         " reduced " + std::to_string(reduced_[static_cast<std::size_t>(y)]) + " over " + std::to_string(k) +
                         " constructs, expected " + std::to_string(static_cast<long>(k) * z_);
        }
    }

    const std::string& error() const { return error_; }
    std::string shape() const { return std::to_string(y_) + "x" + std::to_string(z_); }

private:
    std::size_t index(int y, int z) const { return static_cast<std::size_t>(y * z_ + z); }

    void place(bool bound, int y, int z) {
        const int want = bound ? pu_[index(y, z)] : placed_released;
        if (placed_on == want) return;
        if (want == placed_released) affinity::release();
        else affinity::pin(plan_);
        placed_on = want;
#pragma omp atomic
        ++*rebinds_;
    }

    int y_, z_;
    const ccnuma::binding_plan& plan_;
    std::vector<int> pu_;                  ///< the plan's PU of inner thread (y, z)
    std::vector<counter_slot> delays_;     ///< delays each inner thread ran in the last call
    std::vector<long> reduced_;            ///< each inner team's reduction total in the last call
    long* rebinds_ = nullptr;
    std::string error_;
};

/// Seconds per iteration of delay(): the best of a few long runs.
double delay_seconds_per_iteration() {
    double best = INFINITY;
    for (int r = 0; r < 5; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        delay(100000);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best / 100000;
}

std::string us(double seconds_or_us, int digits = 3) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", digits, seconds_or_us);
    return buf;
}

/// The shapes Y x Z to run: --bind's own (its two levels), --teams, every Y x Z with Y * Z in
/// --threads, or nested-stream's defaults within the PUs.
std::vector<std::pair<int, int>> sync_shapes(const options& o, unsigned pus) {
    std::vector<std::pair<int, int>> shapes;
    if (!o.bind.empty()) {
        if (!o.teams.empty()) throw std::invalid_argument("sync: --bind gives the shape (its two levels): drop --teams");
        const auto bind_spec = ccnuma::binding_spec::parse(o.bind);
        const auto& levels = bind_spec.levels();
        if (levels.size() > 2) throw std::invalid_argument("sync: --bind \"" + o.bind + "\" has more than two levels (Y,how,Z,how)");
        shapes.emplace_back(static_cast<int>(levels[0].threads), levels.size() > 1 ? static_cast<int>(levels[1].threads) : 1);
    } else if (!o.teams.empty()) {
        if (!o.threads.empty()) throw std::invalid_argument("sync: --teams and --threads both give the shapes: give one of them");
        for (const auto& s : o.teams) {
            const auto x = s.find('x');
            shapes.emplace_back(std::stoi(s.substr(0, x)), std::stoi(s.substr(x + 1)));
        }
    } else if (!o.threads.empty()) {
        for (unsigned t : o.threads)
            for (unsigned y = 1; y <= t; ++y)
                if (t % y == 0) shapes.emplace_back(static_cast<int>(y), static_cast<int>(t / y));
    } else {
        for (auto s : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}, std::pair{2, 2}})
            if (static_cast<unsigned>(s.first * s.second) <= std::max(2u, pus)) shapes.push_back(s);
    }
    return shapes;
}

/// How long each construct's delay is and how often calls repeat it.
struct sync_timing {
    double probed = 0;         ///< the probed overhead per construct, seconds
    std::size_t ref_repeat = 1;  ///< delays the reference runs per construct timed
    std::size_t inner_reps = 1;  ///< constructs per measurement
};

/// Sets ns.delay_length as EPCC does, from an unbound probe of the overhead, and says how the
/// reference and the measurements repeat it.
sync_timing calibrate(nested_sync& ns, const options& o, double per_iteration) {
    // EPCC's delay length: a delay about as long as the overhead it is compared with. The
    // overhead is probed here, unbound, with an empty delay, in short calls of 10
    // constructs: per construct the fastest of 5 calls (on a loaded machine a call that
    // waited for a time slice takes milliseconds), then the median of the four constructs,
    // kept between 0.1 us (EPCC's default delay) and 100 us.
    long probe_rebinds = 0;
    std::vector<variant> probe;
    for (construct c : constructs)
        probe.push_back(timed(name_of(c), [&ns, c](std::size_t k) { ns.run(c, false, k); },
                              [&ns, &probe_rebinds] { ns.prepare(false, &probe_rebinds); }));
    ns.delay_length = 0;
    const auto pm = measure(probe, 5, o.min_time, 10);
    std::vector<double> probe_best;
    for (const auto& sec : pm.seconds) probe_best.push_back(summarize(sec).min);
    const double probed = summarize(probe_best).median;
    const double target = std::clamp(probed, 1e-7, 1e-4);
    ns.delay_length = static_cast<int>(std::max(1.0, std::round(target / per_iteration)));
    // The reference runs its delay this many times per construct timed, so that its calls
    // last about as long as the constructs' (one batch for all variants); its time is
    // divided back to one delay.
    const double delay_seconds = per_iteration * ns.delay_length;
    const auto ref_repeat = static_cast<std::size_t>(std::max(1.0, std::round((probed + delay_seconds) / delay_seconds)));
    // EPCC's inner repetitions: enough constructs for a measurement of --min-time, from the
    // probe rather than from one timed call, which a time slice lost on a loaded machine
    // would cut to a single construct.
    const auto inner_reps = static_cast<std::size_t>(std::max(1.0, std::ceil(o.min_time / (probed + delay_seconds))));

    return {probed, ref_repeat, inner_reps};
}

/// Each variant's overhead per construct over the reference, mean with its 95% interval, and
/// whether it is indistinguishable from noise.
struct sync_overheads {
    std::vector<stats_paired::mean_ci> overhead;
    std::vector<bool> noise;
};

/// The rows of one shape: the reference and each construct unbound and bound, with overhead,
/// rebinds and the bound/unbound paired ratio as counters.
sync_overheads add_sync_rows(report& out, const std::vector<variant>& v, const measurement& m, const nested_sync& ns,
                             unsigned threads, std::size_t ref_repeat, const std::vector<long>& rebinds,
                             const std::vector<std::size_t>& timed_constructs) {
    const std::string shape = ns.shape();
    const auto& s = m.seconds;
    const std::size_t reps = s[0].size();
    sync_overheads so{std::vector<stats_paired::mean_ci>(v.size()), std::vector<bool>(v.size(), false)};
    auto& overhead = so.overhead;
    auto& noise = so.noise;
    for (std::size_t k = 0; k < v.size(); ++k) {
        result r;
        r.kernel = "sync";
        r.variant = k == 0 ? shape + " reference (delay only)" : v[k].name;
        r.n = static_cast<std::size_t>(ns.delay_length);
        r.threads = k == 0 ? 1 : threads;
        r.batch = k == 0 ? m.batch * ref_repeat : m.batch;
        r.seconds = s[k];
        if (k < m.cpu_seconds.size()) r.cpu_seconds = m.cpu_seconds[k];
        r.unit = "us";
        r.higher_is_better = false;
        for (double sec : r.seconds) r.values.push_back(sec * 1e6);
        if (k > 0) {
            std::vector<double> per_rep;
            for (std::size_t i = 0; i < reps; ++i) per_rep.push_back((s[k][i] - s[0][i]) * 1e6);
            overhead[k] = stats_paired::mean_with_ci(per_rep);
            const double lo = overhead[k].mean - overhead[k].half_width, hi = overhead[k].mean + overhead[k].half_width;
            noise[k] = overhead[k].mean < 0 || !(lo > 0);
            r.counters["noise"] = noise[k] ? 1 : 0;
            if (!noise[k]) r.counters["overhead_us"] = overhead[k].mean;
            if (std::isfinite(hi)) {  // one repetition has no interval
                r.counters["overhead_lo_us"] = lo;
                r.counters["overhead_hi_us"] = hi;
            }
            // Threads the timed calls had to (re)bind, per construct: about Z - 1 for a fork
            // per construct where the runtime starts new threads for every nested team
            // (libgomp), about 0 where it reuses them.
            r.counters["rebinds_per_construct"] =
                static_cast<double>(rebinds[k]) / static_cast<double>(std::max<std::size_t>(1, timed_constructs[k]));
            if (k % 2 == 0) {  // bound, after its unbound twin
                put_ratio(r, "vs_unbound", stats_paired::paired_ratio(s[k], s[k - 1]));
            }
        }
        out.add(std::move(r));
    }

    return so;
}

/// The notes of one shape: the team against the PUs, the delay, and the overhead table.
void sync_notes(report& out, const measurement& m, const nested_sync& ns, const std::string& spec, unsigned threads,
                unsigned pus, const sync_timing& timing, const sync_overheads& so) {
    const std::string shape = ns.shape();
    const auto& s = m.seconds;
    const std::size_t reps = s[0].size();
    const bool oversubscribed = threads > pus;
    const double probed = timing.probed;
    const std::size_t ref_repeat = timing.ref_repeat;
    const auto& overhead = so.overhead;
    const auto& noise = so.noise;
    const double delay_us = summarize(s[0]).median * 1e6;
    out.note("sync " + shape + ": " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " on " +
             std::to_string(pus) + " PUs" +
             (oversubscribed ? ", OVERSUBSCRIBED: threads share PUs and every overhead includes waiting for descheduled "
                               "threads"
                             : "") +
             "; bound = " + spec + ", unbound = the process's mask");
    out.note("sync " + shape + ": delay " + std::to_string(ns.delay_length) + " iterations = " + us(delay_us) +
             " us (probed overhead " + us(probed * 1e6) + " us), " + std::to_string(m.batch) +
             " constructs per measurement (the reference: " + std::to_string(m.batch * ref_repeat) + " delays), " +
             std::to_string(reps) + " outer repetitions");
    auto cell = [&](std::size_t k) {
        const auto& oc = overhead[k];
        if (noise[k])
            return "< noise (CI " + us(oc.mean - oc.half_width) + " to " + us(oc.mean + oc.half_width) + ")";
        return us(oc.mean) + " [" + us(oc.mean - oc.half_width) + ", " + us(oc.mean + oc.half_width) + "]";
    };
    out.note("sync " + shape + ": overhead per construct in us, mean [95% CI]; bound/unbound is the paired ratio of the "
             "time per construct, delay included");
    for (std::size_t c = 0; c < std::size(constructs); ++c) {
        const std::size_t u = 1 + 2 * c, b = u + 1;
        const auto ratio = stats_paired::paired_ratio(s[b], s[u]);
        char head[24];
        std::snprintf(head, sizeof head, "%-10s", name_of(constructs[c]));
        out.note("  " + std::string(head) + " unbound " + cell(u) + ", bound " + cell(b) + "; bound/unbound " +
                 stats_paired::to_string(ratio) + ": " + stats_paired::to_string(stats_paired::judge(ratio)));
    }
}

}  // namespace

void sync(const options& o, report& out) {
    const auto topo = ccnuma::topology::load({});
    const unsigned pus = static_cast<unsigned>(topo.allowed_cpus().size());
    const auto shapes = sync_shapes(o, pus);
    omp_set_max_active_levels(2);
    const double per_iteration = delay_seconds_per_iteration();
    out.note("sync: EPCC syncbench in nested teams Y x Z, the construct executed by every inner team. The table's us are "
             "the time per construct with the delay inside; overhead = that minus the delay alone (the reference) in the "
             "same round, mean [95% CI] over the --reps outer repetitions, in the notes and the overhead_* counters. An "
             "overhead below 0 or with a CI holding 0 is noise=1 and has no overhead_us");
    if (omp_get_proc_bind() != omp_proc_bind_false)
        out.note("sync: OMP_PROC_BIND is set, so the runtime binds threads itself: \"unbound\" is the mask the tool restores, "
                 "which the runtime may override for threads it creates");
    for (const auto& [Y, Z] : shapes) {
        const std::string spec = o.bind.empty() ? std::to_string(Y) + ",scatter," + std::to_string(Z) + ",subscatter" : o.bind;
        ccnuma::plan_options po;
        po.oversubscribe = true;
        const auto plan = ccnuma::make_plan(topo, ccnuma::binding_spec::parse(spec), po);
        nested_sync ns(Y, Z, plan);
        const std::string shape = ns.shape();
        const auto threads = static_cast<unsigned>(Y * Z);
        out.progress("sync: " + shape + ", bound " + spec + " and unbound");

        const auto timing = calibrate(ns, o, per_iteration);
        const std::size_t ref_repeat = timing.ref_repeat, inner_reps = timing.inner_reps;
        std::vector<long> rebinds(1 + 2 * std::size(constructs), 0);
        std::vector<std::size_t> timed_constructs(rebinds.size(), 0);
        std::vector<variant> v;
        v.push_back(timed(
            "reference (delay only)",
            [&ns, ref_repeat](std::size_t k) {
                for (std::size_t j = 0; j < k * ref_repeat; ++j) delay(ns.delay_length);
            },
            [] {
                // EPCC's reference: the delay alone on the master thread, which floats.
                affinity::release();
                placed_on = placed_released;
            }));
        for (construct c : constructs)
            for (bool bound : {false, true}) {
                const std::size_t idx = v.size();
                v.push_back(timed(shape + " " + name_of(c) + (bound ? ", bound" : ", unbound"),
                                  [&ns, c, bound, &timed_constructs, idx](std::size_t k) {
                                      ns.run(c, bound, k);
                                      timed_constructs[idx] += k;
                                  },
                                  [&ns, bound, &rebinds, idx] { ns.prepare(bound, &rebinds[idx]); }));
            }
        auto m = measure(v, o.reps, o.min_time, inner_reps);
        if (!ns.error().empty()) wrong(ns.error());
        for (double& sec : m.seconds[0]) sec /= static_cast<double>(ref_repeat);
        if (!m.cpu_seconds.empty())
            for (double& sec : m.cpu_seconds[0]) sec /= static_cast<double>(ref_repeat);
        // The report reads the master's mask (allowed PUs, the empty region it times): not the
        // one PU the last bound variant left it on.
        affinity::release();
        placed_on = placed_released;

        const auto so = add_sync_rows(out, v, m, ns, threads, ref_repeat, rebinds, timed_constructs);
        sync_notes(out, m, ns, spec, threads, pus, timing, so);
    }
#pragma omp parallel
    affinity::release();
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
