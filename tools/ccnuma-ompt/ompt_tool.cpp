// libccnuma-ompt.so: an OMPT tool that binds every OpenMP thread to the PU the binding plan
// gives its (ancestor, thread) path, at every implicit-task begin and every nesting level. The
// binding paper did this with OPARI instrumentation at every fork, because runtimes hand pooled
// threads to new teams; OMPT gives the same hook without touching the program.
//
// Loaded by LLVM's libomp through OMP_TOOL_LIBRARIES; the plan is ccnuma::current_plan()
// (CCNUMA_BIND, CCNUMA_OVERSUBSCRIBE), made on topology::current() (the affinity mask).
// libgomp has no OMPT: there ccnuma-run and ccnuma::bind_this_thread() are the way.

#include <ccnuma/binding.hpp>
#include <ccnuma/topology.hpp>

#include <omp-tools.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
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

using path_array = std::array<unsigned, ccnuma::binding_spec::max_levels + 1>;

struct tool_state {
    const ccnuma::binding_plan* plan = nullptr;
    bool verbose = false;
    // finalize() runs from libomp's destructor, after libccnuma's statics (the plan among them)
    // are gone: what it prints is kept here, in plain storage.
    char spec[128] = {};
    // Counted only for CCNUMA_OMPT_VERBOSE: shared counters would cost every fork a contended
    // cache line. A binding is a system call; in_place is the cached path.
    std::atomic<unsigned long> bindings{0}, in_place{0}, outside{0}, failures{0};
};

tool_state state;

// Where a task is in the plan, in 64 bits so it fits the runtime's ompt_data_t: the index of its
// slot in plan->threads() and its nesting depth; 0 is the initial task (depth 0, empty path).
// A team the plan has no place for, and everything nested in it, is `outside`.
using position = std::uint64_t;
constexpr position outside = ~position{0};
constexpr position encode(std::size_t slot, std::size_t depth) { return (position{slot} << 8) | depth; }

struct thread_state {
    position current = 0;      // the position of the implicit task this thread runs
    unsigned bound_pu = UINT_MAX;  // where the tool last bound it
};
// Per thread, so a pooled thread that comes back to the same place costs a comparison, not a
// system call, and a thread knows its own path when it forks (omp_get_ancestor_thread_num()
// semantics, also from inside an explicit task).
thread_local thread_state self;

void count(std::atomic<unsigned long>& counter) {
    if (state.verbose) counter.fetch_add(1, std::memory_order_relaxed);
}

void say(const std::string& line) { std::fprintf(stderr, "ccnuma-ompt: %s\n", line.c_str()); }

// The position of thread `index` of a team forked at `parent`.
position child_of(position parent, unsigned index) {
    if (parent == outside) return outside;
    const std::size_t depth = parent & 0xff;
    if (depth + 1 > ccnuma::binding_spec::max_levels) return outside;
    path_array path{};
    if (depth > 0) {
        const auto& above = state.plan->threads()[parent >> 8].path;
        std::copy(above.begin(), above.begin() + static_cast<std::ptrdiff_t>(depth), path.begin());
    }
    path[depth] = index;
    const ccnuma::thread_slot* slot = state.plan->find(std::span<const unsigned>(path.data(), depth + 1));
    return slot == nullptr ? outside : encode(static_cast<std::size_t>(slot - state.plan->threads().data()), depth + 1);
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel_data, unsigned int, int,
                       const void*) {
    parallel_data->value = self.current;  // the forking thread's position: its team's parent
}

void on_parallel_end(ompt_data_t* parallel_data, ompt_data_t*, int, const void*) {
    self.current = parallel_data->value;  // back in the enclosing team
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t*, unsigned int,
                      unsigned int index, int flags) {
    if (endpoint != ompt_scope_begin || (flags & ompt_task_initial) != 0) return;
    self.current = child_of(parallel_data->value, index);
    if (self.current == outside) {  // a team larger or deeper than the plan: left where it is
        count(state.outside);
        return;
    }
    const unsigned pu = state.plan->threads()[self.current >> 8].pu;
    if (pu == self.bound_pu) {
        count(state.in_place);
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pu, &set);
    if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0) {
        // Said once: a failing binding would otherwise repeat at every fork.
        if (state.failures.fetch_add(1, std::memory_order_relaxed) == 0)
            say("binding a thread to PU " + std::to_string(pu) + " failed (error " + std::to_string(rc) +
                "); threads that cannot be bound are left where they are");
        return;
    }
    self.bound_pu = pu;
    count(state.bindings);
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
    const char* verbose = std::getenv("CCNUMA_OMPT_VERBOSE");
    state.verbose = verbose != nullptr && std::string_view(verbose) == "1";
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
        state.plan = &plan;
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
            " threads)");
    return 1;
}

void finalize(ompt_data_t*) {
    if (!state.verbose) return;
    std::fprintf(stderr, "ccnuma-ompt: plan \"%s\": %lu bindings, %lu already in place, %lu outside the plan, %lu failed\n",
                 state.spec, state.bindings.load(), state.in_place.load(), state.outside.load(), state.failures.load());
}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
    static ompt_start_tool_result_t result{&initialize, &finalize, ompt_data_none};
    return &result;
}
