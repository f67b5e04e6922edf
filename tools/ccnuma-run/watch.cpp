// --watch: ccnuma-run starts the command as its child instead of becoming it, samples it with
// the library's process_observer (what ccnuma-ps --watch does), forwards the signals sent to
// ccnuma-run, and at the child's exit prints the run's report and writes the series.

#include "run.hpp"

#include "../common/cli.hpp"
#include "../common/output_file.hpp"

#include <ccnuma/detail/json.hpp>
#include <ccnuma/detail/os.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/process.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tools::run {

namespace {

volatile sig_atomic_t child_pid = 0;

// Signals sent to ccnuma-run by another process (kill, a batch system, a test's timeout) go on
// to the command. Those the terminal sends (Ctrl-C: si_code SI_KERNEL) reach the whole
// foreground process group, the command included, and are not sent twice.
void forward(int sig, siginfo_t* info, void*) {
    if (child_pid > 0 && (info == nullptr || info->si_code <= 0)) kill(child_pid, sig);
}

constexpr int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// Waits until `deadline` or the child's exit, whichever comes first; true at the exit (the
// child is then a zombie, not yet reaped, so its PID cannot be reused meanwhile).
bool wait_for_exit(pid_t pid, int pidfd, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        siginfo_t info{};
        if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
            return true;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        if (pidfd >= 0) {
            pollfd p{pidfd, POLLIN, 0};
            (void)poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        } else {  // a kernel without pidfd_open (before 5.3): look again every 10 ms
            const auto step = std::min<long long>(left.count(), 10);
            timespec ts{0, static_cast<long>(step) * 1000000};
            nanosleep(&ts, nullptr);
        }
    }
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", s);
    return buf;
}

std::string exit_text(int status) {
    if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

// Over 80 lines: fork, exec and the sampling loop share the child's pid and status pipe, and
// every error path must reap the child; one function keeps that lifetime in view.
int watch_command(const options& o, const std::optional<ccnuma::memory_policy>& memory) {
    if (o.watch_json) tools::check_output(*o.watch_json, "series JSON");
    // The exec's outcome comes back through a pipe that the exec closes: nothing read means the
    // command runs, so no sample is ever taken of ccnuma-run's own forked image.
    int status_pipe[2];
    if (pipe2(status_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    // The mask export_binding set (or the one ccnuma-run was given) goes to the child by hand:
    // libomp's fork handler puts the child back on the mask libomp started with, so under a
    // libomp build the command ran on every allowed CPU (RunWatch caught it in the clang build).
    const std::vector<unsigned> mask = ccnuma::detail::this_thread_cpus();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
        close(status_pipe[0]);
        int code = 0;
        try {
            if (const int err = mask.empty() ? 0 : ccnuma::detail::set_this_thread_cpus(mask))
                throw std::runtime_error("cannot set the affinity mask to " + ccnuma::format_list(mask) + ": " +
                                         std::strerror(err));
            if (memory) ccnuma::set_memory_policy(*memory);
            std::vector<char*> args = o.command;
            args.push_back(nullptr);
            execvp(args[0], args.data());
            code = errno;
            std::fprintf(stderr, "ccnuma-run: cannot execute \"%s\": %s\n", args[0], std::strerror(code));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ccnuma-run: %s\n", tools::reason(e));
            code = -1;
        }
        (void)!write(status_pipe[1], &code, sizeof code);
        _exit(code == ENOENT || code == ENOTDIR ? 127 : code > 0 ? 126 : 1);
    }
    close(status_pipe[1]);
    int code = 0;
    ssize_t got;
    while ((got = read(status_pipe[0], &code, sizeof code)) < 0 && errno == EINTR) {
    }
    close(status_pipe[0]);
    int status = 0;
    if (got > 0) {  // it did not start: the child said why
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }

    child_pid = pid;
    struct sigaction sa {};
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : forwarded) sigaction(sig, &sa, nullptr);
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));

    const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(o.watch_seconds));
    auto samples = ccnuma::detail::json::array();
    std::optional<ccnuma::process_observer> observer;
    std::string trouble;
    try {
        observer.emplace(pid);
    } catch (const std::exception& e) {
        trouble = tools::reason(e);
    }
    auto end = ccnuma::sample_status::ok;
    for (auto next = std::chrono::steady_clock::now(); observer;) {
        try {
            end = observer->sample();
        } catch (const std::exception& e) {
            trouble = tools::reason(e);
            break;
        }
        if (end != ccnuma::sample_status::ok) break;
        if (o.watch_json) samples.push_back(ccnuma::detail::to_json_value(observer->last()));
        next += interval;
        if (wait_for_exit(pid, pidfd, next)) break;
    }
    if (pidfd >= 0) close(pidfd);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_pid = 0;

    if (!trouble.empty()) {
        std::fprintf(stderr, "ccnuma-run: --watch: %s\n", trouble.c_str());
    }
    if (observer) {
        // The report goes to stderr, as time(1)'s does: the command's stdout stays its own.
        std::string report = "\nccnuma-run: --watch: " + std::to_string(observer->count()) + " samples of PID " +
                             std::to_string(pid) + " (" + o.command[0] + "), every " + seconds_text(o.watch_seconds) +
                             " s; " + exit_text(status) + "\n";
        if (observer->count() > 0) {
            report += "the last sample, at " + seconds_text(observer->last().seconds) + " s:\n";
            report += observer->last().snapshot.to_string();
            // The series' own verdicts: the last snapshot's were printed with its tables.
            std::string series;
            for (const auto& v : observer->verdicts()) {
                const auto& own = observer->last().snapshot.verdicts;
                if (std::none_of(own.begin(), own.end(), [&](const ccnuma::verdict& w) {
                        return w.kind == v.kind && w.subject == v.subject && w.text == v.text;
                    }))
                    series += "  [" + v.kind + "] " + v.subject + ": " + v.text + "\n";
            }
            report += "\nverdicts over the run\n" + (series.empty() ? std::string("  (none beyond the last sample's)\n") : series);
        }
        std::fputs(report.c_str(), stderr);
        if (o.watch_json) try {
                const char* why = end == ccnuma::sample_status::pid_reused ? "pid_reused" : "exited";
                tools::write_outputs({{*o.watch_json,
                                       ccnuma::detail::series_to_json(*observer, o.watch_seconds, std::move(samples), why)
                                               .dump(2) + "\n",
                                       "series JSON"}});
            } catch (const std::exception& e) {
                // The command's own failure status wins; a command that succeeded becomes 1.
                std::fprintf(stderr, "ccnuma-run: %s\n", e.what());
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
            }
    }
    // The shell's convention for a command killed by a signal.
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace tools::run
