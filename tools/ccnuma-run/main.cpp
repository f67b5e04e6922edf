// ccnuma-run: computes a nested binding plan and runs a command under it, by exporting the
// OpenMP variables that realize the plan, and sets the memory policy the command inherits, as
// numactl does. A thin layer over ccnuma/binding.hpp and ccnuma/memory_policy.hpp.

#include "../common/cli.hpp"
#include "../common/elf.hpp"
#include "../common/slurm.hpp"

#include <ccnuma/ccnuma.hpp>
#include <ccnuma/cpu_expression.hpp>
#include <ccnuma/cpu_location.hpp>
#include <ccnuma/detail/parallel.hpp>

#include <getopt.h>
#if __has_include(<omp-tools.h>)
#include <omp-tools.h>
#define CCNUMA_RUN_HAS_OMPT 1
#endif
#include <nlohmann/json.hpp>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

// %s: the strategies, from the library's one list.
constexpr const char* usage =
    "usage: ccnuma-run [--bind SPEC | --cpus EXPR] [--oversubscribe] [--physcpubind CPUS | --cpunodebind NODES]\n"
    "                  [--interleave NODES | --weighted-interleave NODES | --membind NODES [--balancing] |\n"
    "                   --preferred NODE | --preferred-many NODES | --localalloc] [--all]\n"
    "                  [--print-plan [--json]] [--verify] [--quiet] [--] [command [args...]]\n"
    "       ccnuma-run --show [--json] | --hardware | --help | --version\n"
    "  SPEC is N,strategy[,N,strategy]... with strategies %s\n"
    "  (default: $CCNUMA_BIND, else $OMP_NESTING_TEAM_SIZE).\n"
    "  NODES is a node set as numactl takes it: all, 0-2,4, +0-1 (relative to the allowed\n"
    "  nodes), !3 (every allowed node but 3), or an hwloc location (numa:1, package:0).\n"
    "  CPUS is a CPU list in the same syntax, or an hwloc location as hwloc-calc takes it\n"
    "  (core:0-3, pu:3, package:0.core:1, core:all, 0x3; logical indexes as lstopo shows them).\n"
    "  EXPR is a likwid-pin expression: 0,2-3, N:0-3, S0:0-1@S1:0-1, M1:0, E:N:4:1:2, S:scatter.\n"
    "  -B, --bind SPEC            the binding spec (once)\n"
    "  -c, --cpus EXPR            pin thread i to the i-th CPU of EXPR, as likwid-pin -c does\n"
    "  -n, --print-plan           print the plan (and the OpenMP variables, the memory policy) and run nothing\n"
    "  -j, --json                 with --print-plan or --show: one JSON object\n"
    "  -y, --verify               check inside every thread that it runs on its planned PU, then run the command\n"
    "  -O, --oversubscribe        allow more threads than allowed PUs\n"
    "  -q, --quiet                no notes on stderr\n"
    "  -s, --show                 show this process's policy and CPUs as numactl --show does, then ccnuma's own\n"
    "  -H, --hardware             show the nodes, their CPUs, memory and distances as numactl -H does\n"
    "  -a, --all                  CPU lists and the plan ignore the affinity mask (taskset): every CPU the\n"
    "                             cgroup allows, as numactl -a\n"
    "  -x, --input FILE|SYNTHETIC plan for another machine, as lstopo -i (an hwloc XML export or a\n"
    "                             synthetic description; as CCNUMA_TOPOLOGY; -i is --interleave)\n"
    "CPUs of the command (at most one; the plan is made on them):\n"
    "  -C, --physcpubind CPUS     only these CPUs\n"
    "  -N, --cpunodebind NODES    only the CPUs of these nodes (--cpubind, numactl's old name)\n"
    "memory policy of the command (at most one; with one, the binding spec is optional):\n"
    "  -i, --interleave NODES           pages round-robin over NODES\n"
    "  -w, --weighted-interleave NODES  pages over NODES by the kernel's node weights (Linux 6.9)\n"
    "  -m, --membind NODES              pages only on NODES\n"
    "  -p, --preferred NODE             pages on NODE while it has free memory, then elsewhere\n"
    "  -P, --preferred-many NODES       pages on the nearest of NODES with free memory (Linux 5.15)\n"
    "  -l, --localalloc                 pages on the node of the CPU that first writes them\n"
    "  -b, --balancing                  with --membind (or --preferred-many): the kernel's NUMA balancing\n"
    "                                   may move pages among NODES (MPOL_F_NUMA_BALANCING, Linux 5.12)\n"
    "Options take their value as --opt VALUE, --opt=VALUE, -o VALUE or -oVALUE; unique prefixes\n"
    "of long options work (--inter).\n"
    "exit status: the command's own; 2 usage error, 1 bad spec, node set or topology, 3 binding\n"
    "check failed, 126 command found but not executable, 127 command not found\n";

// Hidden mode: the binding check must run in a fresh process, because the OpenMP runtime reads
// the variables this tool exports only at start-up.
constexpr std::string_view self_check_flag = "--internal-self-check";

// The version of the JSON documents this tool writes; raised when a key changes meaning or goes.
constexpr int json_schema_version = 1;

struct usage_error {
    std::string message;
};

struct memory_option {
    std::string name;  // the long option, for messages
    ccnuma::memory_policy::mode kind;
    std::string nodes;
};

struct cpu_option {
    std::string name;  // --physcpubind or --cpunodebind
    std::string list;
};

struct options {
    std::optional<std::string> spec;
    std::optional<std::string> expression;  // --cpus: a likwid-pin expression
    std::string input;  // --input: another machine's topology, as lstopo -i (no -i: numactl's --interleave)
    std::optional<memory_option> memory;
    std::optional<cpu_option> cpus;
    bool oversubscribe = false, print_plan = false, json = false, verify = false, quiet = false, show = false;
    bool balancing = false, hardware = false, all = false;
    std::vector<char*> command;
};

// What an option with a value is called in messages, what it takes, and an example value.
struct value_option {
    int val;
    const char* name;
    const char* needs;
    const char* example;
};

constexpr value_option value_options[] = {
    {'B', "--bind", "a spec", "4,scatter"},
    {'c', "--cpus", "a likwid-pin expression", "S0:0-3"},
    {'i', "--interleave", "a node set", "all"},
    {'w', "--weighted-interleave", "a node set", "all"},
    {'m', "--membind", "a node set", "0-1"},
    {'p', "--preferred", "a node", "1"},
    {'P', "--preferred-many", "a node set", "0-1"},
    {'C', "--physcpubind", "a CPU list", "0-3"},
    {'N', "--cpunodebind", "a node set", "0"},
    {'x', "--input", "an hwloc XML file or a synthetic description", "machine.xml"},
};

const value_option& describe(int val) {
    for (const auto& v : value_options)
        if (v.val == val) return v;
    return value_options[0];
}

// numactl rejects two memory policies on one command line, and so do we: the one applied
// would depend on the order of the options.
void set_memory(options& o, const char* name, ccnuma::memory_policy::mode kind, std::string nodes) {
    if (o.memory)
        throw usage_error{"give at most one memory policy option, not " + o.memory->name + " and " + std::string(name)};
    o.memory = memory_option{std::string(name), kind, std::move(nodes)};
}

// For a '?' from getopt_long: the option as the user wrote it, and whether it was ambiguous.
std::string unknown_option(int argc, char** argv, const option* longs) {
    const char* arg = optind - 1 < argc && optind >= 1 ? argv[optind - 1] : "";
    const std::string_view a = arg;
    if (a.substr(0, 2) != "--" && optopt > 0 && optopt < 128)
        return "unknown option \"-" + std::string(1, static_cast<char>(optopt)) + "\" (see ccnuma-run --help)";
    if (a.substr(0, 2) == "--") {
        const std::string_view name = a.substr(2, a.find('=') == std::string_view::npos ? std::string_view::npos
                                                                                         : a.find('=') - 2);
        std::string matches;
        for (const option* l = longs; l->name != nullptr; ++l)
            if (std::string_view(l->name).substr(0, name.size()) == name)
                matches += std::string(matches.empty() ? "" : ", ") + "--" + l->name;
        if (matches.find(',') != std::string::npos)
            return "ambiguous option \"" + std::string(a) + "\" (could be " + matches + ")";
        if (!matches.empty() && a.find('=') != std::string_view::npos)
            return "option \"" + std::string(a) + "\" takes no value";
    }
    return "unknown option \"" + std::string(a) + "\" (see ccnuma-run --help)";
}

options parse(int argc, char** argv) {
    using mode = ccnuma::memory_policy::mode;
    static const option longs[] = {
        {"bind", required_argument, nullptr, 'B'},
        {"cpus", required_argument, nullptr, 'c'},
        {"balancing", no_argument, nullptr, 'b'},
        {"hardware", no_argument, nullptr, 'H'},
        {"all", no_argument, nullptr, 'a'},
        {"cpubind", required_argument, nullptr, 'N'},
        {"interleave", required_argument, nullptr, 'i'},
        {"weighted-interleave", required_argument, nullptr, 'w'},
        {"membind", required_argument, nullptr, 'm'},
        {"preferred", required_argument, nullptr, 'p'},
        {"preferred-many", required_argument, nullptr, 'P'},
        {"localalloc", no_argument, nullptr, 'l'},
        {"physcpubind", required_argument, nullptr, 'C'},
        {"cpunodebind", required_argument, nullptr, 'N'},
        {"show", no_argument, nullptr, 's'},
        {"oversubscribe", no_argument, nullptr, 'O'},
        {"print-plan", no_argument, nullptr, 'n'},
        {"json", no_argument, nullptr, 'j'},
        {"verify", no_argument, nullptr, 'y'},
        {"input", required_argument, nullptr, 'x'},
        {"quiet", no_argument, nullptr, 'q'},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    options o;
    opterr = 0;  // our own one-line messages
    optind = 1;
    int c = 0;
    // "+": stop at the command, whose own options are not ours; ":": tell a missing value apart.
    while ((c = getopt_long(argc, argv, "+:B:c:bHai:w:m:p:P:lC:N:snjyOx:qhV", longs, nullptr)) != -1) {
        if (c == '?') throw usage_error{unknown_option(argc, argv, longs)};
        if (c == ':') {
            const auto& v = describe(optopt);
            throw usage_error{std::string(v.name) + " needs " + v.needs + ", e.g. " + v.name + " " + v.example};
        }
        std::string value = optarg != nullptr ? optarg : "";
        if (optarg != nullptr && value.empty()) {
            // "--membind=" and "--membind ''" alike: an empty value given explicitly is a mistake,
            // never "no option" (which would fall back to the environment silently).
            const auto& v = describe(c);
            const bool glued = std::string_view(argv[optind - 1]).find('=') != std::string_view::npos;
            throw usage_error{std::string(v.name) + (glued ? "= needs " : " needs ") + v.needs + ", e.g. " + v.name +
                              (glued ? "=" : " ") + v.example + " (the value given is empty)"};
        }
        switch (c) {
            case 'B':
                if (o.spec)
                    throw usage_error{"--bind given twice (\"" + *o.spec + "\" and \"" + value + "\"); give one spec"};
                o.spec = value;
                break;
            case 'c':
                if (o.expression)
                    throw usage_error{"--cpus given twice (\"" + *o.expression + "\" and \"" + value +
                                      "\"); give one expression"};
                o.expression = value;
                break;
            case 'b': o.balancing = true; break;
            case 'H': o.hardware = true; break;
            case 'a': o.all = true; break;
            case 'i': set_memory(o, "--interleave", mode::interleave, value); break;
            case 'w': set_memory(o, "--weighted-interleave", mode::weighted_interleave, value); break;
            case 'm': set_memory(o, "--membind", mode::bind, value); break;
            case 'p': set_memory(o, "--preferred", mode::preferred, value); break;
            case 'P': set_memory(o, "--preferred-many", mode::preferred_many, value); break;
            case 'l': set_memory(o, "--localalloc", mode::local, ""); break;
            case 'C':
            case 'N': {
                const char* name = c == 'C' ? "--physcpubind" : "--cpunodebind";
                if (o.cpus)
                    throw usage_error{"give at most one CPU option, not " + o.cpus->name + " and " + name};
                o.cpus = cpu_option{name, value};
                break;
            }
            case 's': o.show = true; break;
            case 'O': o.oversubscribe = true; break;
            case 'n': o.print_plan = true; break;
            case 'j': o.json = true; break;
            case 'y': o.verify = true; break;
            case 'x': o.input = value; break;
            case 'q': o.quiet = true; break;
            case 'h': std::printf(usage, ccnuma::strategy_names().c_str()); std::exit(0);
            case 'V': std::printf("ccnuma-run (ccnuma) %s\n", ccnuma::library_version()); std::exit(0);
            default: throw usage_error{"unknown option (see ccnuma-run --help)"};
        }
    }
    for (int i = optind; i < argc; ++i) o.command.push_back(argv[i]);
    if (o.hardware) {
        if (o.show || o.print_plan || o.verify || o.memory || o.cpus || o.spec || o.expression || !o.command.empty())
            throw usage_error{"--hardware shows the machine and runs nothing; give it alone"};
        return o;
    }
    if (o.spec && o.expression)
        throw usage_error{"give --bind or --cpus, not both: --bind \"" + *o.spec + "\" plans the threads, --cpus \"" +
                          *o.expression + "\" lists their CPUs"};
    if (o.balancing && (!o.memory || (o.memory->kind != ccnuma::memory_policy::mode::bind &&
                                      o.memory->kind != ccnuma::memory_policy::mode::preferred_many)))
        throw usage_error{"--balancing goes with --membind (or --preferred-many): MPOL_F_NUMA_BALANCING applies to "
                          "those policies only" +
                          std::string(o.memory ? " (numactl ignores it with " + o.memory->name + ")" : "")};
    if (o.show) {
        if (o.print_plan || o.verify || o.memory || o.cpus || o.spec || o.expression || !o.command.empty())
            throw usage_error{"--show shows this process and runs nothing; give it alone (or with --json)"};
        return o;
    }
    if (o.json && !o.print_plan) throw usage_error{"--json goes with --print-plan or --show"};
    if (o.print_plan && o.verify) throw usage_error{"--print-plan runs nothing, so there is nothing to --verify"};
    if (!o.print_plan && !o.verify && o.command.empty())
        throw usage_error{"nothing to do: give a command, --print-plan or --verify (see ccnuma-run --help)"};
    return o;
}

// Empty when there is none and a memory policy is all that was asked for.
ccnuma::binding_spec spec_of(const options& o) {
    if (o.spec) return ccnuma::binding_spec::parse(*o.spec);
    auto spec = ccnuma::binding_spec::from_environment();
    // Under srun -c T, T threads are what the user expects: T,compact inside the task's mask.
    if (spec.empty() && !o.memory && !o.cpus && !o.expression)
        if (const auto t = tools::slurm::variable("SLURM_CPUS_PER_TASK"); t && !t->empty()) {
            if (t->find_first_not_of("0123456789") != std::string::npos)
                throw usage_error{"SLURM_CPUS_PER_TASK \"" + *t + "\" is not a number of CPUs"};
            spec = ccnuma::binding_spec::parse(*t + ",compact");
            if (!o.quiet && !o.json)
                std::fprintf(stderr, "ccnuma-run: note: no binding spec; SLURM_CPUS_PER_TASK=%s gives --bind %s\n",
                             t->c_str(), spec.to_string().c_str());
        }
    if (spec.empty() && o.verify)
        throw usage_error{"no binding spec for --verify to check: pass --bind SPEC (e.g. --bind 4,scatter) or set "
                          "CCNUMA_BIND"};
    if (spec.empty() && !o.memory && !o.cpus && !o.expression)
        throw usage_error{"no binding spec: pass --bind SPEC (e.g. --bind 4,scatter) or set CCNUMA_BIND, or give a "
                          "memory policy (--interleave, --membind, --preferred, --localalloc) or CPUs (--physcpubind, "
                          "--cpunodebind)"};
    return spec;
}

// The plan's JSON object with the schema version first and a "memory_policy" key last, so that
// the plan's own keys keep their order.
std::string plan_json(const std::optional<ccnuma::binding_plan>& plan, const std::optional<ccnuma::memory_policy>& memory) {
    nlohmann::ordered_json doc;
    doc["schema_version"] = json_schema_version;
    if (plan) {
        const auto plan_doc = nlohmann::ordered_json::parse(plan->to_json());
        for (const auto& [key, value] : plan_doc.items()) doc[key] = value;
    }
    if (memory) doc["memory_policy"] = nlohmann::ordered_json::parse(memory->to_json());
    return doc.dump();
}

// Another tool's syntax where this option takes the other: one line naming the ccnuma form.
[[noreturn]] void hint_likwid(const std::string& option, const std::string& text, const ccnuma::topology& topo) {
    std::string cpus;
    try {
        cpus = ccnuma::format_list(ccnuma::cpu_expression_pus(text, topo));
    } catch (const std::exception&) {
    }
    throw usage_error{option + " \"" + text + "\" is likwid-pin syntax: give it as --cpus " + text +
                      " (-c; threads pinned in its order)" + (cpus.empty() ? "" : ", or here as " + option + " " + cpus)};
}

[[noreturn]] void hint_hwloc(const std::string& text, const ccnuma::topology& topo) {
    std::string cpus;
    try {
        cpus = ccnuma::format_list(ccnuma::cpu_location_pus(text, topo));
    } catch (const std::exception&) {
    }
    throw usage_error{"--cpus \"" + text + "\" is an hwloc location, and --cpus takes likwid-pin expressions: give it as "
                      "--physcpubind " + text + " (-C)" + (cpus.empty() ? "" : ", or as --cpus " + cpus)};
}

// A node set option's value in numactl's syntax: hwloc locations become their nodes.
std::string node_set_text(const std::string& option, const std::string& text, const ccnuma::topology& topo) {
    if (ccnuma::is_cpu_location(text)) return ccnuma::format_list(ccnuma::cpu_location_nodes(text, topo));
    if (ccnuma::is_cpu_expression(text)) hint_likwid(option, text, topo);
    return text;
}

// The CPUs of --physcpubind or --cpunodebind, checked against what `topo` allows.
std::vector<unsigned> selected_cpus(const cpu_option& c, const ccnuma::topology& topo) {
    const std::vector<unsigned> allowed = topo.allowed_cpus();
    std::vector<unsigned> cpus;
    if (c.name == "--cpunodebind") {
        const auto nodes = ccnuma::parse_node_set(node_set_text(c.name, c.list, topo), topo.allowed_nodes());
        for (const auto& n : topo.numa_nodes())
            if (std::find(nodes.begin(), nodes.end(), n.os_index) != nodes.end())
                for (unsigned cpu : n.cpus)
                    if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) cpus.push_back(cpu);
        std::sort(cpus.begin(), cpus.end());
        cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
        if (cpus.empty())
            throw std::runtime_error("--cpunodebind \"" + c.list + "\": nodes {" + ccnuma::format_list(nodes) +
                                     "} have no allowed CPU (allowed: " + ccnuma::format_list(allowed) + ")");
        return cpus;
    }
    if (ccnuma::is_cpu_location(c.list)) return ccnuma::cpu_location_pus(c.list, topo);
    if (ccnuma::is_cpu_expression(c.list)) hint_likwid(c.name, c.list, topo);
    // numactl's CPU list: all, a list, + for relative to the allowed CPUs, ! for all others.
    std::string_view text = c.list;
    if (text == "all") return allowed;
    const bool invert = !text.empty() && text[0] == '!';
    if (invert) text.remove_prefix(1);
    const bool relative = !text.empty() && text[0] == '+';
    if (relative) text.remove_prefix(1);
    for (unsigned cpu : ccnuma::parse_list(text, "--physcpubind CPU list")) {
        if (relative) {
            if (cpu >= allowed.size())
                throw std::runtime_error("--physcpubind \"" + c.list + "\": relative CPU +" + std::to_string(cpu) +
                                         " does not exist (" + std::to_string(allowed.size()) + " allowed CPUs: " +
                                         ccnuma::format_list(allowed) + ")");
            cpu = allowed[cpu];
        } else if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
            throw std::runtime_error("--physcpubind \"" + c.list + "\": CPU " + std::to_string(cpu) +
                                     " is not in the allowed set {" + ccnuma::format_list(allowed) + "}");
        }
        cpus.push_back(cpu);
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    if (invert) {
        std::vector<unsigned> rest;
        std::set_difference(allowed.begin(), allowed.end(), cpus.begin(), cpus.end(), std::back_inserter(rest));
        cpus = std::move(rest);
    }
    if (cpus.empty())
        throw std::runtime_error("--physcpubind \"" + c.list + "\": no CPU is left (allowed: " +
                                 ccnuma::format_list(allowed) + ")");
    return cpus;
}

void set_affinity(const std::vector<unsigned>& cpus) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (unsigned cpu : cpus)
        if (cpu < CPU_SETSIZE) CPU_SET(cpu, &mask);
    if (sched_setaffinity(0, sizeof mask, &mask) != 0)
        throw std::runtime_error(std::string("cannot set the affinity mask to ") + ccnuma::format_list(cpus) + ": " +
                                 std::strerror(errno));
}

// numactl's name of a policy (policy_name() in numactl.c).
std::string numactl_name(ccnuma::memory_policy::mode m) {
    using mode = ccnuma::memory_policy::mode;
    switch (m) {
        case mode::local: return "default";
        case mode::bind: return "bind";
        case mode::interleave: return "interleave";
        case mode::preferred: return "preferred";
        case mode::preferred_many: return "preferred-many";
        case mode::weighted_interleave: return "weighted-interleave";
    }
    return "unknown";
}

// numactl's printmask(): "label: 0 1 2 \n".
void print_mask(const char* label, const std::vector<unsigned>& v) {
    std::string s;
    for (unsigned x : v) s += std::to_string(x) + " ";
    std::printf("%s: %s\n", label, s.c_str());
}

// libgomp has no OMPT: libccnuma-ompt.so named in OMP_TOOL_LIBRARIES is never loaded into a
// program that links GCC's runtime, and its threads would stay where libgomp put them. Said
// when the command itself names libgomp (not a library it loads); --bind, which goes through
// OMP_PLACES, works with both runtimes.
void note_tool_without_ompt(const char* command) {
    const char* tools_env = std::getenv("OMP_TOOL_LIBRARIES");
    if (!tools_env || std::strstr(tools_env, "ccnuma-ompt") == nullptr) return;
    std::string path = command;
    if (path.find('/') == std::string::npos) {
        const char* env_path = std::getenv("PATH");
        std::string dirs = env_path ? env_path : "/usr/bin:/bin";
        path.clear();
        for (std::size_t b = 0; b <= dirs.size();) {
            const std::size_t e = std::min(dirs.find(':', b), dirs.size());
            const std::string candidate = (e > b ? dirs.substr(b, e - b) : std::string(".")) + "/" + command;
            if (::access(candidate.c_str(), X_OK) == 0) {
                path = candidate;
                break;
            }
            b = e + 1;
        }
    }
    if (path.empty()) return;
    bool gomp = false, omp = false;
    for (const auto& lib : tools::elf_needed(path)) {
        gomp = gomp || lib.rfind("libgomp.so", 0) == 0;
        omp = omp || lib.rfind("libomp.so", 0) == 0 || lib.rfind("libiomp5.so", 0) == 0;
    }
    if (gomp && !omp)
        std::fprintf(stderr,
                     "ccnuma-run: note: %s links libgomp (GCC's OpenMP runtime), which has no OMPT: "
                     "OMP_TOOL_LIBRARIES=%s is ignored there and binds nothing; use --bind SPEC, which binds "
                     "through OMP_PLACES with either runtime\n",
                     command, tools_env);
}

// numactl --show: what this process runs on and allocates from, with numactl's labels and
// meanings (libnuma's numa_get_membind: the policy's nodes under bind, else every allowed
// node; "preferred": the policy's nodes), then ccnuma's own lines.
int show(bool json) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    std::vector<unsigned> cpus;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
    ccnuma::topology_options to;
    to.use_environment = false;
    const auto topo = ccnuma::topology::load(to);
    std::vector<unsigned> nodes;
    for (const auto& n : topo.numa_nodes())
        for (unsigned cpu : n.cpus)
            if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) {
                nodes.push_back(n.os_index);
                break;
            }
    std::sort(nodes.begin(), nodes.end());
    const auto policy = ccnuma::current_memory_policy();
    using mode = ccnuma::memory_policy::mode;
    const auto mems = policy.kind == mode::bind ? policy.nodes : ccnuma::parse_node_set("all");
    const auto spec = ccnuma::binding_spec::from_environment();
    if (json) {
        nlohmann::ordered_json doc;
        doc["schema_version"] = json_schema_version;
        doc["policy"] = numactl_name(policy.kind);
        doc["memory_policy"] = nlohmann::ordered_json::parse(policy.to_json());
        doc["physcpubind"] = cpus;
        doc["nodebind"] = nodes;
        doc["membind"] = mems;
        doc["preferred"] = policy.nodes;
        doc["binding_spec"] = spec.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(spec.to_string());
        for (const char* name : tools::slurm::binding_variables)
            if (const auto v = tools::slurm::variable(name)) doc["slurm"][name] = *v;
        std::puts(doc.dump().c_str());
        return 0;
    }
    std::printf("policy: %s\n", numactl_name(policy.kind).c_str());
    const std::string first = policy.nodes.empty() ? "" : std::to_string(policy.nodes.front());
    switch (policy.kind) {
        case mode::local: std::printf("preferred node: current\n"); break;
        case mode::interleave:
        case mode::weighted_interleave: std::printf("preferred node: %s (interleave next)\n", first.c_str()); break;
        case mode::preferred_many: std::printf("preferred node: %s (preferred-many)\n", first.c_str()); break;
        default: std::printf("preferred node: %s\n", first.c_str()); break;
    }
    if (policy.kind == mode::interleave || policy.kind == mode::weighted_interleave) {
        print_mask("interleavemask", policy.nodes);
        std::printf("interleavenode: %s\n", first.c_str());
    }
    print_mask("physcpubind", cpus);
    print_mask("cpubind", nodes);
    print_mask("nodebind", nodes);
    print_mask("membind", mems);
    print_mask("preferred", policy.nodes);
    // ccnuma's additions, after numactl's lines.
    std::printf("ccnuma policy: %s\n", policy.to_string().c_str());
    std::printf("numa balancing: %s\n", policy.numa_balancing ? "on (MPOL_F_NUMA_BALANCING)" : "off");
    std::printf("binding spec: %s\n", spec.empty() ? "none" : spec.to_string().c_str());
    for (const auto& line : tools::slurm::binding_lines()) std::printf("slurm: %s\n", line.c_str());
    return 0;
}

// numactl -H: nodes, their CPUs, size and free memory, and the distance table, in numactl's format.
int hardware() {
    ccnuma::topology_options to;
    to.use_environment = false;
    to.use_affinity_mask = false;  // numactl -H lists each node's CPUs, whatever this process's mask
    const auto topo = ccnuma::topology::load(to);
    std::vector<unsigned> ids;
    for (const auto& n : topo.numa_nodes()) ids.push_back(n.os_index);
    std::printf("available: %zu nodes (%s)\n", ids.size(), ccnuma::format_list(ids).c_str());
    for (const auto& n : topo.numa_nodes()) {
        std::string cpus;
        for (unsigned c : n.cpus) cpus += " " + std::to_string(c);
        std::printf("node %u cpus:%s\n", n.os_index, cpus.c_str());
        std::printf("node %u size: %llu MB\n", n.os_index, static_cast<unsigned long long>(n.memory_bytes >> 20));
        const auto free = ccnuma::node_free_bytes(n.os_index);
        if (free) std::printf("node %u free: %llu MB\n", n.os_index, static_cast<unsigned long long>(*free >> 20));
        else std::printf("node %u free: <not available>\n", n.os_index);
    }
    auto d = topo.distances();
    // hwloc keeps no matrix for one node; its distance to itself is the local 10 (ACPI SLIT),
    // which numactl reads from sysfs.
    if (d.empty() && ids.size() == 1) d = {{10}};
    if (d.size() != ids.size() || d.empty()) {
        std::printf("No distance information available.\n");
        return 0;
    }
    std::printf("node distances:\nnode ");
    for (unsigned i : ids) std::printf("%3u ", i);
    std::printf("\n");
    for (std::size_t i = 0; i < ids.size(); ++i) {
        std::printf("%3u: ", ids[i]);
        for (std::size_t k = 0; k < ids.size(); ++k) std::printf("%3u ", d[i][k]);
        std::printf("\n");
    }
    return 0;
}

int self_check() {
    const auto check = ccnuma::binding_report();
    std::fputs(check.to_text().c_str(), stdout);
    std::fflush(stdout);
    return check.ok() ? 0 : 3;
}

// The OpenMP variables of the plan, the variables that hand the plan to a ccnuma command, and
// the affinity mask the plan was made for.
void export_binding(const options& o, const ccnuma::binding_spec& spec, const ccnuma::topology& topo,
                    const ccnuma::omp_realization& omp) {
    for (const auto& v : omp.variables) setenv(v.name.c_str(), v.value.c_str(), 1);
    if (!omp.uses_places) {  // oversubscribed: the runtime's places would bind wrongly
        unsetenv("OMP_PLACES");
        unsetenv("OMP_PROC_BIND");
    }
    // The child plans on the same mask: its OpenMP runtime may bind the initial thread to the
    // first place before anything else runs, which would hide the mask we saw.
    setenv("CCNUMA_BIND", spec.to_string().c_str(), 1);
    setenv("CCNUMA_CPUSET", ccnuma::format_list(topo.allowed_cpus()).c_str(), 1);
    if (o.oversubscribe) setenv("CCNUMA_OVERSUBSCRIBE", "1", 1);
    // The runtime of the child drops places outside its inherited mask, so hand it the mask
    // the plan was made for (wider than ours if our own runtime narrowed it).
    set_affinity(topo.allowed_cpus());
    if (!o.quiet)
        for (const auto& n : omp.notes) std::fprintf(stderr, "ccnuma-run: note: %s\n", n.c_str());
}

int run(int argc, char** argv) {
    const options o = parse(argc, argv);
    if (o.show) return show(o.json);
    if (o.hardware) return hardware();
    if (o.expression && o.verify)
        throw usage_error{"--verify checks a --bind plan; --cpus pins through OMP_PLACES, which --print-plan shows"};
    const auto spec = o.expression ? ccnuma::binding_spec{} : spec_of(o);
    const bool binds = !spec.empty();
    // libgomp binds the initial thread to its first place while loading when OMP_PROC_BIND or
    // OMP_PLACES is inherited, so our own affinity mask no longer tells what the user allowed.
    // Plan on the cgroup's CPUs then, and say so.
    const char* inherited = nullptr;
    for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"})
        if (!inherited && std::getenv(v) != nullptr && std::getenv("CCNUMA_CPUSET") == nullptr) inherited = v;
    ccnuma::topology_options topo_options;
    topo_options.use_affinity_mask = inherited == nullptr && !o.all;
    topo_options.source = o.input;
    topo_options.source_name = "--input";
    std::optional<std::vector<unsigned>> cpus;
    const ccnuma::topology topo = [&] {
        auto t = ccnuma::topology::load(topo_options);
        if (!o.cpus) return t;
        // -C/-N narrow what the plan may use, as they narrow what numactl's command may use.
        cpus = selected_cpus(*o.cpus, t);
        topo_options.cpuset = ccnuma::format_list(*cpus);
        return ccnuma::topology::load(topo_options);
    }();
    // --cpus: likwid-pin's order, one place per thread.
    std::vector<unsigned> pinned;
    if (o.expression) {
        if (ccnuma::is_cpu_location(*o.expression)) hint_hwloc(*o.expression, topo);
        pinned = ccnuma::cpu_expression_pus(*o.expression, topo);
        std::vector<unsigned> used = pinned;
        std::sort(used.begin(), used.end());
        used.erase(std::unique(used.begin(), used.end()), used.end());
        cpus = used;
    }
    if (inherited && binds && !o.quiet && !o.json)
        std::fprintf(stderr,
                     "ccnuma-run: note: %s is set, so the OpenMP runtime bound this process at start-up and its "
                     "affinity mask is unreliable; planning on all CPUs the cgroup allows (%s). Unset %s to have a "
                     "taskset mask honoured\n",
                     inherited, ccnuma::format_list(topo.allowed_cpus()).c_str(), inherited);
    std::optional<ccnuma::binding_plan> plan;
    ccnuma::omp_realization omp;
    if (binds) {
        plan = ccnuma::make_plan(topo, spec, {.oversubscribe = o.oversubscribe});
        omp = ccnuma::to_omp_environment(*plan);
    }
    // Node sets name this machine's nodes, or with CCNUMA_TOPOLOGY those of the machine planned for.
    std::optional<ccnuma::memory_policy> memory;
    if (o.memory) {
        const std::string nodes =
            o.memory->kind == ccnuma::memory_policy::mode::local ? "" : node_set_text(o.memory->name, o.memory->nodes, topo);
        memory = topo.is_this_system() ? ccnuma::memory_policy::parse(o.memory->kind, nodes)
                                       : ccnuma::memory_policy::parse(o.memory->kind, nodes, topo.allowed_nodes());
        if (o.balancing) memory = memory->with_balancing();
        // Slurm bound this task's memory already (srun --mem-bind): a policy on other nodes
        // would silently undo it, so say which two disagree.
        if (memory->kind != ccnuma::memory_policy::mode::local && topo.is_this_system())
            if (const auto slurm = tools::slurm::task_mem_bind(topo))
                if (!std::includes(slurm->nodes.begin(), slurm->nodes.end(), memory->nodes.begin(), memory->nodes.end()))
                    throw usage_error{o.memory->name + " " + ccnuma::format_list(memory->nodes) + " contradicts Slurm's " +
                                      slurm->option + " (nodes " + ccnuma::format_list(slurm->nodes) +
                                      " for this task; SLURM_MEM_BIND_TYPE, SLURM_MEM_BIND_LIST): drop one of them"};
    }
    std::vector<ccnuma::omp_variable> pin_variables;
    if (o.expression) {
        std::string places;
        for (unsigned pu : pinned) places += (places.empty() ? "{" : ",{") + std::to_string(pu) + "}";
        pin_variables = {{"OMP_NUM_THREADS", std::to_string(pinned.size())},
                         {"OMP_PLACES", places},
                         {"OMP_PROC_BIND", "close"}};
    }

    if (o.print_plan && o.expression) {
        if (o.json) {
            nlohmann::ordered_json doc;
            doc["schema_version"] = json_schema_version;
            doc["cpus"] = *o.expression;
            doc["threads"] = nlohmann::ordered_json::array();
            for (std::size_t i = 0; i < pinned.size(); ++i) {
                const auto& pu = topo.pu(pinned[i]);
                doc["threads"].push_back({{"thread", i},
                                          {"pu", pinned[i]},
                                          {"core", pu.core},
                                          {"numa", pu.numa},
                                          {"package", pu.package == ccnuma::no_package ? -1 : static_cast<long>(pu.package)}});
            }
            if (memory) doc["memory_policy"] = nlohmann::ordered_json::parse(memory->to_json());
            std::puts(doc.dump().c_str());
            return 0;
        }
        std::printf("likwid-pin expression %s: %zu threads\nthread  pu  core  numa  package\n", o.expression->c_str(),
                    pinned.size());
        for (std::size_t i = 0; i < pinned.size(); ++i) {
            const auto& pu = topo.pu(pinned[i]);
            std::printf("%6zu %3u %5u %5d %8s\n", i, pinned[i], pu.core, pu.numa,
                        pu.package == ccnuma::no_package ? "-" : std::to_string(pu.package).c_str());
        }
        std::puts("");
        for (const auto& v : pin_variables) std::printf("%s=%s\n", v.name.c_str(), v.value.c_str());
        if (memory) std::printf("memory policy: %s\n", memory->to_string().c_str());
        return 0;
    }
    if (o.print_plan) {
        if (o.json) {
            std::puts(plan_json(plan, memory).c_str());
            return 0;
        }
        if (plan) {
            std::fputs(plan->to_text().c_str(), stdout);
            std::puts("");
            for (const auto& v : omp.variables) std::printf("%s=%s\n", v.name.c_str(), v.value.c_str());
            for (const auto& n : omp.notes) std::printf("note: %s\n", n.c_str());
        }
        if (memory) std::printf("memory policy: %s\n", memory->to_string().c_str());
        return 0;
    }

    if (!topo.is_this_system())
        throw usage_error{"the topology is " + topo.description() +
                          (o.input.empty() ? " (CCNUMA_TOPOLOGY)" : " (--input)") +
                          ", not this machine: only --print-plan is possible"};
    if (binds) {
        // The command starts every thread of the plan; refuse here what its OpenMP runtime
        // cannot start (it would exit with "Thread creation failed"), by the library's own rule.
        (void)ccnuma::detail::team_size(
            ccnuma::schedule{0, static_cast<unsigned>(std::min<std::size_t>(plan->size(), UINT_MAX))},
            "plan " + spec.to_string() + " of " + std::to_string(plan->size()) + " threads");
        export_binding(o, spec, topo, omp);
    } else if (o.expression) {
        for (const auto& v : pin_variables) setenv(v.name.c_str(), v.value.c_str(), 1);
        setenv("CCNUMA_CPUSET", ccnuma::format_list(*cpus).c_str(), 1);
        set_affinity(*cpus);
    } else if (cpus) {
        set_affinity(*cpus);
    }

    if (o.verify) {
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
        if (pid == 0) {
            char self[] = "/proc/self/exe";
            char flag[] = "--internal-self-check";
            char* args[] = {self, flag, nullptr};
            execv(self, args);
            std::fprintf(stderr, "ccnuma-run: cannot re-execute itself for --verify: %s\n", std::strerror(errno));
            _exit(127);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "ccnuma-run: binding check failed: threads are not on their planned PUs\n");
            return 3;
        }
    }
    if (o.command.empty()) return 0;
    if (!o.quiet && !binds) note_tool_without_ompt(o.command[0]);
    std::vector<char*> args = o.command;
    args.push_back(nullptr);
    // Right before exec, which keeps it: the command inherits it, and none of ccnuma-run's own
    // work above (the --verify child included) runs under it.
    if (memory) ccnuma::set_memory_policy(*memory);
    execvp(args[0], args.data());
    // env(1)'s and the shell's convention: 127 when there is no such command, 126 when there
    // is one that cannot be run.
    const int err = errno;
    std::fprintf(stderr, "ccnuma-run: cannot execute \"%s\": %s\n", args[0], std::strerror(err));
    return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

}  // namespace

// ccnuma-run starts its own OpenMP runtime: the team-size check asks it for its limits, and the
// --verify child runs teams. A tool named in OMP_TOOL_LIBRARIES is meant for the command, so
// ccnuma-run must not load it into itself (libccnuma-ompt.so would say "no binding plan" from
// here, before the exec). libomp first asks the program for ompt_start_tool and takes a non-null
// answer as the process's tool without reading OMP_TOOL_LIBRARIES (OpenMP 5.0, 4.2.2): so
// ccnuma-run is its own tool, one that declines (its initializer returns 0: no callbacks, no OMPT
// cost), and the variable reaches the command untouched. Exported by ENABLE_EXPORTS. libgomp
// has no OMPT and never asks.
#ifdef CCNUMA_RUN_HAS_OMPT
extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
    static ompt_start_tool_result_t declined{[](ompt_function_lookup_t, int, ompt_data_t*) { return 0; },
                                             [](ompt_data_t*) {}, ompt_data_none};
    return &declined;
}
#endif

int main(int argc, char** argv) {
    try {
        if (argc == 2 && argv[1] == self_check_flag) return self_check();
        return run(argc, argv);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "ccnuma-run: %s\n", e.message.c_str());
        return 2;
    } catch (const std::exception& e) {
        return tools::fail("ccnuma-run", e);
    }
}
