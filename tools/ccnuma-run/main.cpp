// ccnuma-run: computes a nested binding plan and runs a command under it, by exporting the
// OpenMP variables that realize the plan, and sets the memory policy the command inherits, as
// numactl does. A thin layer over ccnuma/binding.hpp and ccnuma/memory_policy.hpp.

#include "../common/cli.hpp"

#include <ccnuma/ccnuma.hpp>
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
    "usage: ccnuma-run [--bind SPEC] [--oversubscribe] [--physcpubind CPUS | --cpunodebind NODES]\n"
    "                  [--interleave NODES | --weighted-interleave NODES | --membind NODES |\n"
    "                   --preferred NODE | --preferred-many NODES | --localalloc]\n"
    "                  [--print-plan [--json]] [--verify] [--quiet] [--] [command [args...]]\n"
    "       ccnuma-run --show [--json] | --help | --version\n"
    "  SPEC is N,strategy[,N,strategy]... with strategies %s\n"
    "  (default: $CCNUMA_BIND, else $OMP_NESTING_TEAM_SIZE).\n"
    "  NODES is a node set as numactl takes it: all, 0-2,4, +0-1 (relative to the allowed\n"
    "  nodes), !3 (every allowed node but 3). CPUS is a CPU list in the same syntax.\n"
    "  -b, --bind SPEC            the binding spec (once)\n"
    "  --print-plan               print the plan (and the OpenMP variables, the memory policy) and run nothing\n"
    "  --json                     with --print-plan or --show: one JSON object\n"
    "  --verify                   check inside every thread that it runs on its planned PU, then run the command\n"
    "  --oversubscribe            allow more threads than allowed PUs\n"
    "  -q, --quiet                no notes on stderr\n"
    "  -s, --show                 show this process's CPUs, nodes, memory policy and binding spec\n"
    "  --input FILE|SYNTHETIC     plan for another machine, as lstopo -i (an hwloc XML export or a\n"
    "                             synthetic description; as CCNUMA_TOPOLOGY; -i is --interleave)\n"
    "CPUs of the command (at most one; the plan is made on them):\n"
    "  -C, --physcpubind CPUS     only these CPUs\n"
    "  -N, --cpunodebind NODES    only the CPUs of these nodes\n"
    "memory policy of the command (at most one; with one, the binding spec is optional):\n"
    "  -i, --interleave NODES           pages round-robin over NODES\n"
    "  -w, --weighted-interleave NODES  pages over NODES by the kernel's node weights (Linux 6.9)\n"
    "  -m, --membind NODES              pages only on NODES\n"
    "  -p, --preferred NODE             pages on NODE while it has free memory, then elsewhere\n"
    "  -P, --preferred-many NODES       pages on the nearest of NODES with free memory (Linux 5.15)\n"
    "  -l, --localalloc                 pages on the node of the CPU that first writes them\n"
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
    std::string input;  // --input: another machine's topology, as lstopo -i (no -i: numactl's --interleave)
    std::optional<memory_option> memory;
    std::optional<cpu_option> cpus;
    bool oversubscribe = false, print_plan = false, json = false, verify = false, quiet = false, show = false;
    std::vector<char*> command;
};

// What an option with a value is called in messages, what it takes, and an example value.
struct value_option {
    int val;
    const char* name;
    const char* needs;
    const char* example;
};

enum long_only : int { opt_oversubscribe = 256, opt_print_plan, opt_json, opt_verify, opt_input };

constexpr value_option value_options[] = {
    {'b', "--bind", "a spec", "4,scatter"},
    {'i', "--interleave", "a node set", "all"},
    {'w', "--weighted-interleave", "a node set", "all"},
    {'m', "--membind", "a node set", "0-1"},
    {'p', "--preferred", "a node", "1"},
    {'P', "--preferred-many", "a node set", "0-1"},
    {'C', "--physcpubind", "a CPU list", "0-3"},
    {'N', "--cpunodebind", "a node set", "0"},
    {opt_input, "--input", "an hwloc XML file or a synthetic description", "machine.xml"},
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
        {"bind", required_argument, nullptr, 'b'},
        {"interleave", required_argument, nullptr, 'i'},
        {"weighted-interleave", required_argument, nullptr, 'w'},
        {"membind", required_argument, nullptr, 'm'},
        {"preferred", required_argument, nullptr, 'p'},
        {"preferred-many", required_argument, nullptr, 'P'},
        {"localalloc", no_argument, nullptr, 'l'},
        {"physcpubind", required_argument, nullptr, 'C'},
        {"cpunodebind", required_argument, nullptr, 'N'},
        {"show", no_argument, nullptr, 's'},
        {"oversubscribe", no_argument, nullptr, opt_oversubscribe},
        {"print-plan", no_argument, nullptr, opt_print_plan},
        {"json", no_argument, nullptr, opt_json},
        {"verify", no_argument, nullptr, opt_verify},
        {"input", required_argument, nullptr, opt_input},
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
    while ((c = getopt_long(argc, argv, "+:b:i:w:m:p:P:lC:N:sqhV", longs, nullptr)) != -1) {
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
            case 'b':
                if (o.spec)
                    throw usage_error{"--bind given twice (\"" + *o.spec + "\" and \"" + value + "\"); give one spec"};
                o.spec = value;
                break;
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
            case opt_oversubscribe: o.oversubscribe = true; break;
            case opt_print_plan: o.print_plan = true; break;
            case opt_json: o.json = true; break;
            case opt_verify: o.verify = true; break;
            case opt_input: o.input = value; break;
            case 'q': o.quiet = true; break;
            case 'h': std::printf(usage, ccnuma::strategy_names().c_str()); std::exit(0);
            case 'V': std::printf("ccnuma-run (ccnuma) %s\n", ccnuma::library_version()); std::exit(0);
            default: throw usage_error{"unknown option (see ccnuma-run --help)"};
        }
    }
    for (int i = optind; i < argc; ++i) o.command.push_back(argv[i]);
    if (o.show) {
        if (o.print_plan || o.verify || o.memory || o.cpus || o.spec || !o.command.empty())
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
    if (spec.empty() && o.verify)
        throw usage_error{"no binding spec for --verify to check: pass --bind SPEC (e.g. --bind 4,scatter) or set "
                          "CCNUMA_BIND"};
    if (spec.empty() && !o.memory && !o.cpus)
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

// The CPUs of --physcpubind or --cpunodebind, checked against what `topo` allows.
std::vector<unsigned> selected_cpus(const cpu_option& c, const ccnuma::topology& topo) {
    const std::vector<unsigned> allowed = topo.allowed_cpus();
    std::vector<unsigned> cpus;
    if (c.name == "--cpunodebind") {
        const auto nodes = ccnuma::parse_node_set(c.list, topo.allowed_nodes());
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

// numactl --show: what this process runs on and allocates from, as numactl names it.
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
    const auto policy = ccnuma::current_memory_policy();
    const auto mems = ccnuma::parse_node_set("all");
    const auto spec = ccnuma::binding_spec::from_environment();
    if (json) {
        nlohmann::ordered_json doc;
        doc["schema_version"] = json_schema_version;
        doc["memory_policy"] = nlohmann::ordered_json::parse(policy.to_json());
        doc["physcpubind"] = cpus;
        doc["nodebind"] = nodes;
        doc["membind"] = mems;
        doc["binding_spec"] = spec.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(spec.to_string());
        std::puts(doc.dump().c_str());
        return 0;
    }
    auto words = [](const std::vector<unsigned>& v) {
        std::string s;
        for (unsigned x : v) s += std::to_string(x) + " ";
        return s;
    };
    std::printf("policy: %s\n", policy.to_string().c_str());
    std::printf("physcpubind: %s\n", words(cpus).c_str());
    std::printf("nodebind: %s\n", words(nodes).c_str());
    std::printf("membind: %s\n", words(mems).c_str());
    std::printf("binding spec: %s\n", spec.empty() ? "none" : spec.to_string().c_str());
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
    const auto spec = spec_of(o);
    const bool binds = !spec.empty();
    // libgomp binds the initial thread to its first place while loading when OMP_PROC_BIND or
    // OMP_PLACES is inherited, so our own affinity mask no longer tells what the user allowed.
    // Plan on the cgroup's CPUs then, and say so.
    const char* inherited = nullptr;
    for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"})
        if (!inherited && std::getenv(v) != nullptr && std::getenv("CCNUMA_CPUSET") == nullptr) inherited = v;
    ccnuma::topology_options topo_options;
    topo_options.use_affinity_mask = inherited == nullptr;
    topo_options.source = o.input;
    std::optional<std::vector<unsigned>> cpus;
    const ccnuma::topology topo = [&] {
        auto t = ccnuma::topology::load(topo_options);
        if (!o.cpus) return t;
        // -C/-N narrow what the plan may use, as they narrow what numactl's command may use.
        cpus = selected_cpus(*o.cpus, t);
        topo_options.cpuset = ccnuma::format_list(*cpus);
        return ccnuma::topology::load(topo_options);
    }();
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
    if (o.memory)
        memory = topo.is_this_system() ? ccnuma::memory_policy::parse(o.memory->kind, o.memory->nodes)
                                       : ccnuma::memory_policy::parse(o.memory->kind, o.memory->nodes, topo.allowed_nodes());

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
                          " (CCNUMA_TOPOLOGY), not this machine: only --print-plan is possible"};
    if (binds) {
        // The command starts every thread of the plan; refuse here what its OpenMP runtime
        // cannot start (it would exit with "Thread creation failed"), by the library's own rule.
        (void)ccnuma::detail::team_size(
            ccnuma::schedule{0, static_cast<unsigned>(std::min<std::size_t>(plan->size(), UINT_MAX))},
            "plan " + spec.to_string() + " of " + std::to_string(plan->size()) + " threads");
        export_binding(o, spec, topo, omp);
    }
    else if (cpus) set_affinity(*cpus);

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
