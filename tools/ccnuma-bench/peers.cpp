#include "peers.hpp"

#include "kernels.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace bench::peers {

namespace {

std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string p = (dir.empty() ? "." : dir) + "/" + name;
        if (access(p.c_str(), X_OK) == 0) return p;
    }
    return {};
}

std::set<std::string> cpu_flags() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("flags", 0) == 0) {
            std::set<std::string> s;
            std::stringstream words(line.substr(line.find(':') + 1));
            std::string w;
            while (words >> w) s.insert(w);
            return s;
        }
    return {};
}

/// Runs argv with stdout captured; stderr goes to the same pipe, so that likwid's own errors
/// end up in ours. posix_spawn, not fork: glibc spawns with CLONE_VM | CLONE_VFORK, so the
/// parent's pages are not made copy-on-write. With fork, the variants timed after a peer paid
/// for that: in one run here the ccnuma::vector triad at N = 10^6 on one thread fell to a median
/// of 0.56 GB/s against 17 without peers; with posix_spawn it runs at 17 beside them.
std::string run_capture(const std::vector<std::string>& args, int& status) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = 0;
    {
        const affinity::released_scope released;  // the peer pins its threads as from a shell
        rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        throw std::runtime_error("cannot run " + args[0] + ": " + std::strerror(rc));
    }
    std::string out;
    std::array<char, 4096> buf{};
    ssize_t k;
    while ((k = read(fds[0], buf.data(), buf.size())) > 0) out.append(buf.data(), static_cast<std::size_t>(k));
    close(fds[0]);
    waitpid(pid, &status, 0);
    return out;
}

double field(const std::string& out, const std::string& key) {
    const auto p = out.find("\n" + key);
    if (p == std::string::npos) return -1;
    const auto colon = out.find(':', p);
    return std::strtod(out.c_str() + colon + 1, nullptr);
}

}  // namespace

std::vector<std::string> likwid_kernels(const std::string& family) {
    if (find_on_path("likwid-bench").empty())
        throw std::runtime_error(
            "--peers needs likwid-bench, which is not on PATH: install Debian's likwid package (apt-get install likwid, "
            "or scripts/deps.sh)");
    const auto flags = cpu_flags();
    const bool fma = flags.count("fma") > 0, has_fma = family == "triad" || family == "stream";
    const bool mem = family != "sum";
    std::vector<std::string> isas;
    if (flags.count("avx")) isas.push_back("avx");
    if (flags.count("avx512f")) isas.push_back("avx512");
    if (isas.empty()) isas.push_back("sse");  // every x86-64 has SSE2
    // What this likwid-bench has: not every combination exists (5.2 has stream_mem_avx_fma but
    // no stream_mem_avx512_fma).
    int status = 0;
    const std::string listing = run_capture({find_on_path("likwid-bench"), "-a"}, status);
    std::set<std::string> known;
    std::stringstream lines(listing);
    for (std::string line; std::getline(lines, line);) known.insert(line.substr(0, line.find(' ')));
    std::vector<std::string> k;
    for (const char* store : {"", "mem_"}) {
        if (*store && !mem) continue;
        for (const auto& isa : isas)
            for (const std::string& name : {family + "_" + store + isa, family + "_" + store + isa + "_fma"})
                if (known.count(name) && (name.find("_fma") == std::string::npos || (has_fma && fma))) k.push_back(name);
    }
    if (k.empty()) throw std::runtime_error("--peers: this likwid-bench has no " + family + " kernel for this CPU (likwid-bench -a)");
    return k;
}

bool streams(const std::string& kernel) { return kernel.find("_mem") != std::string::npos; }

variant likwid(const std::string& kernel, std::size_t n, unsigned threads, unsigned arrays, std::size_t* actual_n) {
    const std::string exe = find_on_path("likwid-bench");
    // -W domain:size:threads. The size is all the kernel's vectors together; "N" is the whole node
    // and likwid-bench pins thread t to hardware thread t of it.
    const std::string workgroup = "N:" + std::to_string(8 * arrays * n) + "B:" + std::to_string(threads);
    return {"likwid-bench " + kernel, [exe, kernel, workgroup, actual_n, arrays](std::size_t batch) {
                int status = 0;
                const auto out = run_capture({exe, "-t", kernel, "-W", workgroup, "-i", std::to_string(batch)}, status);
                const double time = field(out, "Time"), per_thread = field(out, "Iterations per thread"),
                             size = field(out, "Size (Byte)");
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || time <= 0 || per_thread <= 0) {
                    auto last = out.substr(out.size() > 300 ? out.size() - 300 : 0);
                    for (auto& c : last)
                        if (c == '\n') c = ' ';
                    throw std::runtime_error("likwid-bench -t " + kernel + " -W " + workgroup + " failed: " + last);
                }
                if (actual_n) *actual_n = static_cast<std::size_t>(size / (8.0 * arrays));
                return time / per_thread * static_cast<double>(batch);
            }};
}

}  // namespace bench::peers
