// ccnuma-run: computes a nested binding plan and runs a command under it, by exporting the
// OpenMP variables that realize the plan, and sets the memory policy the command inherits, as
// numactl does. A thin layer over ccnuma/binding.hpp and ccnuma/memory_policy.hpp.

#include "../common/cli.hpp"

#include <ccnuma/ccnuma.hpp>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* usage =
    "usage: ccnuma-run [--bind SPEC] [--oversubscribe] [--interleave NODES | --membind NODES |\n"
    "                  --preferred NODE | --localalloc] [--print-plan [--json]] [--verify] [--quiet]\n"
    "                  [--] [command [args...]]\n"
    "  SPEC is N,strategy[,N,strategy]... with strategies compact, scatter, subcompact,\n"
    "  subscatter (default: $CCNUMA_BIND, else $OMP_NESTING_TEAM_SIZE).\n"
    "  NODES is a node set as numactl takes it: all, 0-2,4, +0-1 (relative to the allowed\n"
    "  nodes), !3 (every allowed node but 3).\n"
    "  --print-plan     print the plan (and the OpenMP variables, the memory policy) and run nothing\n"
    "  --json           with --print-plan: one JSON object\n"
    "  --verify         check inside every thread that it runs on its planned PU, then run the command\n"
    "  --oversubscribe  allow more threads than allowed PUs\n"
    "  --quiet, -q      no notes on stderr\n"
    "  --bind, -b SPEC  also --bind=SPEC\n"
    "  --input FILE|SYNTHETIC  plan for another machine, as lstopo -i (an hwloc XML export or a\n"
    "                   synthetic description; the same as CCNUMA_TOPOLOGY; -i is --interleave)\n"
    "memory policy of the command (at most one; with one, the binding spec is optional):\n"
    "  --interleave, -i NODES  pages round-robin over NODES\n"
    "  --membind, -m NODES     pages only on NODES\n"
    "  --preferred, -p NODE    pages on NODE while it has free memory, then elsewhere\n"
    "  --localalloc, -l        pages on the node of the CPU that first writes them\n"
    "  (also --interleave=NODES, --membind=NODES, --preferred=NODE)\n"
    "exit status: the command's own; 2 usage error, 1 bad spec, node set or topology, 3 binding\n"
    "check failed, 127 command not executable\n";

// Hidden mode: the binding check must run in a fresh process, because the OpenMP runtime reads
// the variables this tool exports only at start-up.
constexpr std::string_view self_check_flag = "--internal-self-check";

struct usage_error {
    std::string message;
};

struct memory_option {
    std::string name;  // the long option, for messages
    ccnuma::memory_policy::mode kind;
    std::string nodes;
};

struct options {
    std::string spec;
    std::string input;  // --input: another machine's topology, as lstopo -i (no -i: numactl's --interleave)
    std::optional<memory_option> memory;
    bool oversubscribe = false, print_plan = false, json = false, verify = false, quiet = false;
    std::vector<char*> command;
};

// An option with a value, in numactl's three spellings: --name VALUE, --name=VALUE, -x VALUE.
// Returns false if argv[i] is not this option; advances i past a separate value.
bool value_option(int& i, int argc, char** argv, std::string_view name, std::string_view letter,
                  std::string_view needs, std::string_view example, std::string& value) {
    const std::string_view a = argv[i];
    if (a == name || a == letter) {
        if (i + 1 == argc)
            throw usage_error{std::string(name) + " needs " + std::string(needs) + ", e.g. " + std::string(name) + " " +
                              std::string(example)};
        value = argv[++i];
        return true;
    }
    if (a.size() > name.size() && a.substr(0, name.size()) == name && a[name.size()] == '=') {
        value = std::string(a.substr(name.size() + 1));
        if (value.empty())
            throw usage_error{std::string(name) + "= needs " + std::string(needs) + ", e.g. " + std::string(name) + "=" +
                              std::string(example)};
        return true;
    }
    return false;
}

void set_memory(options& o, std::string_view name, ccnuma::memory_policy::mode kind, std::string nodes) {
    // numactl applies the last one silently; two policies on one command line are a mistake.
    if (o.memory)
        throw usage_error{"give at most one memory policy option, not " + o.memory->name + " and " + std::string(name)};
    o.memory = memory_option{std::string(name), kind, std::move(nodes)};
}

options parse(int argc, char** argv) {
    using mode = ccnuma::memory_policy::mode;
    options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.empty() || a[0] != '-') break;
        std::string value;
        if (value_option(i, argc, argv, "--bind", "-b", "a spec", "4,scatter", value)) {
            o.spec = value;
        } else if (value_option(i, argc, argv, "--input", "--input", "an hwloc XML file or a synthetic description",
                                "machine.xml", value)) {
            o.input = value;
        } else if (value_option(i, argc, argv, "--interleave", "-i", "a node set", "all", value)) {
            set_memory(o, "--interleave", mode::interleave, value);
        } else if (value_option(i, argc, argv, "--membind", "-m", "a node set", "0-1", value)) {
            set_memory(o, "--membind", mode::bind, value);
        } else if (value_option(i, argc, argv, "--preferred", "-p", "a node", "1", value)) {
            set_memory(o, "--preferred", mode::preferred, value);
        } else if (a == "--localalloc" || a == "-l") {
            set_memory(o, "--localalloc", mode::local, "");
        } else if (a == "--oversubscribe") {
            o.oversubscribe = true;
        } else if (a == "--print-plan") {
            o.print_plan = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--verify") {
            o.verify = true;
        } else if (a == "--quiet" || a == "-q") {
            o.quiet = true;
        } else if (a == "-h" || a == "--help") {
            std::fputs(usage, stdout);
            std::exit(0);
        } else {
            throw usage_error{"unknown option \"" + std::string(a) + "\" (see ccnuma-run --help)"};
        }
    }
    for (; i < argc; ++i) o.command.push_back(argv[i]);
    if (o.json && !o.print_plan) throw usage_error{"--json goes with --print-plan"};
    if (o.print_plan && o.verify) throw usage_error{"--print-plan runs nothing, so there is nothing to --verify"};
    if (!o.print_plan && !o.verify && o.command.empty())
        throw usage_error{"nothing to do: give a command, --print-plan or --verify (see ccnuma-run --help)"};
    return o;
}

// Empty when there is none and a memory policy is all that was asked for.
ccnuma::binding_spec spec_of(const options& o) {
    if (!o.spec.empty()) return ccnuma::binding_spec::parse(o.spec);
    auto spec = ccnuma::binding_spec::from_environment();
    if (spec.empty() && o.verify)
        throw usage_error{"no binding spec for --verify to check: pass --bind SPEC (e.g. --bind 4,scatter) or set "
                          "CCNUMA_BIND"};
    if (spec.empty() && !o.memory)
        throw usage_error{"no binding spec: pass --bind SPEC (e.g. --bind 4,scatter) or set CCNUMA_BIND, or give a "
                          "memory policy (--interleave, --membind, --preferred, --localalloc)"};
    return spec;
}

// The plan's JSON object with a "memory_policy" key added, so that the plan's schema is kept.
std::string plan_json(const std::optional<ccnuma::binding_plan>& plan, const std::optional<ccnuma::memory_policy>& memory) {
    std::string json = plan ? plan->to_json() : "{}";
    if (!memory) return json;
    json.pop_back();  // the closing brace
    return json + (json.size() > 1 ? "," : "") + "\"memory_policy\":" + memory->to_json() + "}";
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
    if (omp.variables.size() == 2) {  // oversubscribed: places not expressible
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
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (unsigned cpu : topo.allowed_cpus())
        if (cpu < CPU_SETSIZE) CPU_SET(cpu, &mask);
    if (sched_setaffinity(0, sizeof mask, &mask) != 0)
        throw std::runtime_error(std::string("cannot set the affinity mask to ") +
                                 ccnuma::format_list(topo.allowed_cpus()) + ": " + std::strerror(errno));
    if (!o.quiet)
        for (const auto& n : omp.notes) std::fprintf(stderr, "ccnuma-run: note: %s\n", n.c_str());
}

int run(int argc, char** argv) {
    const options o = parse(argc, argv);
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
    const ccnuma::topology topo = ccnuma::topology::load(topo_options);
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
    if (binds) export_binding(o, spec, topo, omp);

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
    std::fprintf(stderr, "ccnuma-run: cannot execute \"%s\": %s\n", args[0], std::strerror(errno));
    return 127;
}

}  // namespace

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
