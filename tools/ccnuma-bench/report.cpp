#include "report.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/version.hpp>

#include <nlohmann/json.hpp>
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

#ifndef CCNUMA_GIT_HASH
#define CCNUMA_GIT_HASH "unknown"
#endif
#ifndef CCNUMA_BENCH_FLAGS
#define CCNUMA_BENCH_FLAGS "unknown"
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
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("cpu MHz", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(colon + 2);
        }
    return "0";
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(colon + 2);
        }
    return "unknown";
}

std::string date() {
    char buf[64];
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
    return buf;
}

std::string full_name(const result& r) {
    return r.kernel + "/" + r.variant + "/n:" + std::to_string(r.n) + "/threads:" + std::to_string(r.threads);
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
    unsigned nodes = 0;
    for (const auto& n : topo.numa_nodes()) nodes += n.cpus.empty() ? 0 : 1;
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    c.emplace_back("date", date());
    c.emplace_back("host_name", host);
    c.emplace_back("cpu", cpu_model());
    c.emplace_back("mhz_per_cpu", mhz());
    c.emplace_back("topology", topo.description() + ", " + std::to_string(topo.allowed_cpus().size()) + " PUs, " +
                                   std::to_string(nodes) + " NUMA node(s) with CPUs");
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
    c.emplace_back("flags", CCNUMA_BENCH_FLAGS);
    c.emplace_back("ccnuma", std::string(ccnuma::version_string) + ", git " + CCNUMA_GIT_HASH);
    return c;
}

report::report(const options& o) : o_(o) {
    // Fail before the run, not after minutes of it.
    for (const auto* path : {&o_.json, &o_.csv})
        if (!path->empty() && !std::ofstream(*path))
            throw std::runtime_error("cannot write \"" + *path + "\"");
    if (o_.quiet || !o_.only.empty()) return;
    for (const auto& [k, v] : context(o_)) std::printf("# %s: %s\n", k.c_str(), v.c_str());
    std::printf("# GB/s: the bytes the loop names (loads + stores), no write-allocate; GB/s+WA: plus the write-allocate read "
                "of every stored line. median [min, max] of %d repetitions, variants interleaved\n",
                o_.reps);
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
    std::printf("  %s\n", extra.c_str());
    std::fflush(stdout);
    results_.push_back(std::move(r));
}

void report::finish() const {
    if (!o_.json.empty()) {
        using json = nlohmann::ordered_json;
        json doc;
        json& ctx = doc["context"];
        const auto c = context(o_);
        for (const auto& [k, v] : c) ctx[k] = v;
        ctx["executable"] = "ccnuma-bench " + o_.kernel;
        ctx["num_cpus"] = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
        try {
            ctx["mhz_per_cpu"] = std::stod(ctx["mhz_per_cpu"].get<std::string>());
        } catch (const std::exception&) {
            ctx["mhz_per_cpu"] = 0;
        }
        ctx["cpu_scaling_enabled"] = false;
        ctx["caches"] = json::array();
        ctx["library_build_type"] =
#ifdef NDEBUG
            "release";
#else
            "debug";
#endif
        ctx["notes"] = notes_;
        json& list = doc["benchmarks"];
        list = json::array();
        std::map<std::string, int> families;
        std::map<std::string, int> instances;
        for (const auto& r : results_) {
            const std::string family = r.kernel + "/" + r.variant;
            const int fam = families.emplace(family, static_cast<int>(families.size())).first->second;
            const int inst = instances[family]++;
            const std::string name = full_name(r);
            auto base = [&](json& b) {
                b["name"] = name;
                b["family_index"] = fam;
                b["per_family_instance_index"] = inst;
                b["run_name"] = name;
            };
            auto fill = [&](json& b, double seconds, double value, double wa, double mf) {
                b["threads"] = r.threads;
                b["iterations"] = r.batch;
                b["real_time"] = seconds * 1e9;
                b["cpu_time"] = seconds * 1e9;
                b["time_unit"] = "ns";
                b["label"] = r.unit;  // the figure of merit's unit, for plot
                b[r.unit] = value;
                if (!r.gbs_wa.empty()) {
                    b["bytes_per_second"] = value * 1e9;
                    b["GB/s+WA"] = wa;
                    b["MFlop/s"] = mf;
                }
                b["n"] = r.n;
                for (const auto& [k, x] : r.counters) b[k] = x;
            };
            const std::size_t reps = r.seconds.size();
            for (std::size_t i = 0; i < reps; ++i) {
                json b;
                base(b);
                b["run_type"] = "iteration";
                b["repetitions"] = reps;
                b["repetition_index"] = i;
                fill(b, r.seconds[i], r.values[i], r.gbs_wa.empty() ? 0 : r.gbs_wa[i], r.mflops.empty() ? 0 : r.mflops[i]);
                list.push_back(std::move(b));
            }
            const auto st = summarize(r.seconds), sv = summarize(r.values), sw = summarize(r.gbs_wa),
                       sm = summarize(r.mflops);
            // min of a time is max of a rate: each aggregate row holds the statistic of each
            // quantity on its own, as Google Benchmark's do.
            const std::pair<const char*, double stats::*> aggs[] = {
                {"mean", &stats::mean}, {"median", &stats::median}, {"stddev", &stats::stddev},
                {"min", &stats::min},   {"max", &stats::max}};
            for (const auto& [agg, member] : aggs) {
                json b;
                b["name"] = name + "_" + agg;
                b["family_index"] = fam;
                b["per_family_instance_index"] = inst;
                b["run_name"] = name;
                b["run_type"] = "aggregate";
                b["repetitions"] = reps;
                b["aggregate_name"] = agg;
                b["aggregate_unit"] = "time";
                fill(b, st.*member, sv.*member, sw.*member, sm.*member);
                list.push_back(std::move(b));
            }
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
        std::ofstream f(o_.json);
        f << doc.dump(2) << "\n";
        if (!f) throw std::runtime_error("cannot write the JSON file \"" + o_.json + "\"");
    }
    if (!o_.csv.empty()) {
        std::ofstream f(o_.csv);
        f << "kernel,variant,n,threads,reps,batch,seconds_median,unit,value_min,value_median,value_max,gbs_wa_min,gbs_wa_"
             "median,gbs_wa_max,mflops_median,pages_local,counters\n";
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
            row << "," << (pl == r.counters.end() ? std::string() : fixed(pl->second, 4)) << ",\"" << counters << "\"\n";
            f << row.str();
        }
        if (!f) throw std::runtime_error("cannot write the CSV file \"" + o_.csv + "\"");
    }
}

}  // namespace bench
