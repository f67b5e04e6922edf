// Realizing a plan inside the process (binding.hpp, last stage; binding_spec.cpp parses the
// spec, binding_plan.cpp makes the plan): the process-wide plan, bind_this_thread() and the
// binding check that runs inside the threads.

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/binding_stats.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>

#include "os/os.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <climits>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

namespace ccnuma {

namespace {

struct plan_registry {
    std::mutex mutex;
    // Every installed plan stays alive, so references returned by current_plan() never dangle.
    std::deque<binding_plan> plans;
    bool environment_read = false;
    // 0 while no plan is installed; bumped by every install so thread caches notice.
    std::atomic<std::uint64_t> generation{0};
};

plan_registry& registry() {
    static plan_registry r;
    return r;
}

std::atomic<std::uint64_t> syscall_count{0};

const binding_plan& install(plan_registry& r, binding_plan plan) {
    r.plans.push_back(std::move(plan));
    r.generation.fetch_add(1, std::memory_order_release);
    return r.plans.back();
}

const binding_plan& current_locked(plan_registry& r) {
    static const binding_plan empty;
    if (r.plans.empty() && !r.environment_read) {
        const binding_spec spec = binding_spec::from_environment();
        r.environment_read = true;
        if (!spec.empty()) {
            plan_options options;
            const char* over = std::getenv("CCNUMA_OVERSUBSCRIBE");
            options.oversubscribe = over != nullptr && std::string_view(over) == "1";
            try {
                return install(r, make_plan(topology::current(), spec, options));
            } catch (...) {
                r.environment_read = false;  // report the same error on the next call too
                throw;
            }
        }
    }
    return r.plans.empty() ? empty : r.plans.back();
}

struct thread_cache {
    std::uint64_t generation = 0;
    int depth = -1;
    std::array<unsigned, binding_spec::max_levels + 1> path{};
    unsigned pu = 0;
};
thread_local thread_cache cache;

int current_path(std::array<unsigned, binding_spec::max_levels + 1>& path) {
    const int level = omp_get_level();
    const int depth = std::min<int>(level, static_cast<int>(path.size()));
    for (int l = 1; l <= depth; ++l) path[static_cast<std::size_t>(l - 1)] = static_cast<unsigned>(omp_get_ancestor_thread_num(l));
    return depth;
}

}  // namespace

namespace detail {
std::uint64_t bind_syscalls() noexcept { return syscall_count.load(std::memory_order_relaxed); }
}  // namespace detail

void set_nesting_info(std::string_view text, const plan_options& options) {
    binding_plan plan = make_plan(topology::current(), binding_spec::parse(text), options);
    const auto levels = static_cast<int>(plan.levels());
    const auto outer = static_cast<int>(plan.team_size(1));
    {
        auto& r = registry();
        std::lock_guard lock(r.mutex);
        install(r, std::move(plan));
    }
    omp_set_max_active_levels(levels);
    omp_set_num_threads(outer);
}

const binding_plan& current_plan() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    return current_locked(r);
}

int pin_this_thread(unsigned pu) noexcept {
    syscall_count.fetch_add(1, std::memory_order_relaxed);
    return detail::set_this_thread_cpus(std::span<const unsigned>(&pu, 1));
}

std::optional<unsigned> pin_this_thread(const binding_plan& plan, std::span<const unsigned> path) {
    const thread_slot* slot = plan.find(path);
    if (slot == nullptr) return std::nullopt;
    if (const int rc = pin_this_thread(slot->pu); rc != 0)
        detail::throw_system_error(rc, "pin_this_thread: binding a thread to PU " + std::to_string(slot->pu));
    return slot->pu;
}

unsigned bind_this_thread() {
    auto& r = registry();
    std::array<unsigned, binding_spec::max_levels + 1> path{};
    const int depth = current_path(path);
    const std::uint64_t generation = r.generation.load(std::memory_order_acquire);
    if (generation != 0 && cache.generation == generation && cache.depth == depth &&
        std::equal(path.begin(), path.begin() + depth, cache.path.begin()))
        return cache.pu;

    const binding_plan* plan = nullptr;
    std::uint64_t plan_generation = 0;
    {
        std::lock_guard lock(r.mutex);
        plan = &current_locked(r);
        plan_generation = r.generation.load(std::memory_order_relaxed);
    }
    std::string p;
    for (int i = 0; i < depth; ++i) p += (i ? "," : "") + std::to_string(path[static_cast<std::size_t>(i)]);
    if (plan->empty())
        detail::throw_error(errc::invalid_argument, "bind_this_thread: no binding plan is set (set CCNUMA_BIND, "
                                                    "e.g. CCNUMA_BIND=4,scatter, or call ccnuma::set_nesting_info)");
    const thread_slot* slot = plan->find(std::span<const unsigned>(path.data(), static_cast<std::size_t>(depth)));
    if (slot == nullptr)
        detail::throw_error(errc::invalid_argument,
                            "bind_this_thread: thread path (" + p + ") is outside binding plan \"" +
                                plan->spec().to_string() + "\"; open teams of the planned sizes (" +
                                "num_threads(ccnuma::current_plan().team_size(level)))");
    if (!topology::current().is_this_system())
        detail::throw_error(errc::not_supported, "bind_this_thread: the topology is " +
                                                     detail::quote(topology::current().description()) +
                                                     " (CCNUMA_TOPOLOGY), not this machine; unset "
                                                     "CCNUMA_TOPOLOGY to bind threads");
    if (const int rc = pin_this_thread(slot->pu); rc != 0)
        detail::throw_system_error(rc, "bind_this_thread: binding thread (" + p + ") to PU " +
                                           std::to_string(slot->pu));
    cache.generation = plan_generation;
    cache.depth = depth;
    std::copy(path.begin(), path.begin() + depth, cache.path.begin());
    cache.pu = slot->pu;
    return slot->pu;
}

namespace {

struct report_state {
    const binding_plan& plan;
    const report_options& options;
    std::vector<thread_binding> results;
    std::vector<char> seen;
    detail::first_exception carried;

    void record() noexcept {
        carried.run([&] {
            std::array<unsigned, binding_spec::max_levels + 1> path{};
            const int depth = current_path(path);
            const std::span<const unsigned> p(path.data(), static_cast<std::size_t>(depth));
            const thread_slot* slot = plan.find(p);
            if (slot == nullptr) return;
            if (options.bind_first) bind_this_thread();
            const auto index = static_cast<std::size_t>(slot - plan.threads().data());
            thread_binding& out = results[index];
            out.cpu = detail::current_cpu();
            out.allowed = detail::this_thread_cpus();
            out.ok = out.cpu == static_cast<int>(slot->pu) && out.allowed.size() == 1 && out.allowed[0] == slot->pu;
            seen[index] = 1;
        });
    }

    void region(std::size_t level) noexcept {
        // The plan's own size for this level, not a schedule's: checked once for the whole plan
        // in report_binding.
        detail::fork_team(static_cast<int>(plan.team_size(level)), [&] {
            if (level < plan.levels())
                region(level + 1);
            else
                record();
        });
    }
};

}  // namespace

binding_report report_binding(const report_options& options) {
    const binding_plan& plan = current_plan();
    if (plan.empty())
        detail::throw_error(errc::invalid_argument, "report_binding: no binding plan is set (set CCNUMA_BIND or "
                                                    "call ccnuma::set_nesting_info)");
    // Every thread of the plan runs at once (nested teams), so the plan passes the check of a
    // team of that size: an oversubscribed 50000-thread plan made libgomp exit the process.
    (void)detail::team_size(schedule{0, static_cast<unsigned>(std::min<std::size_t>(plan.size(), UINT_MAX))},
                            "report_binding of a plan of " + std::to_string(plan.size()) + " threads");
    report_state state{plan, options, {}, std::vector<char>(plan.size(), 0), {}};
    state.results.reserve(plan.size());
    for (const auto& t : plan.threads()) state.results.push_back({t.path, t.pu, -1, {}, false});

    const int saved_levels = omp_get_max_active_levels();
    omp_set_max_active_levels(static_cast<int>(plan.levels()));
    state.region(1);
    omp_set_max_active_levels(saved_levels);
    state.carried.rethrow();

    binding_report check;
    check.threads = std::move(state.results);
    for (const auto& t : check.threads)
        if (!t.ok) ++check.mismatches;
    return check;
}

std::string binding_report::to_text() const {
    std::string out;
    const auto pad = [](std::string s, std::size_t w) {
        if (s.size() < w) s.append(w - s.size(), ' ');
        return s;
    };
    out += pad("path", 10) + pad("planned", 9) + pad("cpu", 6) + "mask\n";
    std::size_t ok_count = 0;
    for (const auto& t : threads) {
        std::string p = "(";
        for (std::size_t i = 0; i < t.path.size(); ++i) p += (i ? "," : "") + std::to_string(t.path[i]);
        p += ")";
        out += pad(p, 10) + pad(std::to_string(t.planned_pu), 9) +
               pad(t.cpu < 0 ? "-" : std::to_string(t.cpu), 6) +
               pad(t.allowed.empty() ? "-" : format_list(t.allowed), 12) +
               (t.ok ? "ok" : t.cpu < 0 ? "MISSING (thread did not run)" : "MISMATCH") + "\n";
        if (t.ok) ++ok_count;
    }
    out += std::to_string(threads.size()) + " threads, " + std::to_string(ok_count) + " on their planned PU, " +
           std::to_string(mismatches) + " mismatch(es)\n";
    return out;
}

}  // namespace ccnuma
