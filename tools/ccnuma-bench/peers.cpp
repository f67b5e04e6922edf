#include "peers.hpp"

#include "kernels.hpp"

#include <ccnuma/detail/os.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
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
    const auto flags = ccnuma::detail::cpuinfo("flags");
    std::set<std::string> s;
    if (flags.empty()) return s;
    std::stringstream words(flags.front());
    for (std::string w; words >> w;) s.insert(w);
    return s;
}

/// Runs argv with stdout captured; stderr goes to the same pipe, so that likwid's own errors
/// end up in ours. posix_spawn, not fork: glibc spawns with CLONE_VM | CLONE_VFORK, so the
/// parent's pages are not made copy-on-write. With fork, the variants timed after a peer paid
/// for that: in one run here the ccnuma::vector triad at N = 10^6 on one thread fell to a median
/// of 0.56 GB/s against 17 without peers; with posix_spawn it runs at 17 beside them.
///
/// The peer gets a process group of its own. When `timeout` seconds pass, or when it exits but
/// something it left behind still holds the pipe, the whole group is killed: the read never
/// waits for an EOF that may not come. Throws std::runtime_error naming `what` on a timeout.
// Over 80 lines: spawn, read with a deadline, kill the group and reap are one sequence whose
// error paths must each close the pipe and reap the child; split, each part would own half of it.
std::string run_capture(const std::vector<std::string>& args, int& status, double timeout, const std::string& what) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = 0;
    {
        const affinity::released_scope released;  // the peer pins its threads as from a shell
        rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        throw std::runtime_error("cannot run " + args[0] + ": " + std::strerror(rc));
    }
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::duration<double>(timeout);
    constexpr std::size_t max_output = std::size_t{1} << 24;
    std::string out;
    std::array<char, 4096> buf{};
    bool open = true, exited = false, timed_out = false;
    // Whether the peer itself has exited, leaving it a zombie (WNOWAIT): its pid, which is its
    // group's id, cannot be reused before the group is killed and the zombie reaped below.
    auto peer_exited = [pid] {
        siginfo_t info{};
        return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
    };
    while (open || !exited) {
        const auto left = std::chrono::duration<double>(deadline - clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (!exited) exited = peer_exited();
        if (exited && open) {
            // Take what is already in the pipe; a child left behind may keep its end open forever.
            pollfd p{fds[0], POLLIN, 0};
            while (out.size() < max_output && clock::now() < deadline && poll(&p, 1, 0) > 0 &&
                   (p.revents & (POLLIN | POLLHUP))) {
                const ssize_t k = read(fds[0], buf.data(), buf.size());
                if (k <= 0) break;
                out.append(buf.data(), static_cast<std::size_t>(k));
            }
            break;
        }
        if (!open) {  // EOF: wait for the exit, a little at a time
            usleep(2000);
            continue;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int ms = static_cast<int>(std::min(left * 1000.0, 50.0)) + 1;
        const int ready = poll(&p, 1, ms);
        if (ready < 0 && errno != EINTR) break;
        if (ready > 0) {
            const ssize_t k = read(fds[0], buf.data(), buf.size());
            if (k > 0) out.append(buf.data(), static_cast<std::size_t>(k));
            else if (k == 0 || errno != EINTR) open = false;
            if (out.size() >= max_output) break;  // a peer that talks forever: stop listening
        }
    }
    close(fds[0]);
    kill(-pid, SIGKILL);  // the group: the peer if it still runs, and whatever it left behind
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", timeout);
        throw std::runtime_error(what + ": no result within " + secs +
                                 " s (--peer-timeout): killed its process group");
    }
    return out;
}

/// The value after "key:" at the start of a line of likwid-bench's output, which must be a
/// finite number above 0; throws naming the peer and the field otherwise.
double field(const std::string& output, const std::string& key, const std::string& peer) {
    const std::string out = "\n" + output;  // the first line too starts after a newline
    const auto p = out.find("\n" + key + ":");
    if (p == std::string::npos) throw std::runtime_error(peer + ": its output has no \"" + key + "\" field");
    const char* text = out.c_str() + p + key.size() + 2;
    // An empty value is read as nothing: strtod would skip the newline and take the next line's number.
    while (*text == ' ' || *text == '\t') ++text;
    double v = 0;
    const char* end = text;
    if (*text != '\n' && *text != '\r') {
        char* parsed = nullptr;
        v = std::strtod(text, &parsed);
        end = parsed;
    }
    // After the number only blanks, and "sec" after the time, up to the end of the line: a value
    // with anything else in its line ("32000000garbage") is not the number it starts with.
    const char* rest = end;
    while (*rest == ' ' || *rest == '\t') ++rest;
    if (key == "Time" && std::strncmp(rest, "sec", 3) == 0) rest += 3;
    while (*rest == ' ' || *rest == '\t' || *rest == '\r') ++rest;
    const bool whole_line = end != text && (*rest == '\n' || *rest == '\0');
    const auto eol = out.find('\n', p + 1);
    std::string shown = out.substr(p + key.size() + 2, eol == std::string::npos ? std::string::npos : eol - (p + key.size() + 2));
    while (!shown.empty() && (shown.front() == ' ' || shown.front() == '\t')) shown.erase(0, 1);
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    for (auto& c : shown)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    if (!whole_line || !std::isfinite(v) || v <= 0)
        throw std::runtime_error(peer + ": \"" + key + "\" is \"" + shown + "\", not a finite number above 0");
    return v;
}

/// The hardware threads of likwid-bench's "Group: 0 Thread 0 Global Thread G running on
/// hwthread X - ..." lines, as "X0,X1,..." by global thread G: its threads print those lines
/// in whatever order they get there. The allocating process's own "running on" line is not a
/// thread's.
std::string hwthreads(const std::string& output) {
    std::map<long, long> by_thread;
    std::stringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        const auto global = line.find(" Global Thread "), at = line.find(" running on hwthread ");
        if (line.rfind("Group:", 0) != 0 || global == std::string::npos || at == std::string::npos) continue;
        const char* g = line.c_str() + global + std::strlen(" Global Thread ");
        const char* p = line.c_str() + at + std::strlen(" running on hwthread ");
        char *g_end = nullptr, *p_end = nullptr;
        const long thread = std::strtol(g, &g_end, 10), cpu = std::strtol(p, &p_end, 10);
        if (g_end != g && p_end != p && thread >= 0 && cpu >= 0) by_thread[thread] = cpu;
    }
    std::string list;
    for (const auto& [thread, cpu] : by_thread) list += (list.empty() ? "" : ",") + std::to_string(cpu);
    return list;
}

/// field() for a count: also a whole number.
double count_field(const std::string& output, const std::string& key, const std::string& peer) {
    const double v = field(output, key, peer);
    if (v > 1e15) throw std::runtime_error(peer + ": \"" + key + "\" is " + std::to_string(v) + ", more than 10^15");
    if (v != std::floor(v)) throw std::runtime_error(peer + ": \"" + key + "\" is " + std::to_string(v) + ", not a whole number");
    return v;
}

/// The highest bandwidth the machine can plausibly give `threads` threads, in GB/s: the L1
/// ceiling of 3 accesses of 64 bytes per cycle per thread (two AVX-512 loads and a store, the
/// most an x86 core of this decade does) at the CPU's highest clock, at least 5 GHz. No
/// kernel on any data size exceeds it; a peer reporting more than 10 times it measured nothing.
double plausible_gbs(unsigned threads) {
    double ghz = 5.0;
    const double khz = std::strtod(ccnuma::detail::cpufreq(0, "cpuinfo_max_freq").c_str(), nullptr);
    ghz = std::max(ghz, khz / 1e6);
    for (const auto& mhz : ccnuma::detail::cpuinfo("cpu MHz")) ghz = std::max(ghz, std::strtod(mhz.c_str(), nullptr) / 1e3);
    return 192.0 * ghz * std::max(1u, threads);
}

/// 30 s, plus 10 times what the call's bytes take at 1 GB/s (slower than any memory system).
double default_timeout(double bytes) { return 30.0 + 10.0 * bytes / 1e9; }

/// "<what> failed (exit 127): <the last 300 characters of its output, on one line>".
std::string failed(const std::string& what, int status, const std::string& out) {
    auto last = out.substr(out.size() > 300 ? out.size() - 300 : 0);
    for (auto& c : last)
        if (c == '\n' || c == '\r') c = ' ';
    return what + " failed (" +
           (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status))) +
           "): " + last;
}

}  // namespace

std::vector<std::string> likwid_kernels(const std::string& family, double timeout) {
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
    const std::string listing =
        run_capture({find_on_path("likwid-bench"), "-a"}, status, timeout > 0 ? timeout : default_timeout(0), "likwid-bench -a");
    // A likwid-bench that cannot start (a missing library, say) lists nothing: that is its
    // failure, not a CPU without the kernels.
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error(failed("likwid-bench -a", status, listing));
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

variant likwid(const std::string& kernel, std::size_t n, unsigned threads, unsigned arrays, ran* what_ran,
               double timeout) {
    const std::string exe = find_on_path("likwid-bench");
    // -W domain:size:threads. The size is all the kernel's vectors together; "N" is the whole node
    // and likwid-bench pins thread t to hardware thread t of it.
    const double requested = 8.0 * arrays * static_cast<double>(n);
    const std::string workgroup = "N:" + likwid_size(requested) + ":" + std::to_string(threads);
    const double ceiling = 10 * plausible_gbs(threads);
    return {"likwid-bench " + kernel, [exe, kernel, workgroup, what_ran, arrays, n, timeout, ceiling, requested,
                                       threads](std::size_t batch) {
                const std::string peer = "likwid-bench -t " + kernel + " -W " + workgroup;
                const double bytes = 8.0 * arrays * static_cast<double>(n) * static_cast<double>(batch);
                int status = 0;
                const auto t0 = std::chrono::steady_clock::now();
                const auto out = run_capture({exe, "-t", kernel, "-W", workgroup, "-i", std::to_string(batch)}, status,
                                             timeout > 0 ? timeout : default_timeout(bytes), peer);
                const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error(failed(peer, status, out));
                const double time = field(out, "Time", peer), per_thread = count_field(out, "Iterations per thread", peer),
                             size = field(out, "Size (Byte)", peer), iterations = count_field(out, "Iterations", peer);
                // The row is labelled with `threads`: likwid-bench counts every thread's iterations.
                if (iterations != per_thread * threads) {
                    char line[200];
                    std::snprintf(line, sizeof line, ": \"Iterations\" %.0f is not %u threads of %.0f (\"Iterations per thread\"): "
                                  "it ran another number of threads", iterations, threads, per_thread);
                    throw std::runtime_error(peer + line);
                }
                // Its time is part of the call's: a longer one measured nothing that happened.
                if (time > wall) {
                    char line[200];
                    std::snprintf(line, sizeof line, ": \"Time\" %g s is longer than the whole call (%.3g s)", time, wall);
                    throw std::runtime_error(peer + line);
                }
                if (size > 1e15) throw std::runtime_error(peer + ": \"Size (Byte)\" is " + std::to_string(size) + ", more than 1 PB");
                // A row must say what ran: likwid-bench on another size than ccnuma's is no peer.
                if (!same_size(size, requested, arrays, threads)) {
                    char line[256];
                    std::snprintf(line, sizeof line,
                                  ": ran on %.0f bytes (its \"Size (Byte)\"), not the %.0f asked for (%u arrays of %zu "
                                  "doubles): no row for a different size",
                                  size, requested, arrays, n);
                    throw std::runtime_error(peer + line);
                }
                const double gbs = size * per_thread / time / 1e9;
                if (!(gbs <= ceiling)) {
                    char line[256];
                    std::snprintf(line, sizeof line,
                                  ": \"Time\" %g s for %g iterations of %g bytes is %.3g GB/s, more than 10x this machine's "
                                  "plausible %.3g GB/s",
                                  time, per_thread, size, gbs, ceiling / 10);
                    throw std::runtime_error(peer + line);
                }
                if (what_ran) {
                    what_ran->n = std::max<std::size_t>(1, static_cast<std::size_t>(size / (8.0 * arrays)));
                    what_ran->hwthreads = hwthreads(out);
                }
                return time / per_thread * static_cast<double>(batch);
            }};
}

}  // namespace bench::peers
