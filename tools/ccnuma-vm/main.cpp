// ccnuma-vm: runs a command inside an emulated multi-node machine (QEMU booting Debian's cloud
// kernel with -numa nodes), so first touch, mbind, interleave, move_pages and THP behave as on
// a multi-socket server. Only speed is not emulated.

#include "guest.hpp"
#include "image.hpp"
#include "kit.hpp"
#include "process.hpp"
#include "qemu.hpp"
#include "scratch.hpp"
#include "vm.hpp"

#include <ccnuma/detail/os.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/version.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace tools::vm;

constexpr int max_boot_attempts = 3;

std::uint64_t host_available_memory() {
    return ccnuma::detail::meminfo("MemAvailable").value_or(0);
}

std::string gib(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
    return buf;
}

// Over 80 lines: ccnuma-vm's one sequence: check the request, prepare the kit, check memory,
// boot, and report; each step calls qemu.cpp or guest.cpp, and every check comes before the boot.
int run(int argc, char** argv) {
    options o = parse(argc, argv);
    request& r = o.req;
    if (o.setup) {
        const kit k = prepare_kit(true);
        const std::string boot = k.boot_note.empty() ? k.boot_kernel + " (PVH entry)"
                                                     : k.boot_kernel + " (compressed: " + k.boot_note + ")";
        std::printf("cache   %s\nqemu    %s\nkernel  %s (%s)\nboot    %s\nbusybox %s\nkvm     %s\n", k.cache_dir.c_str(),
                    k.qemu.c_str(), k.kernel.c_str(), k.kernel_package.c_str(), boot.c_str(), k.busybox.c_str(),
                    kvm_usable(k, true) ? "usable" : "not usable, TCG is used");
        return 0;
    }
    // Everything that can be checked without booting is checked before the kit is touched.
    r.shape.validate();
    const std::uint64_t available = host_available_memory();
    if (available != 0 && r.shape.total_memory() > available)
        throw failure(exit_setup, "the machine needs " + gib(r.shape.total_memory()) + " of memory (" +
                                      std::to_string(r.shape.nodes) + " nodes x " +
                                      ccnuma::format_size(r.shape.mem_per_node) +
                                      (r.shape.memory_nodes.empty()
                                           ? std::string()
                                           : " and " + std::to_string(r.shape.memory_nodes.size()) + " memory nodes") +
                                      ") but the host has " + gib(available) + " available (lower --mem-per-node" +
                                      (r.shape.memory_nodes.empty() ? "" : ", the --memory-node sizes") + " or --nodes)");
    r.command[0] = resolve_command(r.command[0]);
    copy_named_files(r);
    add_open_mpi(r);
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) r.cwd = cwd;
    inherit_environment(r);

    const double t0 = now_seconds();
    const kit k = prepare_kit(r.verbose);
    const accel a = o.accel ? *o.accel : kvm_usable(k, r.verbose) ? accel::kvm : accel::tcg;
    const double t_kit = now_seconds();
    scratch_dir scratch;
    const std::string image = scratch.create("image.cpio");
    const std::uint64_t image_bytes = build_image(k, r, image);
    const double t_image = now_seconds();
    const auto args = qemu_arguments(r.shape, k, image, a, r.keep_going);
    if (r.verbose) {
        std::string line = k.qemu;
        for (const auto& x : args)
            line += " " + (x.find_first_of(" '\"$;&|<>*?()\\") == std::string::npos && !x.empty() ? x : sh_quote(x));
        std::fprintf(stderr, "ccnuma-vm: %s\n", line.c_str());
    }
    // A kernel that oopses before the command started is booted again: nothing of the user's ran,
    // and under multi-threaded TCG (--accel tcg-multi) a guest kernel has taken an int3 oops while
    // it patched its own text on several vCPUs (seen once in about 50 boots, and in none of 79
    // more). A panic once the command runs is always reported: the command may have done part of
    // its work, and its output so far has been forwarded.
    guest_run g;
    for (int attempt = 1;; ++attempt) {
        g = run_qemu(k.qemu, args, std::max(0.1, r.timeout_s - (now_seconds() - t0)), true);
        if (g.running || g.timed_out || g.interrupted_by != 0 || (g.panic.empty() && g.oops.empty()) || attempt == max_boot_attempts) break;
        std::fprintf(stderr, "ccnuma-vm: note: the guest kernel failed before the command started (%s); booting again\n",
                     (g.panic.empty() ? g.oops : g.panic).c_str());
    }
    if (r.verbose)
        std::fprintf(stderr,
                     "ccnuma-vm: kit %.2f s, image %.1f MiB in %.2f s, boot %.2f s, command and power-off %.2f s, "
                     "total %.2f s (%s)\n",
                     t_kit - t0, static_cast<double>(image_bytes) / (1 << 20), t_image - t_kit, g.boot_s,
                     g.total_s - g.boot_s, now_seconds() - t0, std::string(to_string(a)).c_str());

    std::string command_line;
    for (const auto& x : r.command) command_line += (command_line.empty() ? "" : " ") + x;
    // The log stays for the user to read; its last lines go to stderr first when asked, since a
    // CI job keeps its output and loses the machine's /tmp (a guest panic in CI was lost so).
    auto console_hint = [&] {
        const std::string text = g.console + (g.qemu_error.empty() ? "" : "\n--- qemu ---\n" + g.qemu_error);
        const std::string log = keep_log(text);
        const auto tail = last_lines(text, o.console_tail);
        if (!tail.empty()) {
            if (tail.size() < o.console_tail)
                std::fprintf(stderr, "ccnuma-vm: the guest's console log, all %zu line%s:\n", tail.size(),
                             tail.size() == 1 ? "" : "s");
            else
                std::fprintf(stderr, "ccnuma-vm: the last %zu line%s of the guest's console log:\n", tail.size(),
                             tail.size() == 1 ? "" : "s");
            for (const auto& line : tail) std::fprintf(stderr, "ccnuma-vm: console: %s\n", line.c_str());
        }
        return log.empty() ? std::string(" (the console log could not be written)") : " (console log: " + log + ")";
    };
    if (g.interrupted_by != 0)
        throw failure(128 + g.interrupted_by, std::string("interrupted by ") + ::strsignal(g.interrupted_by) +
                                                  "; the guest was stopped");
    if (g.exited) {
        if (!g.oops.empty())
            std::fprintf(stderr, "ccnuma-vm: warning: the guest kernel reported \"%s\"\n", g.oops.c_str());
        if (!g.illegal_instruction.empty())
            std::fprintf(stderr,
                         "ccnuma-vm: \"%s\" was killed by SIGILL (%s): the emulated CPU (%s) lacks an instruction "
                         "it uses, typically AVX-512 from -march=native; build with -march=x86-64-v3 (or "
                         "x86-64-v2), or run with --accel kvm where /dev/kvm works; for ccnuma-bench, run "
                         "ccnuma-bench-portable, installed beside it without -march=native\n",
                         command_line.c_str(), g.illegal_instruction.c_str(),
                         a == accel::kvm ? "KVM, -cpu host" : "QEMU TCG, -cpu max");
        if (!g.out_of_memory.empty())
            std::fprintf(stderr,
                         "ccnuma-vm: \"%s\" was killed by the guest's out-of-memory killer (%s): each of the "
                         "guest's %u nodes has %s (--mem-per-node)%s, and a command bound to some nodes gets only "
                         "theirs; raise --mem-per-node, or make the command smaller\n",
                         command_line.c_str(), g.out_of_memory.c_str(), r.shape.nodes,
                         ccnuma::format_size(r.shape.mem_per_node).c_str(),
                         r.shape.memory_nodes.empty() ? "" : ", besides the --memory-node nodes");
        return g.exit_status;
    }
    if (g.timed_out)
        throw failure(exit_timeout, "timeout: \"" + command_line + "\" did not finish within " +
                                        std::to_string(static_cast<long>(r.timeout_s)) + " s" +
                                        (g.booted ? "" : " (the guest had not even booted)") +
                                        "; the guest was stopped");
    if (!g.setup_failed.empty()) throw failure(exit_guest, "guest setup failed: " + g.setup_failed);
    if (!g.panic.empty()) throw failure(exit_guest, "guest kernel panic: " + g.panic + console_hint());
    if (!g.booted) {
        const std::string why = last_line(g.qemu_error.empty() ? g.console : g.qemu_error);
        throw failure(exit_guest, "the guest did not boot: " + (why.empty() ? "no output" : why) + console_hint());
    }
    throw failure(exit_guest, "the guest stopped before \"" + command_line + "\" finished: " +
                                  last_line(g.console) + console_hint());
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const tools::usage_error& e) {
        return tools::fail("ccnuma-vm", e);
    } catch (const failure& f) {
        std::fprintf(stderr, "ccnuma-vm: %s\n", f.what());
        return f.exit_code;
    } catch (const ccnuma::error& e) {
        std::fprintf(stderr, "ccnuma-vm: %s\n", e.reason());
        return exit_setup;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ccnuma-vm: %s\n", e.what());
        return exit_setup;
    }
}
