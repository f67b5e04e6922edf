#pragma once
// How ccnuma-bench times: the variants of one kernel in one run, interleaved repetition by
// repetition so that drifting clocks and noisy neighbours hit all variants alike (Google
// Benchmark's reducing_variance.md), with min, median and max over the repetitions.

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bench {

struct stats {
    double min = 0, median = 0, max = 0, mean = 0, stddev = 0;
};

inline stats summarize(std::vector<double> v) {
    stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    s.min = v.front();
    s.max = v.back();
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    for (double x : v) s.mean += x;
    s.mean /= static_cast<double>(n);
    for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
    s.stddev = n > 1 ? std::sqrt(s.stddev / static_cast<double>(n - 1)) : 0.0;
    return s;
}

/// One variant of a kernel. run(batch) does `batch` sweeps and returns their seconds, or NaN to
/// have the harness time it with the wall clock (a peer program reports its own time).
/// setup(), if set, runs before every timed call, untimed (binding a team, say).
/// fresh(), if set, gives the variant new arrays once per repetition, untimed, before the
/// repetition's untimed sweep (meant with start_state::own_sweep, so that the timed call does
/// not run on arrays only their construction touched): new allocations, from 128 KiB up new
/// mappings whose frames the kernel draws again (main.cpp fixes glibc's threshold). L2 and L3
/// are indexed by physical address, and one draw of frames can put more of an array into the
/// same sets than another: eight identical arrays that filled most of an L2 summed 1.04x to 1.12x apart
/// on this project's AMD VM (bench/frames_spread), and one binary's sum of 1.6 MB read 0.99 and
/// 0.66 of the expert's in two runs on a Xeon with a 2 MiB L2 (docs/tools/ccnuma-bench.md).
/// An array kept for the whole run keeps its draw, and a ratio between two variants is then
/// partly a ratio between their frames.
struct variant {
    std::string name;
    std::function<double(std::size_t batch)> run;
    std::function<void()> setup{};
    std::function<void()> fresh{};
};

/// A variant whose run() is timed by the harness.
template <class F>
variant timed(std::string name, F f, std::function<void()> setup = {}) {
    return {std::move(name), [f](std::size_t batch) mutable {
                f(batch);
                return std::nan("");
            },
            std::move(setup)};
}

/// Seconds per sweep of every variant, repetition after repetition: seconds[v][r], wall time
/// (or the variant's own time); cpu_seconds[v][r], the CPU time the same call cost.
struct measurement {
    std::size_t batch = 1;
    std::vector<std::vector<double>> seconds;
    std::vector<std::vector<double>> cpu_seconds;
};

/// CPU seconds of this process's threads (spinning OpenMP workers included) plus those of its
/// waited-for children: a peer program (likwid-bench) is a child, and its CPU time is what its
/// call cost. Google Benchmark's cpu_time is CPU time too, so a team that waits idle shows there.
inline double cpu_seconds_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    rusage children{};
    getrusage(RUSAGE_CHILDREN, &children);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec) +
           static_cast<double>(children.ru_utime.tv_sec + children.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(children.ru_utime.tv_usec + children.ru_stime.tv_usec);
}

/// The k-th variant of round r. Odd rounds run the variants backwards, so that what one variant
/// leaves behind (warm caches, sleeping worker threads) favours each of them about equally; but
/// no variant runs twice in a row across a round's edge: the backward round starts at the
/// second-last variant and ends with the last one (v-2, ..., 0, v-1). A plain reversal ran the
/// first and the last variant back to back, and their arrays, still in a 300 MiB L3, made them
/// the fastest of nine placements that run the same loop (36.6 and 33.6 GB/s against 26.7 to
/// 32.4 for the sum of 80 MB).
inline std::size_t round_order(std::size_t v, int r, std::size_t k) {
    if (r % 2 == 0 || v < 2) return k;
    return k + 1 == v ? v - 1 : v - 2 - k;
}

/// What a timed call starts from.
enum class start_state {
    /// Whatever the variant before it left: the caches, the team's threads (sync, the probes).
    as_left,
    /// The state the variant's own sweep leaves: one untimed sweep of the same variant right
    /// before each timed call, as in a loop that calls it again and again (and in STREAM's and
    /// likwid-bench's iterations). For arrays between a fifth of the LLC and the LLC, whether a
    /// variant found its data cached had depended on which variants ran between its calls and
    /// which arrays they shared: at 160 MB under a 300 MiB L3, the expert's two sums, which
    /// read one array, ran 1.2 to 1.6 times faster in the rounds where the other had just read
    /// it, and `ccnuma::sum`, alone on its array, never had such a round (docs/tools/
    /// ccnuma-bench.md, issue 35). A variant that times itself in a process of its own (a
    /// likwid-bench peer) gets no such sweep: nothing of this process's state reaches it.
    own_sweep,
};

/// Chooses one batch for all variants so that the first one's timed call takes at least
/// min_seconds (one warm-up call per variant first), then times `repetitions` rounds of all
/// variants, alternating their order. `fixed_batch` > 0 skips the calibration.
inline measurement measure(const std::vector<variant>& variants, int repetitions, double min_seconds,
                           std::size_t fixed_batch = 0, start_state start = start_state::as_left) {
    using clock = std::chrono::steady_clock;
    struct timing {
        double seconds, cpu;
        bool own;  // the variant timed itself (run() returned its seconds)
    };
    // `warm`: one untimed sweep first (start_state::own_sweep). It runs after the CPU clocks are
    // read, not before: reading them takes two system calls, and on a kernel that drops the TLB
    // at every system call (page-table isolation without PCID, the context's system_calls) a
    // timed sweep right after them started with an empty TLB, which a program calling the
    // kernel again and again does not; a likwid-bench peer never did. The CPU time then covers
    // both; the timed part's share of it is its share of their wall time (steady_clock reads
    // are no system call), since the untimed sweep may be slower (colder caches) than a timed
    // one, and with 1 thread cpu_time below real_time must still mean a wait for a CPU.
    auto call = [](const variant& v, std::size_t batch, bool warm) {
        if (v.setup) v.setup();
        const double c0 = cpu_seconds_now();
        const auto w0 = clock::now();
        if (warm) static_cast<void>(v.run(1));
        const auto t0 = clock::now();
        const double own = v.run(batch);
        const auto t1 = clock::now();
        const double cpu_all = cpu_seconds_now() - c0;
        const double wall = std::chrono::duration<double>(t1 - t0).count();
        const double wall_all = std::chrono::duration<double>(t1 - w0).count();
        const double cpu = warm && wall_all > 0 ? cpu_all * wall / wall_all : cpu_all;
        return timing{std::isnan(own) ? wall : own, cpu, !std::isnan(own)};
    };
    measurement m;
    std::vector<bool> warm_first(variants.size(), false);
    for (std::size_t i = 0; i < variants.size(); ++i)
        warm_first[i] = !call(variants[i], 1, false).own && start == start_state::own_sweep;
    if (fixed_batch) {
        m.batch = fixed_batch;
    } else {
        for (;;) {
            const double t = call(variants.front(), m.batch, false).seconds;
            if (t >= min_seconds || m.batch >= (std::size_t{1} << 30)) break;
            // Grow towards the target in one or two steps rather than by doubling: a slow
            // machine spends its time measuring, not calibrating.
            const double factor = t > 0 ? std::min(16.0, std::max(2.0, 1.2 * min_seconds / t)) : 16.0;
            m.batch = static_cast<std::size_t>(std::ceil(static_cast<double>(m.batch) * factor));
        }
    }
    m.seconds.assign(variants.size(), {});
    m.cpu_seconds.assign(variants.size(), {});
    for (int r = 0; r < repetitions; ++r)
        for (std::size_t k = 0; k < variants.size(); ++k) {
            const std::size_t i = round_order(variants.size(), r, k);
            if (variants[i].fresh) variants[i].fresh();
            const timing t = call(variants[i], m.batch, warm_first[i]);
            m.seconds[i].push_back(t.seconds / static_cast<double>(m.batch));
            m.cpu_seconds[i].push_back(t.cpu / static_cast<double>(m.batch));
        }
    return m;
}

}  // namespace bench
