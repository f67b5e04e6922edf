#include "peers.hpp"

#include <sched.h>
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

/// The CPUs the process may use, read before main() binds anything. A child inherits the
/// affinity of the thread that spawns it, and with --bind that is one CPU: likwid-bench would
/// then take that single CPU for its whole domain and pin all its threads there (with
/// --bind 2,compact here its triads ran at half speed, every median near 40.0 GB/s). Peers are
/// spawned with this mask instead, so that they pin their threads as they would from a shell.
class startup_affinity {
public:
    startup_affinity() : set_(CPU_ALLOC(cpus)) {
        if (set_ && sched_getaffinity(0, CPU_ALLOC_SIZE(cpus), set_) != 0) {
            CPU_FREE(set_);
            set_ = nullptr;
        }
    }
    ~startup_affinity() {
        if (set_) CPU_FREE(set_);
    }
    startup_affinity(const startup_affinity&) = delete;
    startup_affinity& operator=(const startup_affinity&) = delete;

    /// Runs spawn() with the calling thread on the startup mask, then restores its own.
    template <class F>
    auto with(F&& spawn) const {
        cpu_set_t* now = CPU_ALLOC(cpus);
        const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
        const bool moved = set_ && now && sched_getaffinity(0, bytes, now) == 0 && !CPU_EQUAL_S(bytes, now, set_) &&
                           sched_setaffinity(0, bytes, set_) == 0;
        struct restore {
            bool moved;
            cpu_set_t* now;
            std::size_t bytes;
            ~restore() {
                if (moved) (void)sched_setaffinity(0, bytes, now);
                if (now) CPU_FREE(now);
            }
        } guard{moved, now, bytes};
        return spawn();
    }

private:
    static constexpr int cpus = 8192;  // the kernel's NR_CPUS limit on x86-64
    cpu_set_t* set_;
};

const startup_affinity startup;

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
    const int rc = startup.with([&] { return posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ); });
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

std::vector<std::string> likwid_kernels() {
    if (find_on_path("likwid-bench").empty())
        throw std::runtime_error(
            "--peers needs likwid-bench, which is not on PATH: install Debian's likwid package (apt-get install likwid, "
            "or scripts/deps.sh)");
    const auto flags = cpu_flags();
    std::vector<std::string> k;
    if (flags.count("avx")) k.insert(k.end(), {"triad_avx", "triad_mem_avx"});
    if (flags.count("avx512f")) k.insert(k.end(), {"triad_avx512", "triad_mem_avx512"});
    if (k.empty()) throw std::runtime_error("--peers: this CPU has neither AVX nor AVX-512, which likwid-bench's triad kernels need");
    return k;
}

variant likwid(const std::string& kernel, std::size_t n, unsigned threads, std::size_t* actual_n) {
    const std::string exe = find_on_path("likwid-bench");
    // -W domain:size:threads. The size is the four vectors together; "N" is the whole node
    // and likwid-bench pins thread t to hardware thread t of it.
    const std::string workgroup = "N:" + std::to_string(32 * n) + "B:" + std::to_string(threads);
    return {"likwid-bench " + kernel, [exe, kernel, workgroup, actual_n](std::size_t batch) {
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
                if (actual_n) *actual_n = static_cast<std::size_t>(size / 32);
                return time / per_thread * static_cast<double>(batch);
            }};
}

}  // namespace bench::peers
