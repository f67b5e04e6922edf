// ccnuma-run: computes a nested binding plan and runs a command under it, by exporting the
// OpenMP variables that realize the plan, and sets the memory policy the command inherits, as
// numactl does. A thin layer over ccnuma/binding.hpp and ccnuma/memory_policy.hpp; this file
// decides what to do, run.hpp lists the units that do it.

#include "run.hpp"

#include "../common/slurm.hpp"

#include <ccnuma/cpu_expression.hpp>
#include <ccnuma/cpu_location.hpp>
#include <ccnuma/schedule.hpp>

#if __has_include(<omp-tools.h>)
#include <omp-tools.h>
#define CCNUMA_RUN_HAS_OMPT 1
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace tools::run;
using tools::usage_error;

// Over 80 lines: the dispatch of ccnuma-run's modes in the order their options exclude each
// other; each branch calls the file that does the work (show, hardware, plan, exec, watch).
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
    // An empty variable counts as unset, as it does for the runtimes and for CCNUMA_CPUSET.
    const auto is_set = [](const char* v) { const char* s = std::getenv(v); return s != nullptr && *s != '\0'; };
    const char* inherited = nullptr;
    for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"})
        if (!inherited && is_set(v) && !is_set("CCNUMA_CPUSET")) inherited = v;
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
        if (topo.is_this_system() && !o.quiet && !o.json) hint_kernel_weights(*memory, topo);
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

    if (o.print_plan) {
        if (o.expression) print_pinning(*o.expression, pinned, topo, pin_variables, memory, o.json);
        else print_plan(plan, omp, memory, o.json);
        return 0;
    }

    if (!topo.is_this_system())
        throw usage_error{"the topology is " + topo.description() +
                          (o.input.empty() ? " (CCNUMA_TOPOLOGY)" : " (--input)") +
                          ", not this machine: only --print-plan is possible"};
    if (binds) {
        // The command starts every thread of the plan; refuse here what its OpenMP runtime
        // cannot start (it would exit with "Thread creation failed"), by the library's own rule.
        (void)ccnuma::team_size(
            ccnuma::schedule{0, static_cast<unsigned>(std::min<std::size_t>(plan->size(), UINT_MAX))},
            "plan " + spec.to_string() + " of " + std::to_string(plan->size()) + " threads");
        export_binding(o, spec, topo, omp);
    } else if (o.expression) {
        export_variables(o, pin_variables, "--cpus " + *o.expression);
        setenv("CCNUMA_CPUSET", ccnuma::format_list(*cpus).c_str(), 1);
        set_affinity(*cpus);
    } else if (cpus) {
        set_affinity(*cpus);
    }

    if (o.verify && !verify_in_child()) {
        std::fprintf(stderr, "ccnuma-run: binding check failed: threads are not on their planned PUs\n");
        return 3;
    }
    if (o.command.empty()) return 0;
    if (o.watch_seconds > 0) return watch_command(o, memory);
    return exec_command(o, binds, memory);
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
        return tools::fail("ccnuma-run", e);
    } catch (const std::exception& e) {
        return tools::fail("ccnuma-run", e);
    }
}
