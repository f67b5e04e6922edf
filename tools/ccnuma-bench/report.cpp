#include "report.hpp"

#include "baselines.hpp"

#include "../common/output_file.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/os.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/version.hpp>

#include <nlohmann/json.hpp>
#include <omp.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

extern char** environ;

#ifndef CCNUMA_GIT_HASH
#define CCNUMA_GIT_HASH "unknown"
#endif

namespace bench {

namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

/// Enough digits for the size of the value, so that small overheads and large rates both read.
std::string fmt(double v) {
    const double a = v < 0 ? -v : v;
    return fixed(v, a >= 100 ? 1 : a >= 1 ? 2 : 3);
}

std::string compiler() {
#if defined(__clang__)
    return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("gcc ") + __VERSION__;
#else
    return "unknown";
#endif
}

std::string mhz() {
    const auto values = ccnuma::detail::cpuinfo("cpu MHz");
    return values.empty() ? "0" : values.front();
}

std::string cpu_model() {
    const auto values = ccnuma::detail::cpuinfo("model name");
    return values.empty() ? "unknown" : values.front();
}

std::string date() {
    char buf[64];
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
    return buf;
}

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

/// The load average when the run started (the first call: the report's header).
const std::array<double, 3>& start_load() {
    static const std::array<double, 3> load = [] {
        std::array<double, 3> l{-1, -1, -1};
        if (getloadavg(l.data(), 3) != 3) l = {-1, -1, -1};
        return l;
    }();
    return load;
}

/// The PUs this run's threads may use. Where OMP_PLACES / OMP_PROC_BIND bind the team, the
/// runtime has narrowed the initial thread's mask to its first place, so the places' union
/// counts; otherwise the process's allowed CPUs.
std::size_t allowed_pus() {
    if (omp_get_proc_bind() != omp_proc_bind_false && omp_get_num_places() > 0) {
        std::set<int> ids;
        for (int p = 0; p < omp_get_num_places(); ++p) {
            std::vector<int> v(static_cast<std::size_t>(omp_get_place_num_procs(p)));
            if (!v.empty()) omp_get_place_proc_ids(p, v.data());
            ids.insert(v.begin(), v.end());
        }
        if (!ids.empty()) return ids.size();
    }
    return ccnuma::topology::current().allowed_cpus().size();
}

/// The team sizes the run will use: --threads, the --teams shapes, else the default team.
unsigned largest_team(const options& o) {
    unsigned t = o.threads.empty() ? static_cast<unsigned>(omp_get_max_threads()) : 0;
    for (unsigned x : o.threads) t = std::max(t, x);
    for (const auto& shape : o.teams) {
        const auto x = shape.find_first_of("xX");
        if (x == std::string::npos) continue;
        const unsigned long a = std::strtoul(shape.c_str(), nullptr, 10), b = std::strtoul(shape.c_str() + x + 1, nullptr, 10);
        t = std::max(t, static_cast<unsigned>(a * b));
    }
    return t;
}

/// Why the run's numbers may not be the machine's: oversubscription and a loaded machine.
std::vector<std::string> run_warnings(const options& o) {
    std::vector<std::string> w;
    const std::size_t pus = allowed_pus();
    const unsigned team = largest_team(o);
    if (team > pus)
        w.push_back("oversubscribed: " + std::to_string(team) + " threads on " + std::to_string(pus) +
                    " allowed PUs; threads share PUs and wait for time slices, rows with more threads than PUs are "
                    "flagged");
    const auto& load = start_load();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0 && load[0] > static_cast<double>(online))
        w.push_back("the load average was " + fixed(load[0], 2) + " at the start, above the " + std::to_string(online) +
                    " PUs online: other processes compete for the CPUs and memory bandwidth");
    return w;
}

/// Google Benchmark's rule (sysinfo.cc): CPU scaling is enabled when any CPU's cpufreq governor
/// is readable and is not "performance"; no cpufreq (a VM, a container without /sys) is false.
bool cpu_scaling_enabled() {
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (long cpu = 0; cpu < cpus; ++cpu) {
        const std::string governor = ccnuma::detail::cpufreq(static_cast<unsigned>(cpu), "scaling_governor");
        if (!governor.empty() && governor != "performance") return true;
    }
    return false;
}

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

std::vector<std::pair<std::string, std::string>> context(const options& o) {
    std::vector<std::pair<std::string, std::string>> c;
    // The whole machine, not the affinity mask: with OMP_PLACES set the runtime has already
    // narrowed the initial thread's mask to its first place.
    ccnuma::topology_options whole;
    whole.use_affinity_mask = false;
    const auto topo = ccnuma::topology::load(whole);
    // has_cpus, not cpus: a node whose CPUs all lie outside the affinity mask has none allowed,
    // yet it is no CPU-less memory.
    unsigned nodes = 0, cpu_less = 0;
    for (const auto& n : topo.numa_nodes()) (n.has_cpus ? nodes : cpu_less) += 1;
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    c.emplace_back("date", date());
    c.emplace_back("host_name", host);
    c.emplace_back("cpu", cpu_model());
    c.emplace_back("mhz_per_cpu", mhz());
    c.emplace_back("topology", topo.description() + ", " + std::to_string(topo.allowed_cpus().size()) + " PUs, " +
                                   std::to_string(nodes) + " NUMA node(s) with CPUs" +
                                   (cpu_less ? ", " + std::to_string(cpu_less) + " CPU-less" : ""));
    std::string caches;
    for (const auto& k : topo.caches())
        caches += (caches.empty() ? "" : ", ") + std::string("L") + std::to_string(k.level) + " " +
                  std::to_string(k.bytes / 1024) + " KiB (" + std::to_string(k.pus.size()) + " PUs)";
    c.emplace_back("caches", caches.empty() ? "unknown" : caches);
    if (const auto vm = ccnuma::emulated_machine::current())
        c.emplace_back("emulated", vm->to_string() + " (ccnuma-vm: placement is real, speed is not)");
    c.emplace_back("pages", ccnuma::support().to_string());
    c.emplace_back("threads", o.threads.empty() ? std::to_string(omp_get_max_threads()) : [&] {
        std::string s;
        for (unsigned t : o.threads) s += (s.empty() ? "" : ",") + std::to_string(t);
        return s;
    }());
    std::string plan = "none (threads float unless OMP_PROC_BIND/OMP_PLACES bind them)";
    if (!o.bind.empty()) {
        const auto& p = ccnuma::current_plan();
        plan = o.bind + ": PUs";
        for (const auto& t : p.threads()) plan += " " + std::to_string(t.pu);
        plan += ", " + std::to_string(p.numa_nodes_used()) + " node(s)";
    }
    c.emplace_back("binding", plan);
    c.emplace_back("policy", ccnuma::to_string(o.container_policy()));
    std::string omp;
    for (char** e = environ; *e; ++e) {
        const std::string v = *e;
        if (v.rfind("OMP_", 0) == 0 || v.rfind("GOMP_", 0) == 0 || v.rfind("KMP_", 0) == 0 || v.rfind("CCNUMA_", 0) == 0)
            omp += (omp.empty() ? "" : " ") + v;
    }
    c.emplace_back("environment", omp.empty() ? "(no OMP_*, GOMP_*, KMP_* or CCNUMA_* variables)" : omp);
    c.emplace_back("compiler", compiler());
    c.emplace_back("flags", expert::flags());
    c.emplace_back("isa", std::string(expert::isa()) + " (the widest vectors the kernels were compiled for)");
    const auto& load = start_load();
    c.emplace_back("load_avg", fixed(load[0], 2) + " " + fixed(load[1], 2) + " " + fixed(load[2], 2) + " (at the start)");
    c.emplace_back("allowed_pus", std::to_string(allowed_pus()));
    std::string warnings;
    for (const auto& w : run_warnings(o)) warnings += (warnings.empty() ? "" : "; ") + w;
    c.emplace_back("warnings", warnings.empty() ? "none" : warnings);
    c.emplace_back("ccnuma", std::string(ccnuma::version_string) + ", git " + CCNUMA_GIT_HASH);
    return c;
}

report::report(const options& o) : o_(o) {
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
    std::printf("\n# series %s / %s, n = %zu, %u threads\n#", s.kernel.c_str(), s.variant.c_str(), s.n, s.threads);
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
    // Measured here, right after the kernel, in the state the kernel left the runtime in.
    auto fj = fork_join_.find(r.threads);
    if (fj == fork_join_.end() && r.threads > 0) fj = fork_join_.emplace(r.threads, empty_region_seconds(r.threads)).first;
    const auto st = summarize(r.seconds);
    r.flags.clear();
    if (fj != fork_join_.end()) {
        r.fork_join_seconds = fj->second;
        // sync's rows time the constructs themselves; a fork/join cost there is the result.
        if (r.higher_is_better && st.median < 5 * fj->second) r.flags.push_back("fork/join-bound");
    }
    if (st.min > 0 && st.max / st.min > 2) r.flags.push_back("spread");
    if (r.threads > allowed_pus()) r.flags.push_back("oversubscribed");
    const auto v = summarize(r.values);
    const bool bw = !r.gbs_wa.empty();
    const std::string header = r.kernel + "|" + r.unit;
    if (header != last_header_) {
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
        extra += (extra.empty() ? "" : " ") + k + "=" + (k == "pages_local" ? fixed(100 * x, 1) + "%" : fmt(x));
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
    std::string json_text, csv_text;
    if (!o_.json.empty()) {
        using json = nlohmann::ordered_json;
        json doc;
        json& ctx = doc["context"];
        // Google Benchmark's context first, in its order (json_reporter.cc), then ccnuma's.
        const auto c = context(o_);
        auto get = [&](const std::string& key) {
            for (const auto& [k, v] : c)
                if (k == key) return v;
            return std::string();
        };
        ctx["date"] = get("date");
        ctx["host_name"] = get("host_name");
        ctx["executable"] = "ccnuma-bench " + o_.kernel;
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
        ctx["notes"] = notes_;
        json& list = doc["benchmarks"];
        list = json::array();
        std::map<std::string, int> families;
        std::map<std::string, int> instances;
        // kernel -> regex-safe variant -> the variant it stands for; a second variant with the
        // same safe form gets "_2", so that no two families share a name.
        std::map<std::string, std::map<std::string, std::string>> taken;
        std::map<std::pair<std::string, std::string>, std::string> safe_of;
        for (const auto& r : results_) {
            std::string& safe = safe_of[{r.kernel, r.variant}];
            if (!safe.empty()) continue;
            auto& mine = taken[r.kernel];
            const std::string base = regex_safe(r.variant);
            safe = base;
            for (int k = 2; mine.count(safe) && mine[safe] != r.variant; ++k) safe = base + "_" + std::to_string(k);
            mine[safe] = r.variant;
        }
        for (const auto& r : results_) {
            const std::string family = r.kernel + "/" + safe_of[{r.kernel, r.variant}];
            const int fam = families.emplace(family, static_cast<int>(families.size())).first->second;
            const int inst = instances[family]++;
            const std::string name = family + "/n:" + std::to_string(r.n) + "/threads:" + std::to_string(r.threads);
            const bool have_cpu = r.cpu_seconds.size() == r.seconds.size() && !r.cpu_seconds.empty();
            std::string flags;
            for (const auto& f : r.flags) flags += (flags.empty() ? "" : ",") + f;
            // Google Benchmark's fields in its order; ccnuma's counters and facts after them, the
            // label last as it writes it.
            auto head = [&](json& b, const std::string& entry, const char* type) {
                b["name"] = entry;
                b["family_index"] = fam;
                b["per_family_instance_index"] = inst;
                b["run_name"] = name;
                b["run_type"] = type;
                b["repetitions"] = r.seconds.size();
            };
            auto tail = [&](json& b, std::size_t iterations, double seconds, double cpu, double value, double wa, double mf) {
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
                for (const auto& [k, x] : r.counters) b[k] = x;
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
                tail(b, r.batch, r.seconds[i], have_cpu ? r.cpu_seconds[i] : r.seconds[i], r.values[i],
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
                tail(b, reps, st.*member, sc.*member, sv.*member, sw.*member, sm.*member);
                list.push_back(std::move(b));
            }
            // Google Benchmark's coefficient of variation: stddev / mean of each quantity, the
            // times' as plain ratios in real_time and cpu_time (hence the 1e-9 against tail's ns).
            json b;
            head(b, name + "_cv", "aggregate");
            b["threads"] = r.threads;
            b["aggregate_name"] = "cv";
            b["aggregate_unit"] = "percentage";
            tail(b, reps, cv(st) * 1e-9, cv(sc) * 1e-9, cv(sv), cv(sw), cv(sm));
            list.push_back(std::move(b));
        }
        if (!series_.empty()) {
            json& all = doc["series"];
            all = json::array();
            for (const auto& s : series_) {
                json j;
                j["kernel"] = s.kernel;
                j["variant"] = s.variant;
                j["n"] = s.n;
                j["threads"] = s.threads;
                j["columns"] = s.columns;
                j["rows"] = s.rows;
                all.push_back(std::move(j));
            }
        }
        json_text = doc.dump(2) + "\n";
    }
    if (!o_.csv.empty()) {
        std::ostringstream f;
        f << "kernel,variant,n,threads,reps,batch,seconds_median,unit,value_min,value_median,value_max,gbs_wa_min,gbs_wa_"
             "median,gbs_wa_max,mflops_median,pages_local,counters,flags,fork_join_s\n";
        for (const auto& r : results_) {
            const auto sv = summarize(r.values), sw = summarize(r.gbs_wa), st = summarize(r.seconds);
            std::string counters;
            for (const auto& [k, x] : r.counters) counters += (counters.empty() ? "" : ";") + k + "=" + fixed(x, 6);
            const auto pl = r.counters.find("pages_local");
            std::ostringstream row;
            row.precision(6);
            row << r.kernel << ",\"" << r.variant << "\"," << r.n << "," << r.threads << "," << r.seconds.size() << ","
                << r.batch << "," << st.median << "," << r.unit << "," << sv.min << "," << sv.median << "," << sv.max << ",";
            if (!r.gbs_wa.empty())
                row << sw.min << "," << sw.median << "," << sw.max << "," << summarize(r.mflops).median;
            else
                row << ",,,";
            std::string flags;
            for (const auto& fl : r.flags) flags += (flags.empty() ? "" : ";") + fl;
            row << "," << (pl == r.counters.end() ? std::string() : fixed(pl->second, 4)) << ",\"" << counters << "\","
                << flags << "," << r.fork_join_seconds << "\n";
            f << row.str();
        }
        csv_text = f.str();
    }
    tools::write_outputs({{o_.json, json_text, "JSON"}, {o_.csv, csv_text, "CSV"}});
}

}  // namespace bench
