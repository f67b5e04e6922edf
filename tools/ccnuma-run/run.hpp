#pragma once
// ccnuma-run's units, one job each: options.cpp reads the command line, cpus.cpp turns CPU and
// node options into sets, show.cpp answers --show and --hardware, plan_output.cpp prints
// --print-plan, exec.cpp hands the plan to the command and runs it. main.cpp dispatches.

#include "../common/cli.hpp"

#include <ccnuma/ccnuma.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tools::run {

// The version of the JSON documents this tool writes; raised when a key changes meaning or goes.
inline constexpr int json_schema_version = 1;

// Hidden mode: the binding check must run in a fresh process, because the OpenMP runtime reads
// the variables this tool exports only at start-up.
inline constexpr std::string_view self_check_flag = "--internal-self-check";

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
    double watch_seconds = 0;  // --watch: the sampling interval; 0 runs the command in place
    std::optional<std::string> watch_json;  // --watch-json: where the series goes
    std::vector<char*> command;
};

// options.cpp
options parse(int argc, char** argv);
/// The binding spec of --bind, CCNUMA_BIND or SLURM_CPUS_PER_TASK; empty when a memory policy or
/// CPUs are all that was asked for.
ccnuma::binding_spec spec_of(const options& o);

// cpus.cpp
/// The CPUs of --physcpubind or --cpunodebind, checked against what `topo` allows.
std::vector<unsigned> selected_cpus(const cpu_option& c, const ccnuma::topology& topo);
/// A node set option's value in numactl's syntax: hwloc locations become their nodes.
std::string node_set_text(const std::string& option, const std::string& text, const ccnuma::topology& topo);
/// --cpus given an hwloc location: one line naming --physcpubind.
[[noreturn]] void hint_hwloc(const std::string& text, const ccnuma::topology& topo);

// show.cpp
int show(bool json);
int hardware();
/// -w with all of its nodes' kernel weights equal on a tiered machine: one note on stderr with
/// the weights the bandwidths give and how to set them.
void hint_kernel_weights(const ccnuma::memory_policy& policy, const ccnuma::topology& topo);

// plan_output.cpp
void print_plan(const std::optional<ccnuma::binding_plan>& plan, const ccnuma::omp_realization& omp,
                const std::optional<ccnuma::memory_policy>& memory, bool json);
void print_pinning(const std::string& expression, const std::vector<unsigned>& pinned, const ccnuma::topology& topo,
                   const std::vector<ccnuma::omp_variable>& variables,
                   const std::optional<ccnuma::memory_policy>& memory, bool json);

// exec.cpp
void set_affinity(const std::vector<unsigned>& cpus);
/// Sets `variables` in the environment; a different OMP_NUM_THREADS the user set is noted on
/// stderr (unless --quiet), naming what replaces it (`by`: "plan 2,scatter", "--cpus E:N:4").
void export_variables(const options& o, const std::vector<ccnuma::omp_variable>& variables, const std::string& by);
void export_binding(const options& o, const ccnuma::binding_spec& spec, const ccnuma::topology& topo,
                    const ccnuma::omp_realization& omp);
/// Runs the binding check in a fresh process of this program; false if a thread is off its PU.
bool verify_in_child();
int self_check();
/// Sets `memory` and execs the command; returns only on failure, with 126 or 127.
int exec_command(const options& o, bool binds, const std::optional<ccnuma::memory_policy>& memory);

// watch.cpp
/// --watch: starts the command as a child under `memory`, samples it every o.watch_seconds as
/// ccnuma-ps --watch does, forwards the signals sent to ccnuma-run, and at its exit prints the
/// run's report on stderr and writes --watch-json. Returns the command's exit status (128 + N
/// when signal N ended it; 126, 127 when it could not be started).
int watch_command(const options& o, const std::optional<ccnuma::memory_policy>& memory);

}  // namespace tools::run
