#include "context.hpp"

#include "baselines.hpp"
#include "harness.hpp"
#include "kernels.hpp"
#include "numbers.hpp"
#include "places.hpp"
#include "ccnuma_git_hash.hpp"  // written at build time (cmake/git_hash.cmake)

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/openmp_places.hpp>
#include <ccnuma/detail/os.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/version.hpp>

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <utility>

extern char** environ;


namespace bench {

namespace {

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

/// One getppid system call (glibc does not cache it), in seconds: the median of 7 rounds of at
/// least 1 ms, measured once per run so that the text header and the JSON say the same.
double system_call_seconds() {
    static const double seconds = [] {
        using clock = std::chrono::steady_clock;
        auto round = [](long k) {
            const auto t0 = clock::now();
            for (long i = 0; i < k; ++i) static_cast<void>(getppid());
            return std::chrono::duration<double>(clock::now() - t0).count();
        };
        long k = 64;
        while (round(k) < 1e-3 && k < (1L << 22)) k *= 4;
        std::vector<double> per;
        for (int r = 0; r < 7; ++r) per.push_back(round(k) / static_cast<double>(k));
        return summarize(std::move(per)).median;
    }();
    return seconds;
}

/// What a system call costs here, and whether it drops the TLB: a kernel that isolates its page
/// tables (PTI) on a CPU without PCID switches them without keeping TLB entries, and libgomp
/// ends every region with one (a futex wake), so the sweep after each region refills the TLB.
/// On the Zen 5 VM of docs/benchmarks.md that cost 13 to 19 ns per 4 KiB page swept from the L3.
std::string system_calls() {
    std::string s = fixed(system_call_seconds() * 1e9, 0) + " ns each (getppid, median of 7 rounds)";
    const std::string pti = ccnuma::detail::page_table_isolation();
    s += "; page-table isolation: " + (pti.empty() ? std::string("unknown") : pti);
    const auto flags = ccnuma::detail::cpuinfo("flags");
    if (flags.empty()) return s;
    const bool pcid = (" " + flags.front() + " ").find(" pcid ") != std::string::npos;
    s += pcid ? ", PCID" : ", no PCID";
    if (!pcid && pti.find("PTI") != std::string::npos)
        s += ": every system call drops the TLB";
    return s;
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

}  // namespace

const std::array<double, 3>& start_load() {
    static const std::array<double, 3> load = [] {
        std::array<double, 3> l{-1, -1, -1};
        if (getloadavg(l.data(), 3) != 3) l = {-1, -1, -1};
        return l;
    }();
    return load;
}

std::size_t allowed_pus() { return affinity::start_cpus().size(); }

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
    // Places that hold more than OMP_PLACES asked for; under --bind the plan pins each thread
    // to its PU whatever the places are. The places are this machine's OS indexes: its hwloc
    // topology, whatever CCNUMA_TOPOLOGY or CCNUMA_CPUSET say, and loaded only where there is
    // something to check.
    if (const char* env = std::getenv("OMP_PLACES"); env != nullptr && o.bind.empty() && places_checked(env)) {
        if (const auto places = ccnuma::detail::openmp_places(); !places.empty()) {
            ccnuma::topology_options here;
            here.use_affinity_mask = false;
            here.use_environment = false;
            if (auto text = places_warning(places, ccnuma::topology::load(here), env); !text.empty())
                w.push_back(std::move(text));
        }
    }
    return w;
}

bool cpu_scaling_enabled() {
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (long cpu = 0; cpu < cpus; ++cpu) {
        const std::string governor = ccnuma::detail::cpufreq(static_cast<unsigned>(cpu), "scaling_governor");
        if (!governor.empty() && governor != "performance") return true;
    }
    return false;
}

std::vector<std::pair<std::string, std::string>> context(const options& o) {
    std::vector<std::pair<std::string, std::string>> c;
    // The whole machine, not the affinity mask: the JSON report is made after the runs, and
    // ccnuma-bench pins the threads it runs on, so after a team of one the process's mask is one
    // PU. (A binding runtime's narrowing the topology undoes itself: its places count.)
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
    } else if (const auto places = ccnuma::detail::openmp_places(); !places.empty()) {
        // What the runtime binds to, as it reports it: a place may hold more than its name says
        // (places_warning).
        plan = "the OpenMP runtime's places (OMP_PROC_BIND, OMP_PLACES), " + std::to_string(places.size()) + ":";
        for (std::size_t i = 0; i < places.size() && i < 16; ++i) plan += " {" + ccnuma::format_list(places[i]) + "}";
        if (places.size() > 16) plan += " ...";
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
    c.emplace_back("system_calls", system_calls());
    c.emplace_back("load_avg", fixed(load[0], 2) + " " + fixed(load[1], 2) + " " + fixed(load[2], 2) + " (at the start)");
    c.emplace_back("allowed_pus", std::to_string(allowed_pus()));
    std::string warnings;
    for (const auto& w : run_warnings(o)) warnings += (warnings.empty() ? "" : "; ") + w;
    c.emplace_back("warnings", warnings.empty() ? "none" : warnings);
    c.emplace_back("ccnuma", std::string(ccnuma::version_string) + ", git " + CCNUMA_GIT_HASH);
    return c;
}

}  // namespace bench
