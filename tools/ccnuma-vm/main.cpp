// ccnuma-vm: runs a command inside an emulated multi-node machine (QEMU booting Debian's cloud
// kernel with -numa nodes), so first touch, mbind, interleave, move_pages and THP behave as on
// a multi-socket server. Only speed is not emulated.

#include "guest.hpp"
#include "image.hpp"
#include "kit.hpp"
#include "process.hpp"
#include "qemu.hpp"
#include "scratch.hpp"

#include <ccnuma/detail/os.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/version.hpp>

#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

using namespace tools::vm;

constexpr int max_boot_attempts = 3;

constexpr const char* usage =
    "usage: ccnuma-vm [--nodes N] [--cores-per-node C] [--threads-per-core T] [--sockets S]\n"
    "                 [--mem-per-node SIZE] [--distances \"10,20;20,10\"] [--thp always|madvise|never]\n"
    "                 [--numa-balancing 0|1] [--copy PATH]... [--env NAME=VALUE]... [--timeout SEC]\n"
    "                 [--keep-going] [--accel auto|tcg|kvm] [--verbose] -- command [args...]\n"
    "       ccnuma-vm --setup | --help | --version\n"
    "  Boots an emulated machine with N NUMA nodes (default 2) of C cores (default 2) and runs the\n"
    "  command in it, with the host's OMP_*, GOMP_*, KMP_*, CCNUMA_* and LD_LIBRARY_PATH variables.\n"
    "  --sockets S       packages (default one per node; a divisor of N for sub-NUMA clusters)\n"
    "  --mem-per-node    memory of each node (default 512M)\n"
    "  --distances       SLIT matrix, rows separated by ';' (default 10 local, 20 remote)\n"
    "  --thp             transparent huge pages in the guest (default madvise)\n"
    "  --numa-balancing  kernel.numa_balancing in the guest (default 0)\n"
    "  --copy PATH       also put PATH (file or directory, with the libraries of ELF files) into\n"
    "                    the guest, at the same path\n"
    "  --env NAME=VALUE  set a variable in the guest\n"
    "  --timeout SEC     stop the guest after SEC seconds, boot included (default 600)\n"
    "  --keep-going      let the guest kernel go on after an oops (default: an oops panics the\n"
    "                    guest); the oops is reported as a warning\n"
    "  --accel           tcg, kvm, or auto: KVM only if a probe boot with it succeeded (default)\n"
    "  --verbose, -v     report installation, the QEMU command line and boot/run times\n"
    "  --setup           install what is needed into the cache, print it, and exit\n"
    "  A command that is Open MPI's mpirun brings Open MPI's components, help and configuration\n"
    "  files along, with the settings a one-node run as root needs (ccnuma-vm -- mpirun -np 2 ...)\n"
    "  Options are parsed by getopt_long: --opt VALUE, --opt=VALUE, unique prefixes (--mem=1G).\n"
    "exit status: the command's own; 1 impossible machine or setup failure, 2 usage error,\n"
    "124 timeout, 125 guest failure (kernel panic, no boot), 126 command not executable,\n"
    "127 command not found, 128+N stopped by signal N (SIGINT, SIGTERM, SIGHUP, SIGPIPE)\n";

struct options {
    request req;
    std::string accel = "auto";
    bool setup = false;
};

unsigned number(std::string_view opt, const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])) || *end != '\0' || errno != 0 ||
        v > 100000)
        throw failure(exit_usage, std::string(opt) + " needs a whole number, not \"" + value + "\"");
    return static_cast<unsigned>(v);
}

bool valid_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

std::string absolute(const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); }

options parse(int argc, char** argv) {
    enum : int {
        opt_nodes = 256, opt_cores, opt_threads, opt_sockets, opt_mem, opt_distances, opt_thp, opt_balancing, opt_copy,
        opt_env, opt_timeout, opt_keep_going, opt_accel, opt_setup
    };
    static const option longs[] = {
        {"nodes", required_argument, nullptr, opt_nodes},
        {"cores-per-node", required_argument, nullptr, opt_cores},
        {"threads-per-core", required_argument, nullptr, opt_threads},
        {"sockets", required_argument, nullptr, opt_sockets},
        {"mem-per-node", required_argument, nullptr, opt_mem},
        {"distances", required_argument, nullptr, opt_distances},
        {"thp", required_argument, nullptr, opt_thp},
        {"numa-balancing", required_argument, nullptr, opt_balancing},
        {"copy", required_argument, nullptr, opt_copy},
        {"env", required_argument, nullptr, opt_env},
        {"timeout", required_argument, nullptr, opt_timeout},
        {"keep-going", no_argument, nullptr, opt_keep_going},
        {"accel", required_argument, nullptr, opt_accel},
        {"verbose", no_argument, nullptr, 'v'},
        {"setup", no_argument, nullptr, opt_setup},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    options o;
    auto& m = o.req.shape;
    bool sockets_given = false;
    opterr = 0;  // our own one-line messages
    optind = 1;
    int c = 0;
    // "+": the command's own options are not ours; ":": a missing value is told apart.
    while ((c = getopt_long(argc, argv, "+:vhV", longs, nullptr)) != -1) {
        // The option by its full name, whatever prefix or spelling was written.
        auto name_of = [&](int val) {
            for (const option* l = longs; l->name != nullptr; ++l)
                if (l->val == val) return "--" + std::string(l->name);
            return std::string("-") + static_cast<char>(val > 0 && val < 128 ? val : '?');
        };
        if (c == ':') throw failure(exit_usage, name_of(optopt) + " needs a value (see ccnuma-vm --help)");
        if (c == '?') {
            const std::string written = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "";
            const std::string w = written.substr(0, written.find('='));
            if (written.rfind("--", 0) == 0) {
                std::string matches;
                for (const option* l = longs; l->name != nullptr; ++l)
                    if (std::string_view(l->name).substr(0, w.size() - 2) == w.substr(2))
                        matches += std::string(matches.empty() ? "" : ", ") + "--" + l->name;
                if (matches.find(',') != std::string::npos)
                    throw failure(exit_usage, "ambiguous option \"" + written + "\" (could be " + matches + ")");
                if (!matches.empty() && written.find('=') != std::string::npos)
                    throw failure(exit_usage, w + " takes no value");
                throw failure(exit_usage, "unknown option \"" + written + "\" (see ccnuma-vm --help)");
            }
            const char letter = optopt > 0 && optopt < 128 ? static_cast<char>(optopt) : '?';
            throw failure(exit_usage, "unknown option \"-" + std::string(1, letter) + "\" (see ccnuma-vm --help)");
        }
        const std::string a = name_of(c);
        const std::string value = optarg != nullptr ? optarg : "";
        if (optarg != nullptr && value.empty())
            throw failure(exit_usage, a + " needs a value, not an empty one (see ccnuma-vm --help)");
        switch (c) {
            case opt_nodes: m.nodes = number(a, value); break;
            case opt_cores: m.cores_per_node = number(a, value); break;
            case opt_threads: m.threads_per_core = number(a, value); break;
            case opt_sockets:
                m.sockets = number(a, value);
                sockets_given = true;
                if (m.sockets == 0) throw failure(exit_usage, "--sockets needs at least 1");
                break;
            case opt_mem: m.mem_per_node = ccnuma::parse_size(value, "--mem-per-node"); break;
            case opt_distances: m.distances = ccnuma::emulated_machine::parse_distances(value); break;
            case opt_thp: m.thp = value; break;
            case opt_balancing: m.numa_balancing = number(a, value); break;
            case opt_copy:
                if (::access(value.c_str(), F_OK) != 0)
                    throw failure(exit_not_found, "--copy " + value + ": " + std::strerror(errno));
                o.req.copies.push_back(absolute(value));
                break;
            case opt_env: {
                const auto eq = value.find('=');
                if (eq == std::string::npos || !valid_name(value.substr(0, eq)))
                    throw failure(exit_usage,
                                  "--env needs NAME=VALUE with NAME a shell variable name, not \"" + value + "\"");
                o.req.env.emplace_back(value.substr(0, eq), value.substr(eq + 1));
                break;
            }
            case opt_timeout: {
                char* end = nullptr;
                const double sec = std::strtod(value.c_str(), &end);
                if (*end != '\0' || !(sec > 0) || sec > 86400)
                    throw failure(exit_usage, "--timeout needs seconds in (0, 86400], not \"" + value + "\"");
                o.req.timeout_s = sec;
                break;
            }
            case opt_keep_going: o.req.keep_going = true; break;
            case opt_accel:
                o.accel = value;
                if (o.accel != "auto" && o.accel != "tcg" && o.accel != "kvm")
                    throw failure(exit_usage, "--accel " + o.accel + " is unknown (expected auto, tcg or kvm)");
                break;
            case 'v': o.req.verbose = true; break;
            case opt_setup: o.setup = true; break;
            case 'h': std::fputs(usage, stdout); std::exit(0);
            case 'V': std::printf("ccnuma-vm (ccnuma) %s\n", ccnuma::library_version()); std::exit(0);
            default: throw failure(exit_usage, "unknown option (see ccnuma-vm --help)");
        }
    }
    if (!sockets_given) m.sockets = 0;
    for (int i = optind; i < argc; ++i) o.req.command.emplace_back(argv[i]);
    if (o.req.command.empty() && !o.setup) throw failure(exit_usage, "no command given (see ccnuma-vm --help)");
    return o;
}

// The command as the guest will run it: an absolute path to a regular, executable host file.
std::string resolve_command(const std::string& name) {
    std::string path = name.find('/') != std::string::npos ? name : find_in_path(name);
    if (path.empty()) throw failure(exit_not_found, "command \"" + name + "\" not found in PATH");
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw failure(exit_not_found, "command " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
        throw failure(exit_not_executable, "command " + path + " is not an executable file");
    return absolute(path);
}

// Arguments of the command that name host files go into the guest too, which holds only what
// is copied: an input file, or the program a wrapper runs (ccnuma-vm -- ccnuma-run -B 2,scatter
// -- ./app). The program after a "--" must exist before the guest boots, so that forgetting it
// costs no boot. Large files are left to --copy, with a note.
void copy_named_files(request& r) {
    constexpr std::uintmax_t max_auto_copy = std::uintmax_t{64} << 20;
    const auto dashes = std::find(r.command.begin() + 1, r.command.end(), std::string("--"));
    if (dashes != r.command.end() && dashes + 1 != r.command.end()) {
        const std::string& program = *(dashes + 1);
        const std::string runner = std::filesystem::path(r.command[0]).filename().string();
        if (program.find('/') != std::string::npos) {
            struct stat st {};
            if (::stat(program.c_str(), &st) != 0)
                throw failure(exit_not_found, "command " + program + " (run by " + runner + " in the guest): " +
                                                  std::strerror(errno) + " on the host, so it cannot be copied");
            if (!S_ISREG(st.st_mode) || ::access(program.c_str(), X_OK) != 0)
                throw failure(exit_not_executable, "command " + program + " (run by " + runner +
                                                       " in the guest) is not an executable file");
        } else if (const std::string host = find_in_path(program); !host.empty()) {
            r.copies.push_back(absolute(host));
        }
    }
    for (std::size_t i = 1; i < r.command.size(); ++i) {
        const std::string& a = r.command[i];
        if (a.empty() || a[0] == '-') continue;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(a, ec)) continue;
        const std::uintmax_t bytes = std::filesystem::file_size(a, ec);
        if (ec) continue;
        if (bytes > max_auto_copy) {
            std::fprintf(stderr, "ccnuma-vm: note: %s (%.0f MiB) is not copied into the guest by itself; --copy it if "
                                 "the command needs it\n",
                         a.c_str(), static_cast<double>(bytes) / (1 << 20));
            continue;
        }
        r.copies.push_back(absolute(a));
    }
}

// Open MPI's launcher starts orted and loads its components, help texts and configuration from
// files that no ldd names. When the command is Open MPI's mpirun (mpiexec, orterun), they go
// into the guest too, with what a single-node run as root without ssh needs; --env still wins.
void add_open_mpi(request& r) {
    std::error_code ec;
    const std::filesystem::path launcher = std::filesystem::canonical(r.command[0], ec);
    if (ec) return;
    const std::string name = launcher.filename().string();
    if (name != "orterun" && name != "mpirun.openmpi" && name != "mpiexec.openmpi") return;
    std::filesystem::path libdir;
    for (const auto& lib : shared_libraries(launcher.string()))
        if (std::filesystem::path(lib).filename().string().rfind("libopen-pal.so", 0) == 0)
            libdir = std::filesystem::path(lib).parent_path();
    if (libdir.empty()) return;  // not Open MPI after all
    for (const std::filesystem::path& p :
         {launcher.parent_path() / "orted", libdir / "openmpi", libdir / "pmix2", libdir / "pmix",
          std::filesystem::path("/usr/share/openmpi"), std::filesystem::path("/usr/share/pmix"),
          std::filesystem::path("/etc/openmpi"), std::filesystem::path("/etc/pmix")})
        if (std::filesystem::exists(p, ec)) r.copies.push_back(p.string());
    const std::vector<std::pair<std::string, std::string>> settings = {
        {"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
        {"OMPI_MCA_plm_rsh_agent", "false"},  // one node: no rsh/ssh to look for
        {"OMPI_MCA_btl", "self,vader"}};     // shared memory only: the guest has no network
    r.env.insert(r.env.begin(), settings.begin(), settings.end());
}

std::uint64_t host_available_memory() {
    return ccnuma::detail::meminfo("MemAvailable").value_or(0);
}

std::string gib(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
    return buf;
}

// Variables the guest inherits from the host: those that steer OpenMP and ccnuma, and the
// library path ldd used when it resolved the command's libraries.
void inherit_environment(request& r) {
    std::vector<std::pair<std::string, std::string>> inherited;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        const auto eq = kv.find('=');
        if (eq == std::string::npos) continue;
        const std::string name = kv.substr(0, eq);
        const bool steer = name.rfind("OMP_", 0) == 0 || name.rfind("GOMP_", 0) == 0 || name.rfind("KMP_", 0) == 0 ||
                           (name.rfind("CCNUMA_", 0) == 0 && name.rfind("CCNUMA_VM", 0) != 0) ||
                           name == "LD_LIBRARY_PATH";
        // An empty value means "unset" to the OpenMP runtimes and to ccnuma alike; libgomp would
        // warn about it, so it is not passed on.
        if (steer && valid_name(name) && eq + 1 < kv.size()) inherited.emplace_back(name, kv.substr(eq + 1));
    }
    r.env.insert(r.env.begin(), inherited.begin(), inherited.end());  // --env comes last and wins
}

int run(int argc, char** argv) {
    options o = parse(argc, argv);
    request& r = o.req;
    if (o.setup) {
        const kit k = prepare_kit(true);
        std::printf("cache   %s\nqemu    %s\nkernel  %s (%s)\nbusybox %s\nkvm     %s\n", k.cache_dir.c_str(),
                    k.qemu.c_str(), k.kernel.c_str(), k.kernel_package.c_str(), k.busybox.c_str(),
                    kvm_usable(k, true) ? "usable" : "not usable, TCG is used");
        return 0;
    }
    // Everything that can be checked without booting is checked before the kit is touched.
    r.shape.validate();
    const std::uint64_t available = host_available_memory();
    if (available != 0 && r.shape.total_memory() > available)
        throw failure(exit_setup, "the machine needs " + gib(r.shape.total_memory()) + " of memory (" +
                                      std::to_string(r.shape.nodes) + " nodes x " +
                                      ccnuma::format_size(r.shape.mem_per_node) + ") but the host has " +
                                      gib(available) + " available (lower --mem-per-node or --nodes)");
    r.command[0] = resolve_command(r.command[0]);
    copy_named_files(r);
    add_open_mpi(r);
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) r.cwd = cwd;
    inherit_environment(r);

    const double t0 = now_seconds();
    const kit k = prepare_kit(r.verbose);
    const accel a = o.accel == "kvm" ? accel::kvm : o.accel == "tcg" ? accel::tcg
                                                   : kvm_usable(k, r.verbose) ? accel::kvm
                                                                               : accel::tcg;
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
    // and under multi-threaded TCG a guest kernel very rarely (about 1 boot in 50 here) takes an
    // int3 oops while it patches its own text on several vCPUs. A panic once the command runs is
    // always reported.
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
                     g.total_s - g.boot_s, now_seconds() - t0, a == accel::kvm ? "kvm" : "tcg");

    std::string command_line;
    for (const auto& x : r.command) command_line += (command_line.empty() ? "" : " ") + x;
    auto console_hint = [&] {
        const std::string log = keep_log(g.console + "\n--- qemu ---\n" + g.qemu_error);
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
                         "x86-64-v2), or run with --accel kvm where /dev/kvm works\n",
                         command_line.c_str(), g.illegal_instruction.c_str(),
                         a == accel::kvm ? "KVM, -cpu host" : "QEMU TCG, -cpu max");
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
    } catch (const failure& f) {
        std::fprintf(stderr, "ccnuma-vm: %s\n", f.what());
        return f.exit_code;
    } catch (const ccnuma::error& e) {
        std::string_view msg = e.what();
        if (msg.rfind("ccnuma: ", 0) == 0) msg.remove_prefix(8);
        std::fprintf(stderr, "ccnuma-vm: %.*s\n", static_cast<int>(msg.size()), msg.data());
        return exit_setup;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ccnuma-vm: %s\n", e.what());
        return exit_setup;
    }
}
