// libccnuma-ompt.so: an OMPT tool that binds every OpenMP thread to the PU the binding plan
// gives its (ancestor, thread) path, at every implicit-task begin and every nesting level. The
// binding paper did this with OPARI instrumentation at every fork, because runtimes hand pooled
// threads to new teams; OMPT gives the same hook without touching the program.
//
// Loaded by LLVM's libomp through OMP_TOOL_LIBRARIES; the plan is ccnuma::current_plan()
// (CCNUMA_BIND, CCNUMA_OVERSUBSCRIBE), made on topology::current() (the affinity mask).
// Built in every build that finds omp-tools.h (tools/CMakeLists.txt), linked with libomp, never
// libgomp. libgomp has no OMPT: there ccnuma-run and ccnuma::bind_this_thread() are the way.

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/openmp_places.hpp>
#include <ccnuma/detail/os.hpp>
#include <ccnuma/topology.hpp>

#include <omp-tools.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string>
#include <string_view>

namespace {

struct tool_state {
    const ccnuma::binding_plan* plan = nullptr;
    // The plan's team sizes and the distance between siblings' slots at each level: the plan
    // stores threads depth-first (binding.hpp), so the child `index` of the slot at depth d is
    // that slot + index * stride[d], and a fork costs a multiplication, not a path search.
    std::size_t levels = 0;
    std::array<std::size_t, ccnuma::binding_spec::max_levels> team{}, stride{};
    bool verbose = false;
    // CCNUMA_OMPT_VERIFY=1: every implicit task the plan places reads its mask back, so the
    // summary says what was measured, not what the tool believes it did.
    bool verify = false;
    // Counters are kept only when they are printed: shared counters would cost every fork a
    // contended cache line.
    bool counting = false;
    // finalize() runs from libomp's destructor, after libccnuma's statics are gone: what it
    // prints is kept here, in plain storage.
    char spec[128] = {};
    // A binding is a system call; in_place is the cached path; left_alone are the implicit tasks
    // of teams the plan has no place for (larger or deeper than planned).
    std::atomic<unsigned long> bindings{0}, in_place{0}, left_alone{0}, failures{0};
    std::atomic<unsigned long> checked{0}, off_plan{0};
};

tool_state state;

// Where a task is in the plan, in 64 bits so it fits the runtime's ompt_data_t: the index of its
// slot in plan->threads() and its nesting depth; 0 is the initial task (depth 0, empty path).
// Only depths up to plan->levels() are positions: a team the plan has no place for, and
// everything nested in it, is `outside`, and so is every region nested deeper than the plan
// (its masters are the threads of the enclosing team, already placed; its workers have no slot).
using position = std::uint64_t;
constexpr position outside = ~position{0};
constexpr position encode(std::size_t slot, std::size_t depth) { return (position{slot} << 8) | depth; }
constexpr std::size_t slot_of(position p) { return static_cast<std::size_t>(p >> 8); }
constexpr std::size_t depth_of(position p) { return static_cast<std::size_t>(p & 0xff); }

// The positions a thread returns to when the regions it forked end. libomp hands a finished team
// back to its pool before it reports parallel_end with a pointer into that team, so a sibling's
// fork may already have written its own position there: what parallel_end may read is gone.
// Depth-bounded: a thread with k regions of its own open is at depth >= k, so beyond
// max_levels + 1 every enclosing position is `outside` and only the count is kept.
constexpr std::size_t stack_capacity = ccnuma::binding_spec::max_levels + 2;

struct thread_state {
    position current = 0;          // the position of the implicit task this thread runs
    unsigned bound_pu = UINT_MAX;  // where the tool last bound it
    std::size_t forks = 0;         // regions this thread forked that have not ended
    std::array<position, stack_capacity> enclosing{};
};
// Per thread, so a pooled thread that comes back to the same place costs a comparison, not a
// system call, and a thread knows its own path when it forks (omp_get_ancestor_thread_num()
// semantics, also from inside an explicit task). Trivially constructible: no TLS destructor in a
// library the runtime dlopen()s.
thread_local thread_state self;

void count(std::atomic<unsigned long>& counter) {
    if (state.counting) counter.fetch_add(1, std::memory_order_relaxed);
}

void say(const std::string& line) { std::fprintf(stderr, "ccnuma-ompt: %s\n", line.c_str()); }

std::string path_text(std::span<const unsigned> path) {
    std::string s;
    for (unsigned i : path) s += (s.empty() ? "" : ",") + std::to_string(i);
    return s;
}

// The position of thread `index` of a team forked at `parent`. A region nested deeper than the
// plan, or a thread beyond its planned team, has none: the thread is left where it is.
position child_of(position parent, unsigned index) {
    if (parent == outside) return outside;
    const std::size_t depth = depth_of(parent);
    if (depth >= state.levels || index >= state.team[depth]) return outside;
    return encode(slot_of(parent) + index * state.stride[depth], depth + 1);
}

// Team sizes and strides from the spec, checked once against the slots' own paths, so that
// child_of() never has to look at a path.
bool index_plan(const ccnuma::binding_plan& plan) {
    state.levels = plan.levels();
    if (state.levels == 0 || state.levels > ccnuma::binding_spec::max_levels) return false;
    std::size_t stride = 1;
    for (std::size_t l = state.levels; l-- > 0;) {
        state.team[l] = plan.spec().levels()[l].threads;
        state.stride[l] = stride;
        stride *= state.team[l];
    }
    if (stride != plan.size()) return false;
    for (std::size_t k = 0; k < plan.size(); ++k) {
        const auto& path = plan.threads()[k].path;
        if (path.size() != state.levels) return false;
        std::size_t at = 0;
        for (std::size_t l = 0; l < state.levels; ++l) at += path[l] * state.stride[l];
        if (at != k) return false;
    }
    return true;
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel_data, unsigned int, int,
                       const void*) {
    thread_state& me = self;
    // The team is live until its implicit tasks have begun: the workers read their parent there.
    parallel_data->value = me.current;
    if (me.forks < stack_capacity) me.enclosing[me.forks] = me.current;
    ++me.forks;
}

void on_parallel_end(ompt_data_t*, ompt_data_t*, int, const void*) {
    thread_state& me = self;
    if (me.forks == 0) return;  // an end without its begin: nothing to return to
    --me.forks;
    me.current = me.forks < stack_capacity ? me.enclosing[me.forks] : outside;
}

// CCNUMA_OMPT_VERIFY: the mask as the kernel has it, compared with the single planned PU.
void verify(thread_state& me, unsigned pu) {
    count(state.checked);
    const auto cpus = ccnuma::detail::this_thread_cpus();
    if (cpus.size() == 1 && cpus.front() == pu) return;
    if (state.off_plan.fetch_add(1, std::memory_order_relaxed) == 0) {
        std::string mask;
        for (unsigned c : cpus) mask += (mask.empty() ? "" : ",") + std::to_string(c);
        const auto& path = state.plan->threads()[slot_of(me.current)].path;
        say("thread (" + path_text(std::span(path.data(), depth_of(me.current))) + ") has mask {" + mask +
            "}, planned PU " + std::to_string(pu) + " (said for the first such task only)");
    }
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t*, unsigned int,
                      unsigned int index, int flags) {
    // Workers' ends come late (at their next fork barrier, without a team): only begins count.
    if (endpoint != ompt_scope_begin || (flags & ompt_task_initial) != 0) return;
    thread_state& me = self;
    me.current = child_of(parallel_data->value, index);
    if (me.current == outside) {  // a team larger or deeper than the plan: left where it is
        count(state.left_alone);
        return;
    }
    const unsigned pu = state.plan->threads()[slot_of(me.current)].pu;
    if (pu == me.bound_pu) {
        count(state.in_place);
    } else {
        if (const int rc = ccnuma::pin_this_thread(pu); rc != 0) {
            // Said once: a failing binding would otherwise repeat at every fork.
            if (state.failures.fetch_add(1, std::memory_order_relaxed) == 0)
                say("binding a thread to PU " + std::to_string(pu) + " failed (error " + std::to_string(rc) +
                    "); threads that cannot be bound are left where they are");
            me.bound_pu = UINT_MAX;
            return;
        }
        me.bound_pu = pu;
        count(state.bindings);
    }
    if (state.verify) verify(me, pu);
}

bool flag(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::string_view(value) == "1";
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
    state.verbose = flag("CCNUMA_OMPT_VERBOSE");
    state.verify = flag("CCNUMA_OMPT_VERIFY");
    state.counting = state.verbose || state.verify;
    // libomp calls this from inside its start-up: the plan's topology must not ask for the
    // places there (omp_get_num_places() would wait for the start-up's lock forever).
    const ccnuma::detail::openmp_start_up starting;
    try {
        const ccnuma::binding_plan& plan = ccnuma::current_plan();
        if (plan.empty()) {
            say("no binding plan: set CCNUMA_BIND (e.g. CCNUMA_BIND=4,scatter,2,subcompact); the tool stays inactive");
            return 0;
        }
        if (!ccnuma::topology::current().is_this_system()) {
            say("the topology is \"" + ccnuma::topology::current().description() +
                "\" (CCNUMA_TOPOLOGY), not this machine; unset CCNUMA_TOPOLOGY to bind threads");
            return 0;
        }
        if (!index_plan(plan)) {
            say("the plan \"" + plan.spec().to_string() + "\" does not store its threads depth-first as this tool "
                "expects; the tool stays inactive");
            return 0;
        }
        // The tool's own copy, never freed. current_plan() lives in the library's plan
        // registry, a static destroyed at exit before the destructors of globals built earlier,
        // and such a destructor may still run a parallel region (a global
        // ccnuma::vector<std::string> frees its elements in one): its implicit tasks would read
        // a freed plan (issue 32, item 3). The tool must stay valid until libomp finalizes it,
        // which may come after every static is gone, so the copy is left for the process's end
        // to reclaim; it is reachable from `state`, so LeakSanitizer does not count it.
        state.plan = new ccnuma::binding_plan(plan);
    } catch (const std::exception& e) {
        // A bad spec must not take the program down from inside the runtime's start-up; it is
        // said once, and the threads run as if no tool were loaded.
        say(std::string(e.what()) + "; the tool stays inactive");
        return 0;
    }
    auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
    const auto always = [&](ompt_callbacks_t event, ompt_callback_t callback) {
        return set_callback(event, callback) == ompt_set_always;
    };
    if (set_callback == nullptr ||
        !always(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&on_parallel_begin)) ||
        !always(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(&on_parallel_end)) ||
        !always(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(&on_implicit_task))) {
        say("this OpenMP runtime does not report parallel regions and implicit tasks; the tool stays inactive");
        return 0;
    }
    std::snprintf(state.spec, sizeof state.spec, "%s", state.plan->spec().to_string().c_str());
    if (state.verbose)
        say("binding by plan \"" + state.plan->spec().to_string() + "\" (" + std::to_string(state.plan->size()) +
            " threads)" + (state.verify ? ", every implicit task's mask checked" : ""));
    return 1;
}

void finalize(ompt_data_t*) {
    if (!state.counting) return;
    // What the tool did, then what it measured: without CCNUMA_OMPT_VERIFY it has not looked at
    // any mask after binding, and says so rather than report a count of nothing as "none off".
    char checked[160];
    if (state.verify)
        std::snprintf(checked, sizeof checked, "%lu masks checked, %lu off the plan", state.checked.load(),
                      state.off_plan.load());
    else
        std::snprintf(checked, sizeof checked, "masks not verified (CCNUMA_OMPT_VERIFY=1 checks each task)");
    std::fprintf(stderr,
                 "ccnuma-ompt: plan \"%s\": %lu bindings, %lu already in place, %lu left alone (no place in the "
                 "plan), %lu failed; %s\n",
                 state.spec, state.bindings.load(), state.in_place.load(), state.left_alone.load(),
                 state.failures.load(), checked);
}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
    static ompt_start_tool_result_t result{&initialize, &finalize, ompt_data_none};
    return &result;
}
