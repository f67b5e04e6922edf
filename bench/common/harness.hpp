#pragma once
// What every ccnuma benchmark does the same way: variants of one kernel timed in one run,
// interleaved repetition by repetition so that drifting clocks and noisy neighbours hit all
// variants alike (Google Benchmark's reducing_variance.md), medians with min and max, the
// context (machine, binding, OpenMP variables, compiler, git hash) printed with the result,
// and a CSV file for plots.

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#ifndef CCNUMA_GIT_HASH
#define CCNUMA_GIT_HASH "unknown"
#endif

namespace bench {

struct stats {
    double min = 0, median = 0, max = 0;
};

inline stats summarize(std::vector<double> v) {
    if (v.empty()) return {};
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return {v.front(), median, v.back()};
}

/// One variant of a kernel: run() does `batch` sweeps; it must leave a checkable result.
struct variant {
    std::string name;
    std::function<void(std::size_t batch)> run;
};

/// Seconds per batch of every variant, repetition after repetition: times[v][r].
struct measurement {
    std::size_t batch = 1;
    std::vector<std::vector<double>> times;
    /// Median over repetitions of (figure of variant a) / (figure of variant b) for a rate (the
    /// inverse ratio of times), pairing each repetition's a with its b.
    double paired_ratio(std::size_t a, std::size_t b) const {
        std::vector<double> r;
        for (std::size_t i = 0; i < times[a].size(); ++i) r.push_back(times[b][i] / times[a][i]);
        return summarize(r).median;
    }
};

/// Chooses a batch so that one timed call takes at least min_seconds (one warm-up sweep per
/// variant first), then times `repetitions` rounds of all variants, alternating their order.
inline measurement measure(const std::vector<variant>& variants, int repetitions, double min_seconds = 2e-3) {
    using clock = std::chrono::steady_clock;
    auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
    measurement m;
    for (const auto& v : variants) v.run(1);
    for (;;) {
        const auto t0 = clock::now();
        variants.front().run(m.batch);
        if (seconds(clock::now() - t0) >= min_seconds || m.batch >= (std::size_t{1} << 30)) break;
        m.batch *= 2;
    }
    m.times.assign(variants.size(), {});
    // Odd repetitions run the variants in reverse order: what one variant leaves behind (warm
    // caches, sleeping worker threads) then favours each of them equally often.
    for (int r = 0; r < repetitions; ++r)
        for (std::size_t k = 0; k < variants.size(); ++k) {
            const std::size_t i = r % 2 ? variants.size() - 1 - k : k;
            const auto t0 = clock::now();
            variants[i].run(m.batch);
            m.times[i].push_back(seconds(clock::now() - t0));
        }
    return m;
}

inline std::string env_or(const char* name, const char* fallback = "(unset)") {
    const char* v = std::getenv(name);
    return v ? v : fallback;
}

/// The context lines that go with every result (Kokkos' Benchmark_Context), each "# key: value".
inline std::string context(std::string_view benchmark) {
    // The whole machine, not the affinity mask: with OMP_PLACES set the runtime has already
    // narrowed the initial thread's mask to its first place.
    ccnuma::topology_options whole;
    whole.use_affinity_mask = false;
    const auto topo = ccnuma::topology::load(whole);
    unsigned nodes = 0;
    for (const auto& n : topo.numa_nodes()) nodes += n.cpus.empty() ? 0 : 1;
    const auto vm = ccnuma::emulated_machine::current();
    std::string s;
    auto line = [&](const std::string& k, const std::string& v) { s += "# " + k + ": " + v + "\n"; };
    line("benchmark", std::string(benchmark));
    line("machine", topo.description() + ", " + std::to_string(topo.allowed_cpus().size()) + " PUs, " +
                        std::to_string(nodes) + " NUMA node(s) with CPUs");
    if (vm) line("emulated", vm->to_string() + " (ccnuma-vm: placement is real, speed is not)");
    line("threads", std::to_string(omp_get_max_threads()));
    for (const char* v : {"OMP_NUM_THREADS", "OMP_PLACES", "OMP_PROC_BIND", "CCNUMA_BIND"}) line(v, env_or(v));
#if defined(__clang__)
    line("compiler", std::string("clang ") + __clang_version__);
#elif defined(__GNUC__)
    line("compiler", std::string("gcc ") + __VERSION__);
#endif
    line("git", CCNUMA_GIT_HASH);
    return s;
}

/// A CSV file for plots, or nothing when path is empty.
class csv {
public:
    csv(const std::string& path, const std::string& header) {
        if (path.empty()) return;
        f_ = std::fopen(path.c_str(), "w");
        if (!f_) throw std::runtime_error("cannot write \"" + path + "\"");
        std::fprintf(f_, "%s\n", header.c_str());
    }
    csv(const csv&) = delete;
    csv& operator=(const csv&) = delete;
    ~csv() {
        if (f_) std::fclose(f_);
    }
    void row(const std::string& line) {
        if (f_) std::fprintf(f_, "%s\n", line.c_str());
    }

private:
    std::FILE* f_ = nullptr;
};

/// The whole of `text` as a number, or NaN if any of it is not part of one.
inline double parse_number(const std::string& text) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nan("");
    }
    return used == text.size() ? v : std::nan("");
}

/// Parses "1e6" or "1000000" as a size; throws std::invalid_argument naming the option.
inline std::size_t parse_count(std::string_view option, const std::string& text) {
    const double v = parse_number(text);
    if (!(v >= 1) || v > 1e12 || v != static_cast<double>(static_cast<std::size_t>(v)))
        throw std::invalid_argument(std::string(option) + " needs a whole number from 1 to 1e12, not \"" + text + "\"");
    return static_cast<std::size_t>(v);
}

/// Parses seconds above 0 and up to 10; throws std::invalid_argument naming the option.
inline double parse_seconds(std::string_view option, const std::string& text) {
    const double v = parse_number(text);
    if (!(v > 0) || v > 10)
        throw std::invalid_argument(std::string(option) + " needs seconds above 0 and up to 10, not \"" + text + "\"");
    return v;
}

/// The options every size sweep takes: --min-n, --max-n, --repetitions, --min-time (the
/// shortest timed call, which the harness batches sweeps up to) and --csv.
struct sweep_options {
    std::size_t min_n = 1000, max_n = 100000000;
    int repetitions = 11;
    double min_time = 2e-3;
    std::string csv{};
};

/// Reads argv[i] (and its value) if it is one of sweep_options'; returns false for any other
/// argument, which the benchmark then handles itself.
inline bool parse_sweep_option(int argc, char** argv, int& i, sweep_options& o) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
        if (i + 1 == argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
    };
    if (a == "--min-n") o.min_n = parse_count(a, next());
    else if (a == "--max-n") o.max_n = parse_count(a, next());
    else if (a == "--repetitions") o.repetitions = static_cast<int>(parse_count(a, next()));
    else if (a == "--min-time") o.min_time = parse_seconds(a, next());
    else if (a == "--csv") o.csv = next();
    else return false;
    return true;
}

/// Throws if the sweep is empty (checked once every option is read).
inline void check(const sweep_options& o) {
    if (o.min_n > o.max_n) throw std::invalid_argument("--min-n is larger than --max-n");
}

}  // namespace bench
