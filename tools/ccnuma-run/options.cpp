// ccnuma-run's command line: the options, their conflicts, and the binding spec they name.

#include "run.hpp"

#include "../common/slurm.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tools::run {

namespace {

// %s: the strategies, from the library's one list.
constexpr const char* usage =
    "usage: ccnuma-run [--bind SPEC | --cpus EXPR] [--oversubscribe] [--physcpubind CPUS | --cpunodebind NODES]\n"
    "                  [--interleave NODES | --weighted-interleave NODES | --membind NODES [--balancing] |\n"
    "                   --preferred NODE | --preferred-many NODES | --localalloc] [--all]\n"
    "                  [--print-plan [--json]] [--verify] [--quiet] [--watch SECONDS [--watch-json FILE]]\n"
    "                  [--] [command [args...]]\n"
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
    "                             synthetic description; as CCNUMA_TOPOLOGY; -i is --interleave)\n"    "      --watch SECONDS        run the command as a child and sample its threads and pages every SECONDS\n"
    "                             (as ccnuma-ps --watch); at its exit print the run's report on stderr\n"
    "      --watch-json FILE      with --watch: write the series there (ccnuma-ps's series JSON)\n"
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

// The long options without a letter.
constexpr int watch_option = 0x100, watch_json_option = 0x101;

// What an option's value is, for "--bind needs a spec, e.g. --bind 4,scatter".
constexpr tools::value_help value_options[] = {
    {'B', "a spec", "4,scatter"},
    {'c', "a likwid-pin expression", "S0:0-3"},
    {'i', "a node set", "all"},
    {'w', "a node set", "all"},
    {'m', "a node set", "0-1"},
    {'p', "a node", "1"},
    {'P', "a node set", "0-1"},
    {'C', "a CPU list", "0-3"},
    {'N', "a node set", "0"},
    {'x', "an hwloc XML file or a synthetic description", "machine.xml"},
    {watch_option, "a number of seconds", "1"},
    {watch_json_option, "a file name", "series.json"},
};

// numactl rejects two memory policies on one command line, and so do we: the one applied
// would depend on the order of the options.
void set_memory(options& o, const char* name, ccnuma::memory_policy::mode kind, std::string nodes) {
    if (o.memory)
        throw usage_error{"give at most one memory policy option, not " + o.memory->name + " and " + std::string(name)};
    o.memory = memory_option{std::string(name), kind, std::move(nodes)};
}

}  // namespace

// Over 80 lines: one getopt switch, one case per option in --help's order, each checking its
// own value; the cases share nothing but the options they fill.
options parse(int argc, char** argv) {
    using mode = ccnuma::memory_policy::mode;
    static const option longs[] = {
        {"bind", required_argument, nullptr, 'B'},
        {"cpus", required_argument, nullptr, 'c'},
        {"balancing", no_argument, nullptr, 'b'},
        {"hardware", no_argument, nullptr, 'H'},
        {"all", no_argument, nullptr, 'a'},
        {"interleave", required_argument, nullptr, 'i'},
        {"weighted-interleave", required_argument, nullptr, 'w'},
        {"membind", required_argument, nullptr, 'm'},
        {"preferred", required_argument, nullptr, 'p'},
        {"preferred-many", required_argument, nullptr, 'P'},
        {"localalloc", no_argument, nullptr, 'l'},
        {"physcpubind", required_argument, nullptr, 'C'},
        {"cpunodebind", required_argument, nullptr, 'N'},
        {"cpubind", required_argument, nullptr, 'N'},  // numactl's old name; after, for messages
        {"show", no_argument, nullptr, 's'},
        {"oversubscribe", no_argument, nullptr, 'O'},
        {"print-plan", no_argument, nullptr, 'n'},
        {"json", no_argument, nullptr, 'j'},
        {"verify", no_argument, nullptr, 'y'},
        {"input", required_argument, nullptr, 'x'},
        {"quiet", no_argument, nullptr, 'q'},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {"watch", required_argument, nullptr, watch_option},
        {"watch-json", required_argument, nullptr, watch_json_option},
        {nullptr, 0, nullptr, 0},
    };
    options o;
    tools::option_parser p("ccnuma-run", argc, argv, "+:B:c:bHai:w:m:p:P:lC:N:snjyOx:qhV", longs, value_options);
    const std::string names = ccnuma::strategy_names();
    std::string help(static_cast<std::size_t>(std::snprintf(nullptr, 0, usage, names.c_str())) + 1, '\0');
    help.resize(static_cast<std::size_t>(std::snprintf(help.data(), help.size(), usage, names.c_str())));
    int c = 0;
    while ((c = p.next(help)) != -1) {
        const std::string& value = p.value();
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
            case watch_option: {
                char* end = nullptr;
                errno = 0;
                o.watch_seconds = std::strtod(value.c_str(), &end);
                if (errno != 0 || *end != '\0' || !(o.watch_seconds >= 0.01) || o.watch_seconds > 86400)
                    throw usage_error{"--watch needs a number of seconds from 0.01 to 86400, not \"" + value + "\""};
                break;
            }
            case watch_json_option: o.watch_json = value; break;
            default: throw usage_error{"unknown option (" + p.see_help() + ")"};
        }
    }
    for (int i = p.index(); i < argc; ++i) o.command.push_back(argv[i]);
    if (o.watch_json && o.watch_seconds == 0) throw usage_error{"--watch-json goes with --watch SECONDS"};
    if (o.watch_seconds > 0 && o.command.empty())
        throw usage_error{"--watch samples a command: give one (ccnuma-run --watch 1 -- ./app); ccnuma-ps --watch "
                          "samples a running process"};
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
    // --watch alone observes the command as it would run without ccnuma-run: the recipe's
    // "without" run beside the one under -i all or a spec.
    if (spec.empty() && !o.memory && !o.cpus && !o.expression && o.watch_seconds == 0)
        throw usage_error{"no binding spec: pass --bind SPEC (e.g. --bind 4,scatter) or set CCNUMA_BIND, or give a "
                          "memory policy (--interleave, --membind, --preferred, --localalloc) or CPUs (--physcpubind, "
                          "--cpunodebind)"};
    return spec;
}

}  // namespace tools::run
