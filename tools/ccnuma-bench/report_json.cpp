// ccnuma-bench's results as Google Benchmark JSON (json_reporter.cc's fields and order, so that
// compare.py reads them), with ccnuma's context, counters and time series beside them.

#include "context.hpp"
#include "report.hpp"

#include <ccnuma/topology.hpp>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <map>
#include <set>
#include <string_view>

namespace bench {

namespace {

using json = nlohmann::ordered_json;

/// The variant as a benchmark-name component that a regular expression matches literally:
/// compare.py's `filters` mode takes regexes, and "b + c * d" or "raw (omp parallel for)" would
/// not match themselves. '+' and '*' become words so that a + b and a * b stay apart; the other
/// metacharacters, spaces and '/' (the name's separator) become '_'. The human variant stays
/// in the entry's "variant" and "label".
std::string regex_safe(const std::string& variant) {
    std::string out;
    for (char ch : variant) {
        if (ch == '+')
            out += "_plus_";
        else if (ch == '*')
            out += "_times_";
        else if (std::string_view(" ./\\^$?|()[]{}").find(ch) != std::string_view::npos)
            out += '_';
        else
            out += ch;
    }
    std::string collapsed;
    for (char ch : out)
        if (ch != '_' || (!collapsed.empty() && collapsed.back() != '_')) collapsed += ch;
    while (!collapsed.empty() && collapsed.back() == '_') collapsed.pop_back();
    return collapsed.empty() ? "_" : collapsed;
}

/// The run's context: Google Benchmark's fields first, in its order (json_reporter.cc), then
/// ccnuma's (context.hpp) and the notes.
json context_json(const options& o, const std::vector<std::string>& notes) {
    json ctx;
    const auto c = context(o);
    auto get = [&](const std::string& key) {
        for (const auto& [k, v] : c)
            if (k == key) return v;
        return std::string();
    };
    ctx["date"] = get("date");
    ctx["host_name"] = get("host_name");
    ctx["executable"] = "ccnuma-bench " + o.kernel;
    ctx["num_cpus"] = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    double mhz = 0;
    try {
        mhz = std::stod(get("mhz_per_cpu"));
    } catch (const std::exception&) {
    }
    ctx["mhz_per_cpu"] = static_cast<long long>(std::llround(mhz));
    ctx["cpu_scaling_enabled"] = cpu_scaling_enabled();
    // One entry per level, as Google Benchmark lists the caches of one CPU; the snapshot has
    // L2 and L3 (unified on every x86 and Arm server it describes).
    json& caches = ctx["caches"];
    caches = json::array();
    std::set<unsigned> levels;
    for (const auto& k : ccnuma::topology::current().caches()) {
        if (!levels.insert(k.level).second) continue;
        json e;
        e["type"] = "Unified";
        e["level"] = k.level;
        e["size"] = k.bytes;
        e["num_sharing"] = k.pus.size();
        caches.push_back(std::move(e));
    }
    json& load = ctx["load_avg"];
    load = json::array();
    for (double l : start_load())
        if (l >= 0) load.push_back(l);
    ctx["library_build_type"] =
#ifdef NDEBUG
        "release";
#else
        "debug";
#endif
    for (const auto& [k, v] : c)
        if (!ctx.contains(k)) ctx[k] = v;
    ctx["notes"] = notes;
    return ctx;
}

/// Each (kernel, variant)'s regex-safe name: a second variant with the same safe form gets "_2",
/// so that no two families share a name.
std::map<std::pair<std::string, std::string>, std::string> family_names(const std::vector<result>& results) {
    // kernel -> regex-safe variant -> the variant it stands for
    std::map<std::string, std::map<std::string, std::string>> taken;
    std::map<std::pair<std::string, std::string>, std::string> safe_of;
    for (const auto& r : results) {
        std::string& safe = safe_of[{r.kernel, r.variant}];
        if (!safe.empty()) continue;
        auto& mine = taken[r.kernel];
        const std::string base = regex_safe(r.variant);
        safe = base;
        for (int k = 2; mine.count(safe) && mine[safe] != r.variant; ++k) safe = base + "_" + std::to_string(k);
        mine[safe] = r.variant;
    }
    return safe_of;
}

/// One result's entries: an "iteration" per repetition, then the mean, median, stddev, min,
/// max and cv aggregates. Google Benchmark's fields in its order; ccnuma's counters and facts
/// after them, the label last as it writes it.
void append_result(json& list, const result& r, const std::string& name, int fam, int inst) {
    const bool have_cpu = r.cpu_seconds.size() == r.seconds.size() && !r.cpu_seconds.empty();
    std::string flags;
    for (const auto& f : r.flags) flags += (flags.empty() ? "" : ",") + f;
    auto head = [&](json& b, const std::string& entry, const char* type) {
        b["name"] = entry;
        b["family_index"] = fam;
        b["per_family_instance_index"] = inst;
        b["run_name"] = name;
        b["run_type"] = type;
        b["repetitions"] = r.seconds.size();
    };
    // aggregate: nullptr for a repetition's entry. A counter is a fact of the row, the same in
    // every repetition, so its entry in each repetition and in the mean, median, min and max
    // aggregates is the fact, and in stddev and cv 0, as Google Benchmark computes them. The
    // paired ratios (result::ratios) are estimates over all the repetitions: on the median
    // aggregate alone, where the table prints them, never as if a repetition had its own.
    auto tail = [&](json& b, const char* aggregate, std::size_t iterations, double seconds, double cpu, double value, double wa,
                    double mf) {
        b["iterations"] = iterations;
        b["real_time"] = seconds * 1e9;
        b["cpu_time"] = cpu * 1e9;
        b["time_unit"] = "ns";
        b[r.unit] = value;
        if (!r.gbs_wa.empty()) {
            b["bytes_per_second"] = value * 1e9;
            b["GB/s+WA"] = wa;
            b["MFlop/s"] = mf;
        }
        b["n"] = r.n;
        b["n_counts"] = to_string(r.n_is);
        b["n_asked"] = r.n_asked;
        const std::string agg = aggregate ? aggregate : "";
        for (const auto& [k, x] : r.counters) {
            if (r.ratios.count(k)) {
                if (agg == "median") b[k] = x;
            } else {
                b[k] = agg == "stddev" || agg == "cv" ? 0.0 : x;
            }
        }
        b["fork_join_s"] = r.fork_join_seconds;
        if (!have_cpu) b["cpu_time_is_real_time"] = 1;  // the kernel passed no CPU time on
        b["kernel"] = r.kernel;
        b["variant"] = r.variant;
        b["unit"] = r.unit;
        b["flags"] = flags;
        b["label"] = r.variant;
    };
    const std::size_t reps = r.seconds.size();
    for (std::size_t i = 0; i < reps; ++i) {
        json b;
        head(b, name, "iteration");
        b["repetition_index"] = i;
        b["threads"] = r.threads;
        tail(b, nullptr, r.batch, r.seconds[i], have_cpu ? r.cpu_seconds[i] : r.seconds[i], r.values[i],
             r.gbs_wa.empty() ? 0 : r.gbs_wa[i], r.mflops.empty() ? 0 : r.mflops[i]);
        list.push_back(std::move(b));
    }
    const auto st = summarize(r.seconds), sc = summarize(have_cpu ? r.cpu_seconds : r.seconds),
               sv = summarize(r.values), sw = summarize(r.gbs_wa), sm = summarize(r.mflops);
    auto cv = [](const stats& x) { return x.mean != 0 ? x.stddev / x.mean : 0.0; };
    // min of a time is max of a rate: each aggregate row holds the statistic of each
    // quantity on its own, as Google Benchmark's do. Its iterations are the repetitions.
    const std::pair<const char*, double stats::*> aggs[] = {
        {"mean", &stats::mean}, {"median", &stats::median}, {"stddev", &stats::stddev},
        {"min", &stats::min},   {"max", &stats::max}};
    for (const auto& [agg, member] : aggs) {
        json b;
        head(b, name + "_" + agg, "aggregate");
        b["threads"] = r.threads;
        b["aggregate_name"] = agg;
        b["aggregate_unit"] = "time";
        tail(b, agg, reps, st.*member, sc.*member, sv.*member, sw.*member, sm.*member);
        list.push_back(std::move(b));
    }
    // Google Benchmark's coefficient of variation: stddev / mean of each quantity, the
    // times' as plain ratios in real_time and cpu_time (hence the 1e-9 against tail's ns).
    json b;
    head(b, name + "_cv", "aggregate");
    b["threads"] = r.threads;
    b["aggregate_name"] = "cv";
    b["aggregate_unit"] = "percentage";
    tail(b, "cv", reps, cv(st) * 1e-9, cv(sc) * 1e-9, cv(sv), cv(sw), cv(sm));
    list.push_back(std::move(b));
}

}  // namespace

std::string results_json(const options& o, const std::vector<result>& results, const std::vector<std::string>& notes,
                         const std::vector<series>& all_series) {
    json doc;
    doc["context"] = context_json(o, notes);
    json& list = doc["benchmarks"];
    list = json::array();
    std::map<std::string, int> families;
    std::map<std::string, int> instances;
    const auto safe_of = family_names(results);
    for (const auto& r : results) {
        const std::string family = r.kernel + "/" + safe_of.at({r.kernel, r.variant});
        const int fam = families.emplace(family, static_cast<int>(families.size())).first->second;
        const int inst = instances[family]++;
        // A likwid-bench row that ran 992 for 1000 names the N asked too: 1000 and 1001 asked
        // can both run 992, and two entries of one name would be one benchmark to compare.py.
        const std::string asked = r.n_asked != r.n ? "/n_asked:" + std::to_string(r.n_asked) : "";
        append_result(list, r, family + asked + "/n:" + std::to_string(r.n) + "/threads:" + std::to_string(r.threads), fam,
                      inst);
    }
    if (!all_series.empty()) {
        json& all = doc["series"];
        all = json::array();
        for (const auto& s : all_series) {
            json j;
            j["kernel"] = s.kernel;
            j["variant"] = s.variant;
            j["n"] = s.n;
            j["n_counts"] = to_string(s.n_is);
            j["threads"] = s.threads;
            j["columns"] = s.columns;
            j["rows"] = s.rows;
            all.push_back(std::move(j));
        }
    }
    return doc.dump(2) + "\n";
}

}  // namespace bench
