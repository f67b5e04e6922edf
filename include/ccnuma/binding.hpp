#pragma once
/// @file
/// Nested binding strategies (Schmidl et al., IWOMP 2010): the user names a team size and a
/// strategy per nesting level, ccnuma maps every thread to a PU of the allowed machine.
///
///     // CCNUMA_BIND=4,scatter,4,subcompact  (or OMP_NESTING_TEAM_SIZE, as in the paper)
///     ccnuma::set_nesting_info("4,scatter,4,subcompact");
///     const auto& plan = ccnuma::current_plan();
///     #pragma omp parallel num_threads(plan.team_size(1))
///     {
///         ccnuma::bind_this_thread();
///         #pragma omp parallel num_threads(plan.team_size(2))
///         {
///             ccnuma::bind_this_thread();   // cached: a repeated call makes no system call
///             work();
///         }
///     }
///
/// Strategies (docs/binding.md has the precise rules and pictures):
///  - compact: consecutive threads on neighbouring cores, one thread per core before any SMT
///    sibling;
///  - scatter: round-robin over the widest domains (package, NUMA node, L3, core), so as many
///    NUMA nodes as possible are used;
///  - subcompact / subscatter: an inner team stays inside the smallest domain around its master
///    that has room for it; the master keeps its PU.
///
/// Implemented in one unit per stage: src/binding_spec.cpp (the spec: parse, the strategies'
/// names), src/binding_plan.cpp (spec to plan: make_plan, to_omp_environment) and src/bind.cpp
/// (the plan in this process: set_nesting_info, current_plan, bind_this_thread,
/// report_binding). A new strategy is an enumerator below, its row in binding_spec.cpp's table
/// and its placement rule in binding_plan.cpp's place_team.

#include <ccnuma/topology.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma {

enum class strategy { compact, scatter, subcompact, subscatter };

/// "compact", "scatter", "subcompact" or "subscatter".
std::string_view to_string(strategy s) noexcept;
/// The names of every strategy, in declaration order, for messages and usage texts:
/// "compact, scatter, subcompact, subscatter" (with " or " as last_separator: "..., subcompact or
/// subscatter").
std::string strategy_names(std::string_view last_separator = ", ");

/// One nesting level of a spec: a team size and a strategy.
struct binding_level {
    unsigned threads;
    strategy how;
    friend bool operator==(const binding_level&, const binding_level&) = default;
};

/// A parsed spec such as "4,scatter,2,subcompact".
class binding_spec {
public:
    /// Largest team size and nesting depth accepted; beyond them a spec is rejected as a typo.
    static constexpr unsigned max_team_size = 1u << 16;
    static constexpr std::size_t max_levels = 8;

    /// Parses `N,strategy[,N,strategy]...`. Throws ccnuma::error (errc::invalid_argument) whose
    /// message quotes the spec and points at the offending token by character position.
    static binding_spec parse(std::string_view text);

    /// The spec from CCNUMA_BIND, else OMP_NESTING_TEAM_SIZE; empty spec if neither is set
    /// (an empty variable counts as unset).
    /// Throws like parse(), naming the variable.
    static binding_spec from_environment();

    binding_spec() = default;
    explicit binding_spec(std::vector<binding_level> levels);

    const std::vector<binding_level>& levels() const noexcept { return levels_; }
    bool empty() const noexcept { return levels_.empty(); }
    /// Product of the team sizes: the number of threads at the innermost level.
    std::size_t total_threads() const noexcept;
    /// Canonical text, e.g. "4,scatter,2,subcompact".
    std::string to_string() const;

    friend bool operator==(const binding_spec&, const binding_spec&) = default;

private:
    std::vector<binding_level> levels_;
};

/// Options for make_plan().
struct plan_options {
    /// Allow more threads than allowed PUs; PUs are then shared as evenly as possible.
    bool oversubscribe = false;
};

/// Where one thread goes.
struct thread_slot {
    std::vector<unsigned> path;  ///< level-1 index, level-2 index, ...
    unsigned pu;                 ///< PU OS index
    unsigned core;               ///< core logical index (lstopo's L# in the same restriction)
    int numa;                    ///< NUMA node OS index, -1 if none
    unsigned package;            ///< package logical index, no_package if none (-1 in JSON)
};

/// A complete mapping of thread paths to PUs.
///
/// Threads are stored depth-first: path (i, j) of a spec with inner team size T2 is at i*T2 + j.
/// A thread of an outer level is the master (index 0) of its inner team, so path (i) is the
/// same thread as (i, 0, ..., 0).
class binding_plan {
public:
    binding_plan() = default;

    const binding_spec& spec() const noexcept { return spec_; }
    const std::vector<thread_slot>& threads() const noexcept { return threads_; }
    std::size_t size() const noexcept { return threads_.size(); }
    bool empty() const noexcept { return threads_.empty(); }
    std::size_t levels() const noexcept { return spec_.levels().size(); }
    /// Team size at nesting level `level` (1-based, as omp_get_level()); 1 beyond the spec.
    unsigned team_size(std::size_t level) const noexcept;
    /// True when some PU carries more than one thread.
    bool oversubscribed() const noexcept { return oversubscribed_; }
    /// The description of the topology the plan was made for.
    const std::string& topology_description() const noexcept { return topology_; }

    /// The slot of `path`; a shorter path is padded with zeros (an outer thread is the master
    /// of its inner team). Throws ccnuma::error when an index is out of range.
    const thread_slot& at(std::span<const unsigned> path) const;
    /// Same as at() but returns nullptr instead of throwing; never allocates.
    const thread_slot* find(std::span<const unsigned> path) const noexcept;

    /// Number of distinct NUMA nodes the innermost threads use.
    std::size_t numa_nodes_used() const;

    /// {"threads":[{"path":[0,1],"pu":3,"core":3,"numa":0,"package":0},...]}
    std::string to_json() const;
    /// A human-readable table, one thread per line.
    std::string to_text() const;

private:
    friend binding_plan make_plan(const topology&, const binding_spec&, const plan_options&);
    binding_spec spec_;
    std::vector<thread_slot> threads_;
    std::vector<std::size_t> stride_;  // stride_[l] = threads below one thread of level l+1
    bool oversubscribed_ = false;
    std::string topology_;
};

/// Computes the plan of `spec` on `topo`. Throws ccnuma::error: errc::infeasible when the spec
/// needs more PUs than are allowed and oversubscription was not asked for, errc::invalid_argument
/// when the spec is empty.
binding_plan make_plan(const topology& topo, const binding_spec& spec,
                       const plan_options& options = {});

/// One OpenMP environment variable that realizes a plan.
struct omp_variable {
    std::string name;
    std::string value;
};

/// How a plan is realized through the OpenMP runtime's own binding.
struct omp_realization {
    /// OMP_PLACES (explicit PU list in plan order) and OMP_PROC_BIND where uses_places,
    /// OMP_NUM_THREADS and OMP_MAX_ACTIVE_LEVELS; empty for an empty plan.
    std::vector<omp_variable> variables;
    /// Whether `variables` hold OMP_PLACES and OMP_PROC_BIND, that is, whether the places
    /// realize the plan. False for an oversubscribed plan: the runtime's own binding must then
    /// be left unset, and bind_this_thread() realizes the plan in process.
    bool uses_places = false;
    /// Per level: whether the runtime's places realize it exactly; where one does not, `notes`
    /// names the in-process call that does.
    std::vector<bool> level_expressed;
    std::vector<std::string> notes;
};

/// Translates a plan into OpenMP environment variables. Every level of a plan with distinct
/// PUs is exact: places are listed depth-first, `spread` at every level but the innermost hands
/// each thread the first place of its subpartition, and `close` at the innermost puts thread j
/// of a team on place j of its block, so that an innermost team smaller than planned runs on the
/// plan's first PUs, as bind_this_thread() puts it. Oversubscribed plans cannot be expressed as
/// places.
omp_realization to_omp_environment(const binding_plan& plan);

/// Installs `spec` as the process-wide plan, computed on topology::current(), and sets
/// omp_set_max_active_levels() and omp_set_num_threads() for level 1. The name follows the
/// paper's omp_set_nesting_info(). Throws like binding_spec::parse() and make_plan().
void set_nesting_info(std::string_view spec, const plan_options& options = {});

/// The process-wide plan: the last set_nesting_info(), else CCNUMA_BIND / OMP_NESTING_TEAM_SIZE
/// (with CCNUMA_OVERSUBSCRIBE=1 allowing oversubscription), else an empty plan.
const binding_plan& current_plan();

/// Binds the calling thread to its planned PU, found from omp_get_level() and
/// omp_get_ancestor_thread_num(). Caches per thread: a repeated call for the same path and plan
/// returns without a system call. Returns the PU. Throws ccnuma::error when no plan is set, the
/// thread's path lies outside the plan, or the topology is not this machine.
unsigned bind_this_thread();

/// Pins the calling thread to the PU that `plan` gives the thread at `path` (its ancestors'
/// thread numbers from level 1 down, as omp_get_ancestor_thread_num() gives them), whatever plan
/// is current. Returns that PU; std::nullopt for a path outside the plan, leaving the thread
/// where it is, as a runtime leaves threads beyond OMP_PLACES. Throws ccnuma::error
/// (errc::system) when the kernel refuses the PU.
std::optional<unsigned> pin_this_thread(const binding_plan& plan, std::span<const unsigned> path);

/// Pins the calling thread to one PU (OS index): the call behind every binding ccnuma makes
/// (bind_this_thread, the OMPT tool, ccnuma-bench's teams). Returns 0 or the errno of the
/// refusal (EINVAL for a PU outside the allowed set); never throws, so an OMPT callback can use it.
int pin_this_thread(unsigned pu) noexcept;

/// One thread as found by report_binding().
struct thread_binding {
    std::vector<unsigned> path;
    unsigned planned_pu;
    int cpu;                        ///< sched_getcpu() inside the thread
    std::vector<unsigned> allowed;  ///< the thread's affinity mask
    bool ok;                        ///< mask is exactly {planned_pu} and cpu == planned_pu
};

struct binding_report {
    std::vector<thread_binding> threads;
    std::size_t mismatches = 0;
    bool ok() const noexcept { return mismatches == 0 && !threads.empty(); }
    /// One line per thread, mismatches marked, and a summary line.
    std::string to_text() const;
};

struct report_options {
    /// Call bind_this_thread() in every thread before looking (checks the in-process
    /// realization); otherwise the check sees what the OpenMP runtime did on its own.
    bool bind_first = false;
};

/// Opens nested parallel regions shaped like current_plan() and compares, inside every thread,
/// the CPU it runs on and its affinity mask with the plan.
binding_report report_binding(const report_options& options = {});

/// The type's name before issue 36 (docs/renames.md). The function binding_report() it came from
/// cannot keep an alias: its name is now the type's.
using binding_check [[deprecated("ccnuma::binding_check is now ccnuma::binding_report (docs/renames.md)")]] = binding_report;

}  // namespace ccnuma
