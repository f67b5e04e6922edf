// ccnuma-bench's report: collects the results and prints each as a table row as it comes; the
// context (context.cpp), the JSON (report_json.cpp) and the CSV (report_csv.cpp) are written
// from what it collected.

#include "report.hpp"

#include "context.hpp"
#include "numbers.hpp"
#include "registry.hpp"
#include "stats.hpp"

#include "../common/output_file.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace bench {

std::string_view to_string(n_counts what) {
    switch (what) {
    case n_counts::elements_per_array: return "elements per array";
    case n_counts::elements_per_team_array: return "elements per array, a set of arrays per outer team";
    case n_counts::matrix_order: return "matrix order (N x N doubles)";
    case n_counts::matrix_rows: return "matrix rows";
    case n_counts::grid_side: return "grid side (N x N cells)";
    case n_counts::delay_iterations: return "delay loop iterations";
    }
    throw std::logic_error("ccnuma-bench: an n_counts without words");
}

namespace {

/// Seconds of one empty `omp parallel` region of `threads` threads: the fork/join and barrier
/// cost every sweep of a parallel kernel pays at least once. The median of 7 rounds, each long
/// enough (>= 1 ms) for the clock.
double empty_region_seconds(unsigned threads) {
    using clock = std::chrono::steady_clock;
    const int team = static_cast<int>(threads);
    auto round = [team](long k) {
        const auto t0 = clock::now();
        for (long i = 0; i < k; ++i) {
#pragma omp parallel num_threads(team)
            {
                // GCC deletes a parallel region with an empty body; this emits no instruction
                // but keeps the region, whose fork, join and barrier are what is timed.
                __asm__ __volatile__("" ::: "memory");
            }
        }
        return std::chrono::duration<double>(clock::now() - t0).count();
    };
    round(8);  // creates the team's threads, which later regions reuse
    long k = 8;
    while (round(k) < 1e-3 && k < (1L << 20)) k *= 4;
    std::vector<double> per;
    for (int r = 0; r < 7; ++r) per.push_back(round(k) / static_cast<double>(k));
    return summarize(per).median;
}

}  // namespace

result bandwidth(std::string kernel, std::string variant, std::size_t n, unsigned threads, const measurement& m,
                 std::size_t index, double bytes, double bytes_wa, double flops) {
    result r;
    r.kernel = std::move(kernel);
    r.variant = std::move(variant);
    r.n = n;
    r.threads = threads;
    r.batch = m.batch;
    r.seconds = m.seconds[index];
    if (index < m.cpu_seconds.size()) r.cpu_seconds = m.cpu_seconds[index];
    r.unit = "GB/s";
    for (double s : r.seconds) {
        r.values.push_back(bytes / s / 1e9);
        r.gbs_wa.push_back(bytes_wa / s / 1e9);
        r.mflops.push_back(flops / s / 1e6);
    }
    return r;
}

namespace {
n_counts n_of(const options& o) {
    // --only runs the triad alone; parse() refused any kernel the registry lacks.
    const kernel* k = find_kernel(o.only.empty() ? o.kernel : "triad");
    if (!k) throw std::logic_error("ccnuma-bench: a report for kernel \"" + o.kernel + "\", which the registry lacks");
    return k->n_is;
}
}  // namespace

report::report(const options& o) : o_(o), n_is_(n_of(o)) {
    start_load();
    // Fail before the run, not after minutes of it; the files themselves are written only at
    // the end (finish), so a failed or interrupted run leaves the old ones as they were.
    if (!o_.json.empty()) tools::check_output(o_.json, "JSON");
    if (!o_.csv.empty()) tools::check_output(o_.csv, "CSV");
    if (o_.quiet || !o_.only.empty()) return;
    for (const auto& [k, v] : context(o_))
        if (k != "warnings") std::printf("# %s: %s\n", k.c_str(), v.c_str());
    for (const auto& w : run_warnings(o_)) std::printf("# WARNING: %s\n", w.c_str());
    std::printf("# GB/s: the bytes the loop names (loads + stores), no write-allocate; GB/s+WA: plus the write-allocate read "
                "of every stored line. median [min, max] of %d repetitions, variants interleaved\n",
                o_.reps);
    std::printf("# notes flag a row \"fork/join-bound\" when its median sweep is shorter than 5 empty parallel regions of its "
                "team (measured in this run), \"spread\" when its slowest repetition took over 2x its fastest, "
                "\"oversubscribed\" when it has more threads than allowed PUs\n");
    std::fflush(stdout);
}

void report::note(const std::string& line) {
    notes_.push_back(line);
    std::printf("# %s\n", line.c_str());
    std::fflush(stdout);
}

void report::add_series(series s) {
    s.n_is = n_is_;
    std::printf("\n# series %s / %s, n = %zu (%s), %u threads\n#", s.kernel.c_str(), s.variant.c_str(), s.n,
                std::string(to_string(s.n_is)).c_str(), s.threads);
    for (const auto& c : s.columns) std::printf(" %12s", c.c_str());
    std::printf("\n");
    for (const auto& row : s.rows) {
        std::printf(" ");
        for (double x : row) std::printf(" %12s", fmt(x).c_str());
        std::printf("\n");
    }
    std::fflush(stdout);
    series_.push_back(std::move(s));
}

void report::progress(const std::string& line) const {
    // Only on long runs: a short one, or one stopped by bad input at once, stays quiet.
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!o_.quiet && elapsed > 1.0) std::fprintf(stderr, "ccnuma-bench: %s\n", line.c_str());
}

void report::add(result r) {
    r.n_is = n_is_;
    if (r.n_asked == 0) r.n_asked = r.n;
    // Measured here, right after the kernel, in the state the kernel left the runtime in.
    auto fj = fork_join_.find(r.threads);
    if (fj == fork_join_.end() && r.threads > 0) fj = fork_join_.emplace(r.threads, empty_region_seconds(r.threads)).first;
    const auto st = summarize(r.seconds);
    r.flags.clear();
    if (fj != fork_join_.end()) {
        r.fork_join_seconds = fj->second;
        // sync's rows time the constructs themselves; a fork/join cost there is the result.
        if (r.higher_is_better && r.forks_per_sweep && st.median < 5 * fj->second) r.flags.push_back("fork/join-bound");
    }
    if (st.min > 0 && st.max / st.min > 2) r.flags.push_back("spread");
    if (r.threads > allowed_pus()) r.flags.push_back("oversubscribed");
    const auto v = summarize(r.values);
    const bool bw = !r.gbs_wa.empty();
    const std::string header = r.kernel + "|" + r.unit;
    if (header != last_header_) {
        // Above the first table, with --quiet too: it says what the N column counts.
        if (last_header_.empty()) std::printf("# N: %s\n", std::string(to_string(n_is_)).c_str());
        std::printf("\n%-15s %-36s %11s %4s  %-30s", "kernel", "variant", "N", "thr", (r.unit + " median [min, max]").c_str());
        if (bw) std::printf(" %9s %10s", "GB/s+WA", "MFlop/s");
        std::printf("  %s\n", "notes");
        last_header_ = header;
    }
    std::string range = fmt(v.median) + " [" + fmt(v.min) + ", " + fmt(v.max) + "]";
    std::printf("%-15s %-36s %11zu %4u  %-30s", r.kernel.c_str(), r.variant.c_str(), r.n, r.threads, range.c_str());
    if (bw) std::printf(" %9s %10s", fmt(summarize(r.gbs_wa).median).c_str(), fmt(summarize(r.mflops).median).c_str());
    std::string extra;
    for (const auto& [k, x] : r.counters)
        extra += (extra.empty() ? "" : " ") + k + "=" +
                 (k == "pages_local" ? fixed(100 * x, 1) + "%" : r.ratios.count(k) ? stats_paired::ratio_text(x) : fmt(x));
    for (const auto& f : r.flags) {
        std::string why = f;
        if (f == "fork/join-bound")
            why += " (sweep " + fmt(st.median * 1e6) + " us, empty region " + fmt(r.fork_join_seconds * 1e6) + " us)";
        else if (f == "spread")
            why += " (max/min " + fmt(st.max / st.min) + ")";
        extra += (extra.empty() ? "" : " ") + why;
    }
    std::printf("  %s\n", extra.c_str());
    std::fflush(stdout);
    results_.push_back(std::move(r));
}

void report::finish() const {
    tools::write_outputs({{o_.json, o_.json.empty() ? std::string() : results_json(o_, results_, notes_, series_), "JSON"},
                          {o_.csv, o_.csv.empty() ? std::string() : results_csv(results_), "CSV"}});
}

}  // namespace bench
