#include "qemu.hpp"

#include "image.hpp"
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tools::vm {

namespace {

volatile std::sig_atomic_t interrupting_signal = 0;

extern "C" void on_signal(int sig) { interrupting_signal = sig; }

// While a guest runs, SIGINT, SIGTERM, SIGHUP and SIGPIPE (our reader went away, as with
// `ccnuma-vm ... | head`) stop it and let ccnuma-vm clean up (the image file) instead of dying on
// the spot.
struct signal_guard {
    static constexpr int count = 4;
    static constexpr int signals[count] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction old[count] {};
    signal_guard() {
        interrupting_signal = 0;
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < count; ++i) ::sigaction(signals[i], &sa, &old[i]);
    }
    ~signal_guard() {
        for (int i = 0; i < count; ++i) ::sigaction(signals[i], &old[i], nullptr);
    }
};

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + "M"; }

void write_all(int fd, const char* data, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;  // our reader went away (e.g. `| head`); keep draining the guest regardless
        }
        data += w;
        n -= static_cast<std::size_t>(w);
    }
}

// The line of `text` that contains `needle`, or "".
std::string line_with(const std::string& text, const char* needle) {
    const auto at = text.find(needle);
    if (at == std::string::npos) return {};
    const auto begin = text.rfind('\n', at);
    auto end = text.find_first_of("\r\n", at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1));
    // Drop the "[    1.234567] " timestamp.
    if (line.starts_with('[')) {
        const auto close = line.find("] ");
        if (close != std::string::npos) line.erase(0, close + 2);
    }
    return line;
}

}  // namespace

std::string_view to_string(accel a) {
    switch (a) {
        case accel::tcg: return "tcg";
        case accel::tcg_multi: return "tcg-multi";
        case accel::kvm: return "kvm";
    }
    return "?";
}

std::optional<accel> accel_named(std::string_view word) {
    for (const accel a : every_accel)
        if (to_string(a) == word) return a;
    return std::nullopt;
}

std::vector<hmat_entry> hmat_entries(const ccnuma::emulated_machine& m) {
    // CPU nodes among themselves scale by the SLIT ratio (20/10: twice the latency, half the
    // bandwidth); a memory node is reached through its initiator, times its own ratios.
    std::vector<std::vector<unsigned>> cpu_distance(m.nodes, std::vector<unsigned>(m.nodes, 20));
    for (unsigned i = 0; i < m.nodes; ++i) {
        cpu_distance[i][i] = 10;
        if (!m.distances.empty())
            for (unsigned j = 0; j < m.nodes; ++j) cpu_distance[i][j] = m.distances[i][j];
    }
    std::vector<hmat_entry> v;
    for (unsigned i = 0; i < m.nodes; ++i)
        for (unsigned t = 0; t < m.all_nodes(); ++t) {
            const bool memory = t >= m.nodes;
            const unsigned through = memory ? m.first_node_of_socket(m.memory_nodes[t - m.nodes].near) : t;
            const double far = cpu_distance[i][through] / 10.0;
            const double latency = memory ? m.memory_nodes[t - m.nodes].latency : 1.0;
            const double bandwidth = memory ? m.memory_nodes[t - m.nodes].bandwidth : 1.0;
            v.push_back({i, t, static_cast<std::uint64_t>(std::llround(dram_latency_ns * far * latency)),
                         std::max<std::uint64_t>(1, static_cast<std::uint64_t>(
                                                        std::llround(dram_bandwidth_mib_s * bandwidth / far)))});
        }
    return v;
}

std::vector<std::string> qemu_arguments(const ccnuma::emulated_machine& m, const kit& k, const std::string& image,
                                        accel a, bool keep_going) {
    std::vector<std::string> v = {"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot"};
    // "max" gives the guest every instruction TCG can emulate (AVX2 in QEMU 7.2), so a host
    // binary built with -march=x86-64-v3 still runs. One host thread runs every vCPU unless
    // tcg-multi is asked for: both guest kernel failures seen so far came under the
    // multi-threaded translator, and on the 2-core host measured one thread was faster
    // (docs/tools/ccnuma-vm.md, How it works step 5, and Time).
    switch (a) {
        case accel::kvm: v.insert(v.end(), {"-accel", "kvm", "-cpu", "host"}); break;
        case accel::tcg: v.insert(v.end(), {"-accel", "tcg,thread=single", "-cpu", "max"}); break;
        case accel::tcg_multi: v.insert(v.end(), {"-accel", "tcg,thread=multi", "-cpu", "max"}); break;
    }
    const unsigned cpus = m.total_cpus(), sockets = m.effective_sockets();
    v.insert(v.end(), {"-m", mib(m.total_memory()), "-smp",
                       "cpus=" + std::to_string(cpus) + ",sockets=" + std::to_string(sockets) +
                           ",cores=" + std::to_string(cpus / sockets / m.threads_per_core) +
                           ",threads=" + std::to_string(m.threads_per_core)});
    for (unsigned n = 0; n < m.nodes; ++n) {
        const unsigned first = n * m.cpus_per_node(), last = first + m.cpus_per_node() - 1;
        v.insert(v.end(), {"-object", "memory-backend-ram,id=m" + std::to_string(n) + ",size=" + mib(m.mem_per_node),
                           "-numa",
                           "node,nodeid=" + std::to_string(n) + ",cpus=" + std::to_string(first) +
                               (last != first ? "-" + std::to_string(last) : std::string()) + ",memdev=m" +
                               std::to_string(n)});
    }
    for (unsigned x = 0; x < m.memory_nodes.size(); ++x) {
        const std::string id = std::to_string(m.nodes + x);
        v.insert(v.end(), {"-object", "memory-backend-ram,id=m" + id + ",size=" + mib(m.memory_nodes[x].size), "-numa",
                           "node,nodeid=" + id + ",memdev=m" + id + ",initiator=" +
                               std::to_string(m.first_node_of_socket(m.memory_nodes[x].near))});
    }
    const auto d = m.distance_matrix();
    for (unsigned i = 0; i < d.size(); ++i)
        for (unsigned j = 0; j < d[i].size(); ++j)
            if (i != j)
                v.insert(v.end(), {"-numa", "dist,src=" + std::to_string(i) + ",dst=" + std::to_string(j) +
                                                ",val=" + std::to_string(d[i][j])});
    if (!m.memory_nodes.empty()) {
        v.insert(v.end(), {"-machine", "hmat=on"});
        for (const hmat_entry& e : hmat_entries(m))
            v.insert(v.end(), {"-numa", "hmat-lb,initiator=" + std::to_string(e.initiator) + ",target=" +
                                            std::to_string(e.target) +
                                            ",hierarchy=memory,data-type=access-latency,latency=" +
                                            std::to_string(e.latency_ns),
                               "-numa", "hmat-lb,initiator=" + std::to_string(e.initiator) + ",target=" +
                                            std::to_string(e.target) +
                                            ",hierarchy=memory,data-type=access-bandwidth,bandwidth=" +
                                            std::to_string(e.bandwidth_mib_s) + "M"});
    }
    // panic=-1 turns a panic into a reset, which -no-reboot turns into QEMU's exit. The rest
    // of the line skips work of the boot that no guest command depends on, about 0.6 s of a
    // 2-node guest's boot under TCG (initcall_debug): the crypto API's self-tests, the jitter
    // entropy source's calibration (the kernel's own random pool is seeded without it), and
    // loading the built-in X.509 keys and the encrypted-key type (no guest loads a module or
    // uses a keyring).
    std::string cmdline = "console=ttyS0 panic=-1 quiet mitigations=off transparent_hugepage=" + m.thp +
                          " numa_balancing=" + (m.numa_balancing ? "enable" : "disable") +
                          " cryptomgr.notests initcall_blacklist=jent_mod_init,load_system_certificate_list,init_encrypted";
    if (!keep_going) cmdline += " oops=panic";
    v.insert(v.end(), {"-kernel", k.boot_kernel, "-initrd", image, "-append", cmdline});
    for (int fd = 3; fd <= 6; ++fd) v.insert(v.end(), {"-serial", "file:/dev/fd/" + std::to_string(fd)});
    return v;
}

guest_run run_qemu(const std::string& qemu, const std::vector<std::string>& args, double timeout_s, bool forward,
                   bool abort_on_kvm_error) {
    enum { con, out, err, st, qerr, channels };
    int pipes[channels][2];
    for (auto& p : pipes)
        if (::pipe2(p, O_CLOEXEC) != 0) throw failure(exit_setup, std::string("cannot create a pipe: ") + std::strerror(errno));
    std::vector<std::string> argv = {qemu};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);

    const double start = now_seconds();
    const pid_t pid = ::fork();
    if (pid < 0) throw failure(exit_setup, std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
        // QEMU must not outlive us, e.g. when ctest kills a test at its timeout.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        // Its own process group, so a timeout or a signal stops QEMU and whatever it started
        // (a wrapper's children that would hold our pipes open) with one kill.
        ::setpgid(0, 0);
        // Move every write end out of the way first: a pipe may already sit on 3..6.
        int high[channels];
        for (int i = 0; i < channels; ++i) high[i] = ::fcntl(pipes[i][1], F_DUPFD_CLOEXEC, 64);
        for (int i = 0; i < 4; ++i) ::dup2(high[i], 3 + i);
        const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        ::dup2(null, 0);
        ::dup2(high[qerr], 1);
        ::dup2(high[qerr], 2);
        ::execv(cargv[0], cargv.data());
        const std::string msg = qemu + ": " + std::strerror(errno) + "\n";
        (void)!::write(2, msg.data(), msg.size());
        ::_exit(127);
    }
    for (auto& p : pipes) ::close(p[1]);

    signal_guard guard;
    guest_run r;
    std::string status;
    pollfd fds[channels];
    for (int i = 0; i < channels; ++i) fds[i] = {pipes[i][0], POLLIN, 0};
    int open_fds = channels;
    const double deadline = start + timeout_s;
    double grace_deadline = 0;  // after "exit N", QEMU gets a few seconds to power off
    bool killed = false;
    char buf[65536];
    // After the kill, what is still buffered in the pipes is read for at most this long: a
    // process that left QEMU's group (setsid) may hold a pipe open forever.
    constexpr double drain_s = 2;
    double drain_deadline = 0;
    auto stop = [&] {
        if (!killed) {
            ::kill(-pid, SIGKILL);
            ::kill(pid, SIGKILL);  // in case setpgid had not run yet
            drain_deadline = now_seconds() + drain_s;
        }
        killed = true;
    };
    while (open_fds > 0) {
        const double limit = killed ? drain_deadline : grace_deadline > 0 ? std::min(deadline, grace_deadline) : deadline;
        const double left = limit - now_seconds();
        if (left <= 0 && killed) break;
        if (left <= 0) {
            if (!r.exited) r.timed_out = true;
            stop();
            continue;
        }
        const int wait_ms = static_cast<int>(std::ceil(left * 1000));
        const int ready = ::poll(fds, channels, wait_ms);
        if (interrupting_signal != 0 && !killed) {
            r.interrupted_by = interrupting_signal;
            stop();
        }
        if (ready < 0 && errno != EINTR) break;
        for (int i = 0; i < channels && ready > 0; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            const auto len = static_cast<std::size_t>(n);
            switch (i) {
            case out:
                if (forward) write_all(1, buf, len);
                break;
            case err:
                if (forward) write_all(2, buf, len);
                break;
            case con:
                r.console.append(buf, len);
                if (r.console.size() > (std::size_t{1} << 20)) r.console.erase(0, r.console.size() - (std::size_t{1} << 19));
                break;
            case qerr:
                r.qemu_error.append(buf, len);
                if (abort_on_kvm_error && (r.qemu_error.find("KVM internal error") != std::string::npos ||
                                           r.qemu_error.find("emulation failure") != std::string::npos))
                    stop();
                break;
            case st: {
                status.append(buf, len);
                std::size_t nl;
                while ((nl = status.find('\n')) != std::string::npos) {
                    std::string line = status.substr(0, nl);
                    status.erase(0, nl + 1);
                    while (!line.empty() && line.back() == '\r') line.pop_back();
                    if (line == "booted") {
                        r.booted = true;
                        r.boot_s = now_seconds() - start;
                    } else if (line == "running") {
                        r.running = true;
                    } else if (line.rfind("exit ", 0) == 0) {
                        r.exited = true;
                        r.exit_status = std::atoi(line.c_str() + 5);
                        grace_deadline = now_seconds() + 10;
                    } else if (line.rfind("sigill ", 0) == 0) {
                        r.illegal_instruction = line.substr(7);
                    } else if (line.rfind("oom ", 0) == 0) {
                        r.out_of_memory = line.substr(4);
                    } else if (line.rfind("setup-failed ", 0) == 0) {
                        r.setup_failed = line.substr(13);
                    }
                }
                break;
            }
            }
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0) ::close(f.fd);
    int raw = 0;
    while (::waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
    }
    r.total_s = now_seconds() - start;
    r.panic = line_with(r.console, "Kernel panic - not syncing");
    for (const char* o : {"Oops:", "BUG:", "general protection fault"}) {
        if (r.oops.empty()) r.oops = line_with(r.console, o);
    }
    return r;
}

bool kvm_usable(const kit& k, bool verbose) {
    const int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    const std::filesystem::path record = std::filesystem::path(k.cache_dir) / "kvm-probe";
    // The verdict holds for one kernel entered one way: a bzImage starts in real mode, which
    // nested KVM may fail to emulate where the PVH entry would not.
    const std::string key = k.kernel_package + " booted from " + k.boot_kernel;
    {
        std::ifstream in(record);
        std::string booted, verdict;
        if (std::getline(in, booted) && std::getline(in, verdict) && booted == key) return verdict == "ok";
    }
    request probe;
    probe.shape.nodes = 2;
    probe.shape.cores_per_node = 1;
    probe.shape.mem_per_node = std::uint64_t{128} << 20;
    probe.command = {"/.ccnuma-vm/busybox", "true"};
    const std::string image = k.cache_dir + "/kvm-probe.cpio";
    {
        initramfs img;
        for (const char* d : {"/proc", "/sys", "/dev", "/tmp", "/root", "/etc"}) img.add_directory(d);
        img.add_host_file_as("/.ccnuma-vm/busybox", k.busybox, 0755);
        img.add_bytes("/init", init_script(probe), 0755);
        img.write(image);
    }
    const guest_run r = run_qemu(k.qemu, qemu_arguments(probe.shape, k, image, accel::kvm, false), 20, false, true);
    std::filesystem::remove(image);
    const bool ok = r.exited && r.exit_status == 0;
    if (verbose)
        std::fprintf(stderr, "ccnuma-vm: KVM probe %s%s\n", ok ? "succeeded" : "failed, using TCG",
                     ok ? "" : (": " + (r.qemu_error.find("KVM internal error") != std::string::npos
                                                     ? std::string("KVM internal error")
                                                     : last_line(r.qemu_error.empty() ? r.console : r.qemu_error)))
                                      .c_str());
    std::ofstream(record) << key << '\n' << (ok ? "ok" : "failed") << '\n';
    return ok;
}

}  // namespace tools::vm
