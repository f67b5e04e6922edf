#pragma once
// Booting the guest: the QEMU command line for a machine shape, and the run itself, which
// forwards the command's output while it runs and watches the console for panics.

#include "guest.hpp"
#include "kit.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tools::vm {

/// How the guest's vCPUs run: QEMU's translator on one host thread that takes every vCPU in turn
/// (the default without KVM), the translator with a host thread per vCPU, or the host's KVM.
enum class accel { tcg, tcg_multi, kvm };
inline constexpr accel every_accel[] = {accel::tcg, accel::tcg_multi, accel::kvm};

/// The word --accel takes for each, which --verbose prints too.
std::string_view to_string(accel a);
/// The accelerator --accel names, or nothing for a word that is none.
std::optional<accel> accel_named(std::string_view word);

/// Local DRAM as the guest's HMAT describes it; every other entry is a ratio of these. The
/// values are made up (only placement is emulated), but typical of a DDR5 channel or two.
inline constexpr std::uint64_t dram_latency_ns = 100;
inline constexpr std::uint64_t dram_bandwidth_mib_s = 20480;

/// One `-numa hmat-lb` pair: access latency and access bandwidth from a CPU node to a node.
struct hmat_entry {
    unsigned initiator, target;
    std::uint64_t latency_ns, bandwidth_mib_s;
};

/// Every CPU node x every node (CPU or memory), for a machine with memory nodes.
std::vector<hmat_entry> hmat_entries(const ccnuma::emulated_machine& m);

/// The QEMU arguments (without the program) for shape, kernel and image. The four serial ports
/// are written to the already-open descriptors 3 (console), 4 (stdout), 5 (stderr), 6 (status).
std::vector<std::string> qemu_arguments(const ccnuma::emulated_machine& shape, const kit& k, const std::string& image,
                                        accel a, bool keep_going);

struct guest_run {
    bool booted = false, running = false, exited = false, timed_out = false;
    int exit_status = -1;       ///< the command's, when exited
    std::string illegal_instruction;  ///< the guest kernel's "trap invalid opcode" line when the command died of SIGILL
    std::string out_of_memory;  ///< the guest kernel's "Out of memory: Killed process" line when it died of SIGKILL
    int interrupted_by = 0;     ///< the signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE) that stopped it
    std::string setup_failed;   ///< why /init gave up before the command
    std::string panic;          ///< "Kernel panic - not syncing: ..." line
    std::string oops;           ///< first oops/BUG line
    std::string qemu_error;     ///< QEMU's own stderr
    std::string console;        ///< kernel console (tail)
    double boot_s = 0, total_s = 0;
};

/// Runs QEMU with `args`, forwarding guest stdout/stderr to ours when `forward`. Stops QEMU at
/// the deadline, and at once when `abort_on_kvm_error` and QEMU reports a KVM internal error.
guest_run run_qemu(const std::string& qemu, const std::vector<std::string>& args, double timeout_s, bool forward,
                   bool abort_on_kvm_error = false);

/// Whether KVM boots this kernel here. Probed once with a trivial guest, and remembered in the
/// cache per kernel: on some hosts (nested virtualization) a KVM guest stops at the first
/// instruction KVM cannot emulate, so TCG is the default until a probe succeeds.
bool kvm_usable(const kit& k, bool verbose);

}  // namespace tools::vm
