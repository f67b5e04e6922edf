// What observing a process costs (issue 33, item 5): the time of one snapshot as the observed
// process's resident memory grows, and the slowdown that `ccnuma-ps --watch 1` causes to a
// triad it observes.
//
//   ps_cost [--ps PATH] [--sizes 1,4,8] [--snapshots 7] [--pairs 9] [--block SECONDS] [--n ELEMENTS]
//
// Snapshots: a child process writes SIZE GiB (one malloc'ed array) and waits; ccnuma::observe()
// of it is timed --snapshots times, and so is the whole tool, `ccnuma-ps --json PID` (process
// start, topology and JSON included). Slowdown: this process runs the triad a = b + s*c on
// OpenMP threads in blocks of equal work (sweeps calibrated to --block seconds), in pairs, one
// block observed by `ccnuma-ps --watch 1` and one not, the order alternating from pair to pair
// so that a drift of the machine falls on both. The observed/unobserved time ratio of the pairs
// is given as the Hodges-Lehmann estimate with its 95% signed-rank interval (ccnuma-bench's
// statistics, tools/ccnuma-bench/stats.hpp), and each variant's median with its interval.

#include "stats.hpp"

#include <ccnuma/process.hpp>

#include <omp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct options {
    std::string ps;  // ccnuma-ps; empty: only the library is timed, and no slowdown is measured
    std::vector<unsigned> sizes = {1, 4, 8};
    unsigned snapshots = 7, pairs = 9;
    double block = 3;
    std::size_t n = std::size_t{1} << 24;
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "ps_cost: %s (usage: ps_cost [--ps PATH] [--sizes 1,4,8] [--snapshots N] [--pairs N] "
                         "[--block SECONDS] [--n ELEMENTS])\n", why.c_str());
    std::exit(2);
}

double number(const char* opt, const char* text) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0)) usage(std::string(opt) + " needs a positive number, not \"" + text + "\"");
    return v;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string opt = argv[i];
        if (i + 1 >= argc) usage(opt + " needs a value");
        const char* value = argv[++i];
        if (opt == "--ps") o.ps = value;
        else if (opt == "--snapshots") o.snapshots = static_cast<unsigned>(number("--snapshots", value));
        else if (opt == "--pairs") o.pairs = static_cast<unsigned>(number("--pairs", value));
        else if (opt == "--block") o.block = number("--block", value);
        else if (opt == "--n") o.n = static_cast<std::size_t>(number("--n", value));
        else if (opt == "--sizes") {
            o.sizes.clear();
            for (const char* p = value; *p;) {
                char* end = nullptr;
                const unsigned long g = std::strtoul(p, &end, 10);
                if (end == p || g == 0 || (*end != ',' && *end != '\0')) usage(std::string("bad --sizes \"") + value + "\"");
                o.sizes.push_back(static_cast<unsigned>(g));
                p = *end ? end + 1 : end;
            }
        } else usage("unknown option \"" + opt + "\"");
    }
    return o;
}

// A child that writes `gib` GiB and waits until it is killed.
pid_t start_resident(unsigned gib) {
    int ready[2];
    if (pipe(ready) != 0) throw std::runtime_error("pipe failed");
    std::fflush(stdout);  // a child must not write this process's buffered lines again
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        close(ready[0]);
        const std::size_t bytes = static_cast<std::size_t>(gib) << 30;
        auto* p = static_cast<char*>(std::malloc(bytes));
        if (!p) _exit(1);
        std::memset(p, 1, bytes);
        (void)!write(ready[1], "r", 1);
        for (;;) pause();
    }
    close(ready[1]);
    char c = 0;
    const bool ok = read(ready[0], &c, 1) == 1;
    close(ready[0]);
    if (!ok) {
        waitpid(pid, nullptr, 0);
        throw std::runtime_error("the child could not write " + std::to_string(gib) + " GiB");
    }
    return pid;
}

void stop(pid_t pid) {
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

pid_t spawn(const std::vector<std::string>& words) {
    std::fflush(stdout);  // freopen in the child would write this process's buffered lines again
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        std::vector<char*> args;
        for (const auto& w : words) args.push_back(const_cast<char*>(w.c_str()));
        args.push_back(nullptr);
        if (FILE* null = std::freopen("/dev/null", "w", stdout)) (void)null;
        execv(args[0], args.data());
        std::fprintf(stderr, "ps_cost: cannot run %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    return pid;
}

int wait_status(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void print_times(const char* what, std::vector<double> t) {
    std::sort(t.begin(), t.end());
    const auto m = bench::stats_paired::median_interval(t);
    std::printf("  %-26s median %8.1f ms", what, 1e3 * m.median);
    if (m.has_interval) std::printf(" [%.1f, %.1f]", 1e3 * m.lo, 1e3 * m.hi);
    std::printf("  min %.1f  max %.1f  (%zu runs)\n", 1e3 * t.front(), 1e3 * t.back(), t.size());
}

void snapshot_cost(const options& o) {
    std::printf("snapshot of a process with SIZE GiB resident (one array), %u runs each:\n", o.snapshots);
    for (unsigned gib : o.sizes) {
        const pid_t pid = start_resident(gib);
        std::vector<double> library, tool;
        std::size_t resident = 0;
        for (unsigned r = 0; r < o.snapshots; ++r) {
            const auto t0 = clock_type::now();
            const auto s = ccnuma::observe(pid);
            library.push_back(seconds_since(t0));
            resident = 0;
            for (const auto& region : s.regions) resident += region.resident() * region.page_size;
            if (!o.ps.empty()) {
                const auto t1 = clock_type::now();
                const int rc = wait_status(spawn({o.ps, "--json", std::to_string(pid)}));
                tool.push_back(seconds_since(t1));
                if (rc != 0) throw std::runtime_error(o.ps + " --json " + std::to_string(pid) + " exited with " + std::to_string(rc));
            }
        }
        stop(pid);
        std::printf("%u GiB (%.2f GiB resident by the snapshot):\n", gib, static_cast<double>(resident) / (1 << 30));
        print_times("ccnuma::observe()", library);
        if (!tool.empty()) print_times("ccnuma-ps --json PID", tool);
    }
}

// One block of the triad: `sweeps` sweeps of a = b + s*c; its seconds.
double triad_block(std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c, unsigned sweeps) {
    const std::size_t n = a.size();
    double* pa = a.data();
    const double* pb = b.data();
    const double* pc = c.data();
    const auto t0 = clock_type::now();
    for (unsigned k = 0; k < sweeps; ++k) {
#pragma omp parallel for simd schedule(static)
        for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i] + 3.0 * pc[i];
    }
    return seconds_since(t0);
}

void watch_cost(const options& o) {
    std::vector<double> a(o.n), b(o.n), c(o.n);
    // First touch by the team that sweeps them, as a tuned triad does.
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < o.n; ++i) {
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
    }
    const double one = triad_block(a, b, c, 3) / 3;
    const unsigned sweeps = std::max(1u, static_cast<unsigned>(o.block / one));
    std::printf("\ntriad a = b + 3c, n %zu (%.0f MiB resident), %d threads, %u sweeps per block (%.2f s), %u pairs,\n"
                "observed by: %s --watch 1 %d\n",
                o.n, 3.0 * static_cast<double>(o.n) * sizeof(double) / (1 << 20), omp_get_max_threads(), sweeps,
                sweeps * one, o.pairs, o.ps.c_str(), static_cast<int>(getpid()));
    std::vector<double> watched, alone;
    for (unsigned p = 0; p < o.pairs; ++p)
        for (int half = 0; half < 2; ++half) {
            const bool observe = (half == 0) == (p % 2 == 0);
            pid_t watcher = 0;
            if (observe) {
                watcher = spawn({o.ps, "--watch", "1", std::to_string(getpid())});
                // Its start (topology, first read) is not part of the steady cost per second.
                std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            }
            const double t = triad_block(a, b, c, sweeps);
            if (watcher) {
                kill(watcher, SIGTERM);
                wait_status(watcher);
            }
            (observe ? watched : alone).push_back(t);
        }
    print_times("block, observed", watched);
    print_times("block, not observed", alone);
    const auto r = bench::stats_paired::paired_ratio(watched, alone);
    std::printf("observed / not observed: %s -> slowdown %+.2f%% [%+.2f%%, %+.2f%%]: %s\n",
                bench::stats_paired::to_string(r).c_str(), 100 * (r.estimate - 1), 100 * (r.lo - 1), 100 * (r.hi - 1),
                bench::stats_paired::to_string(bench::stats_paired::judge(r)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const options o = parse(argc, argv);
        snapshot_cost(o);
        if (!o.ps.empty()) watch_cost(o);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ps_cost: %s\n", e.what());
        return 1;
    }
}
