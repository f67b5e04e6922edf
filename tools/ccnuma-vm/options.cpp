// ccnuma-vm's command line: the machine's shape, what to copy and set, and the run's limits.

#include "vm.hpp"

#include "../common/cli.hpp"
#include "process.hpp"

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>

namespace tools::vm {

namespace {

constexpr const char* usage =
    "usage: ccnuma-vm [--nodes N] [--cores-per-node C] [--threads-per-core T] [--sockets S]\n"
    "                 [--mem-per-node SIZE] [--memory-node SIZE[,near=S][,bandwidth=R][,latency=R]]...\n"
    "                 [--distances \"10,20;20,10\"] [--thp always|madvise|never] [--thp-size SIZE:MODE]...\n"
    "                 [--numa-balancing 0|1]\n"
    "                 [--copy PATH]... [--env NAME=VALUE]... [--timeout SEC]\n"
    "                 [--keep-going] [--accel auto|tcg|tcg-multi|kvm] [--console-tail N] [--verbose]\n"
    "                 -- command [args...]\n"
    "       ccnuma-vm --setup | --help | --version\n"
    "  Boots an emulated machine with N NUMA nodes (default 2) of C cores (default 2) and runs the\n"
    "  command in it, with the host's OMP_*, GOMP_*, KMP_*, CCNUMA_* and LD_LIBRARY_PATH variables.\n"
    "  --sockets S       packages (default one per node; a divisor of N for sub-NUMA clusters)\n"
    "  --mem-per-node    memory of each node (default 512M)\n"
    "  --memory-node     add a CPU-less node of SIZE (a CXL expander, say) near socket S (default\n"
    "                    0), numbered after the CPU nodes; bandwidth and latency are ratios of local\n"
    "                    DRAM's (default bandwidth=0.5, latency=2), given to the guest in the HMAT\n"
    "  --distances       SLIT matrix, rows separated by ';' (default 10 local, 20 remote); with\n"
    "                    --memory-node it covers the memory nodes too, and is passed as given\n"
    "  --thp             transparent huge pages in the guest (default madvise)\n"
    "  --thp-size        one folio size's anonymous THP mode (mTHP, Linux 6.8+), e.g. 64K:always:\n"
    "                    SIZE a power of two from 16K to 1M that the guest kernel lists, MODE\n"
    "                    always, inherit, madvise or never (default: the kernel's, never)\n"
    "  --numa-balancing  kernel.numa_balancing in the guest (default 0)\n"
    "  --copy PATH       also put PATH (file or directory, with the libraries of ELF files) into\n"
    "                    the guest, at the same path\n"
    "  --env NAME=VALUE  set a variable in the guest\n"
    "  --timeout SEC     stop the guest after SEC seconds, boot included (default 600)\n"
    "  --keep-going      let the guest kernel go on after an oops (default: an oops panics the\n"
    "                    guest); the oops is reported as a warning\n"
    "  --accel           auto (default): KVM if a probe boot with it succeeded, else tcg; tcg:\n"
    "                    QEMU's translator, one host thread taking every vCPU in turn; tcg-multi:\n"
    "                    a host thread per vCPU (slower on a 2-core host; untried with more\n"
    "                    cores; a guest kernel has panicked under it); kvm: the host's hypervisor\n"
    "  --console-tail N  when the guest fails (kernel panic, no boot, stopped early), print the\n"
    "                    last N lines of its console log before the message (default\n"
    "                    $CCNUMA_VM_CONSOLE_TAIL, else 0: the message names the kept log only)\n"
    "  --verbose, -v     report installation, the QEMU command line and boot/run times\n"
    "  --setup           install what is needed into the cache, print it, and exit\n"
    "  A command that is Open MPI's mpirun brings Open MPI's components, help and configuration\n"
    "  files along, with the settings a one-node run as root needs (ccnuma-vm -- mpirun -np 2 ...)\n"
    "  Options are parsed by getopt_long: --opt VALUE, --opt=VALUE, unique prefixes (--mem-p=1G).\n"
    "exit status: the command's own; 1 impossible machine or setup failure, 2 usage error,\n"
    "124 timeout, 125 guest failure (kernel panic, no boot), 126 command not executable,\n"
    "127 command not found, 128+N stopped by signal N (SIGINT, SIGTERM, SIGHUP, SIGPIPE)\n";

// A whole number; whether the machine can have it is validate()'s to say, with the valid range
// (--nodes 65 and --nodes 100001 alike: "nodes 100001 is not possible (expected 1..64)").
unsigned number(std::string_view opt, const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])) || *end != '\0')
        throw usage_error{std::string(opt) + " needs a whole number, not \"" + value + "\""};
    if (errno != 0 || v > std::numeric_limits<unsigned>::max())
        throw usage_error{std::string(opt) + " " + value + " is out of range (expected a whole number up to " +
                          std::to_string(std::numeric_limits<unsigned>::max()) +
                          "; the machine's limits are checked next)"};
    return static_cast<unsigned>(v);
}

// Lines of console to print: a whole number up to 100,000 (the sysrq panic of the vm tests fills
// 46, its trace 40 of them; the log itself is cut to its last 512 KiB to 1 MiB).
unsigned console_lines(std::string_view from, const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])) || *end != '\0' || errno != 0 ||
        v > 100000)
        throw usage_error{std::string(from) + " needs a number of lines from 0 to 100000, not \"" + value + "\""};
    return static_cast<unsigned>(v);
}

// A value the library cannot read (a size, a distance matrix) is a usage error, as is one of
// --memory-node; one that reads but cannot be built is an impossible machine, for validate().
template <class Parse>
auto reading(std::string_view prefix, Parse parse) {
    try {
        return parse();
    } catch (const ccnuma::error& e) {
        throw usage_error{std::string(prefix) + e.reason()};
    }
}

}  // namespace

bool valid_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

std::string absolute(const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); }

// Over 80 lines: one getopt switch, one case per option in --help's order, each checking its
// own value; the cases share nothing but the options they fill.
options parse(int argc, char** argv) {
    enum : int {
        opt_nodes = 256, opt_cores, opt_threads, opt_sockets, opt_mem, opt_memory_node, opt_distances, opt_thp, opt_thp_size, opt_balancing, opt_copy,
        opt_env, opt_timeout, opt_keep_going, opt_accel, opt_console_tail, opt_setup
    };
    static const option longs[] = {
        {"nodes", required_argument, nullptr, opt_nodes},
        {"cores-per-node", required_argument, nullptr, opt_cores},
        {"threads-per-core", required_argument, nullptr, opt_threads},
        {"sockets", required_argument, nullptr, opt_sockets},
        {"mem-per-node", required_argument, nullptr, opt_mem},
        {"memory-node", required_argument, nullptr, opt_memory_node},
        {"distances", required_argument, nullptr, opt_distances},
        {"thp", required_argument, nullptr, opt_thp},
        {"thp-size", required_argument, nullptr, opt_thp_size},
        {"numa-balancing", required_argument, nullptr, opt_balancing},
        {"copy", required_argument, nullptr, opt_copy},
        {"env", required_argument, nullptr, opt_env},
        {"timeout", required_argument, nullptr, opt_timeout},
        {"keep-going", no_argument, nullptr, opt_keep_going},
        {"accel", required_argument, nullptr, opt_accel},
        {"console-tail", required_argument, nullptr, opt_console_tail},
        {"verbose", no_argument, nullptr, 'v'},
        {"setup", no_argument, nullptr, opt_setup},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    options o;
    auto& m = o.req.shape;
    bool sockets_given = false, tail_given = false;
    tools::option_parser p("ccnuma-vm", argc, argv, "+:vhV", longs);
    int c = 0;
    while ((c = p.next(usage)) != -1) {
        const std::string a = p.name_of(c);
        const std::string& value = p.value();
        switch (c) {
            case opt_nodes: m.nodes = number(a, value); break;
            case opt_cores: m.cores_per_node = number(a, value); break;
            case opt_threads: m.threads_per_core = number(a, value); break;
            case opt_sockets:
                m.sockets = number(a, value);
                sockets_given = true;
                if (m.sockets == 0) throw usage_error{"--sockets needs at least 1"};
                break;
            // A value that does not read is a usage error; one that reads but cannot be built
            // (a socket that does not exist, a ratio out of range, a row too short) is an
            // impossible machine, refused by validate() as --nodes 0 is.
            case opt_mem:
                m.mem_per_node = reading("", [&] { return ccnuma::parse_size(value, "--mem-per-node"); });
                break;
            case opt_memory_node:
                m.memory_nodes.push_back(
                    reading("--memory-node: ", [&] { return ccnuma::emulated_machine::parse_memory_node(value); }));
                break;
            case opt_distances:
                m.distances = reading("--distances: ", [&] { return ccnuma::emulated_machine::parse_distances(value); });
                break;
            case opt_thp: m.thp = value; break;
            case opt_thp_size:
                m.thp_sizes.push_back(reading("--thp-size: ", [&] { return ccnuma::emulated_machine::parse_thp_size(value); }));
                break;
            case opt_balancing: m.numa_balancing = number(a, value); break;
            case opt_copy:
                if (::access(value.c_str(), F_OK) != 0)
                    throw failure(exit_not_found, "--copy " + value + ": " + std::strerror(errno));
                o.req.copies.push_back(absolute(value));
                break;
            case opt_env: {
                const auto eq = value.find('=');
                if (eq == std::string::npos || !valid_name(value.substr(0, eq)))
                    throw usage_error{"--env needs NAME=VALUE with NAME a shell variable name, not \"" + value + "\""};
                o.req.env.emplace_back(value.substr(0, eq), value.substr(eq + 1));
                break;
            }
            case opt_timeout: {
                char* end = nullptr;
                const double sec = std::strtod(value.c_str(), &end);
                if (*end != '\0' || !(sec > 0) || sec > 86400)
                    throw usage_error{"--timeout needs seconds in (0, 86400], not \"" + value + "\""};
                o.req.timeout_s = sec;
                break;
            }
            case opt_keep_going: o.req.keep_going = true; break;
            case opt_accel:
                o.accel = accel_named(value);
                if (!o.accel && value != "auto") {
                    std::string words = "auto";
                    for (std::size_t i = 0; i < std::size(every_accel); ++i)
                        words += (i + 1 == std::size(every_accel) ? " or " : ", ") + std::string(to_string(every_accel[i]));
                    throw usage_error{"--accel " + value + " is unknown (expected " + words + ")"};
                }
                break;
            case opt_console_tail:
                o.console_tail = console_lines(a, value);
                tail_given = true;
                break;
            case 'v': o.req.verbose = true; break;
            case opt_setup: o.setup = true; break;
            default: throw usage_error{"unknown option (" + p.see_help() + ")"};
        }
    }
    if (!sockets_given) m.sockets = 0;
    // After the options: --help works whatever the variable holds, and the option wins over it.
    if (const char* t = std::getenv("CCNUMA_VM_CONSOLE_TAIL"); t && *t && !tail_given)
        o.console_tail = console_lines("CCNUMA_VM_CONSOLE_TAIL", t);
    for (int i = p.index(); i < argc; ++i) o.req.command.emplace_back(argv[i]);
    if (o.req.command.empty() && !o.setup) throw usage_error{"no command given (see ccnuma-vm --help)"};
    return o;
}

}  // namespace tools::vm
