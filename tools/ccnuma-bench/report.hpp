#pragma once
// What ccnuma-bench reports: one result per kernel, variant, N and team, and the three ways out:
// a table on stdout (report.cpp), Google Benchmark JSON (report_json.cpp) and CSV
// (report_csv.cpp). The context every result carries is context.hpp's.

#include "harness.hpp"
#include "options.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bench {

/// What a kernel's N counts: not always elements per array (dmvm's N is a matrix order, so its
/// matrix holds N^2 doubles). Each kernel's row in registry.cpp names it; the table's header,
/// the JSON, the CSV and plot's axis say it. A new kind without words is a -Wswitch warning in
/// to_string (an error under CCNUMA_WARNINGS_AS_ERRORS, as in CI) and else a logic_error.
enum class n_counts {
    elements_per_array,  ///< triad, stream, sum, placement, zero-page, false-sharing, tiers
    elements_per_team_array,  ///< nested-stream: each outer team has its own arrays of N
    matrix_order,        ///< dmvm: an N x N matrix and vectors of N
    matrix_rows,         ///< spmv: the CSR matrix's rows (and the vectors' length)
    grid_side,           ///< jacobi: an N x N grid
    delay_iterations,    ///< sync: the iterations of EPCC's delay loop, calibrated by the run
};
/// "elements per array", "matrix order (N x N doubles)", ...: the words the outputs print.
std::string_view to_string(n_counts what);

/// One variant at one N and thread count, over the repetitions.
struct result {
    std::string kernel, variant;
    std::size_t n = 0;
    /// What n counts: set by report::add from the kernel's row (registry.cpp), never by a kernel.
    n_counts n_is = n_counts::elements_per_array;
    /// The N the run asked for (--n): n itself, except for a likwid-bench row, which runs its
    /// own rounding of it (992 for 1000; bandwidth.cpp's peer_row). 0 (a kernel's default):
    /// report::add makes it n. plot draws a curve against the thread count through the rows of
    /// one N asked, and says where a point ran another.
    std::size_t n_asked = 0;
    unsigned threads = 0;
    std::size_t batch = 1;
    std::vector<double> seconds;  ///< per sweep, one per repetition
    /// CPU seconds per sweep (the process's threads and waited-for children), one per
    /// repetition; empty where the kernel did not pass them on (the JSON then says so).
    std::vector<double> cpu_seconds;
    /// The figure of merit per repetition and its unit ("GB/s", "us", "Mupd/s", ...).
    std::string unit;
    std::vector<double> values;
    bool higher_is_better = true;
    /// Bandwidth kernels: GB/s with write-allocate traffic, and MFlop/s, per repetition.
    std::vector<double> gbs_wa, mflops;
    /// Facts that do not vary with the repetition: "pages_local" (fraction), "zero_pages", ...,
    /// and the paired ratios named in `ratios`.
    std::map<std::string, double> counters;
    /// The counters that are paired ratios and their bounds (paired.hpp's put_ratio): an
    /// estimate over all the repetitions, not a fact of each (report_json.cpp writes them on the
    /// median aggregate alone; the table prints them with ratio_text).
    std::set<std::string> ratios;
    /// Set by report::add: "fork/join-bound" (the median sweep is shorter than 5 empty parallel
    /// regions of the same team), "spread" (max/min of the seconds above 2), "oversubscribed"
    /// (more threads than allowed PUs). A flagged row's figure is not the kernel's.
    std::vector<std::string> flags;
    /// Seconds of one empty `omp parallel` region with this many threads, measured in this run.
    double fork_join_seconds = 0;
    /// Whether each timed sweep opens a parallel region of its own, as every row of ccnuma and
    /// of the expert loops does. likwid-bench times its iterations inside one region, so no
    /// fork/join cost is in its rows and they are never flagged fork/join-bound.
    bool forks_per_sweep = true;
};


/// A time series, one row per sample (jacobi: elapsed seconds, GB/s and pages local as NUMA
/// balancing moves the pages). Written to the JSON's top-level "series" list beside Google
/// Benchmark's "benchmarks" (compare.py reads only the latter) and printed as a table.
struct series {
    std::string kernel, variant;
    std::size_t n = 0;
    unsigned threads = 0;
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;
    n_counts n_is = n_counts::elements_per_array;  ///< set by report::add_series, as for a result
};

/// A bandwidth result: bytes the loop names, bytes with write-allocate, and flops per sweep.
result bandwidth(std::string kernel, std::string variant, std::size_t n, unsigned threads, const measurement& m,
                 std::size_t index, double bytes, double bytes_wa, double flops);


/// The run as Google Benchmark JSON: its context, and per result an entry per repetition and the
/// aggregates (report_json.cpp).
std::string results_json(const options& o, const std::vector<result>& results, const std::vector<std::string>& notes,
                         const std::vector<series>& all_series);

/// The run as CSV, one row per kernel, variant, N and thread count (report_csv.cpp).
std::string results_csv(const std::vector<result>& results);

/// Collects results, prints each as it comes, and writes JSON and CSV at the end.
class report {
public:
    explicit report(const options& o);
    void add(result r);
    /// A note printed with the table (and kept in the JSON context as "notes").
    void note(const std::string& line);
    /// Prints the series and keeps it for the JSON.
    void add_series(series s);
    /// Progress on stderr once the run has taken more than a second (never with --quiet), e.g.
    /// "triad: n = 1000000, 2 threads".
    void progress(const std::string& line) const;
    const std::vector<result>& results() const { return results_; }
    /// Writes --json and --csv. Throws std::runtime_error if a file cannot be written.
    void finish() const;

private:
    const options& o_;
    std::vector<result> results_;
    std::vector<std::string> notes_;
    std::vector<series> series_;
    std::map<unsigned, double> fork_join_;  // team size -> seconds of an empty parallel region
    n_counts n_is_;  // the kernel's (registry.cpp), stamped on every result
    std::string last_header_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace bench
