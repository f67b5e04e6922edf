// process_observer and watch(): a series of snapshots of one process, each with its deltas to the
// previous one. The start time of the process is checked at every sample, so that a reused PID
// ends the series instead of joining it.

#include "process_internal.hpp"

#include "../os/os.hpp"

#include <ccnuma/detail/throw_error.hpp>

#include <algorithm>
#include <map>
#include <thread>

namespace ccnuma {

namespace {

std::optional<std::uint64_t> vmstat_migrated() {
    std::string text;
    if (detail::read_proc_text(0, 0, "/proc/vmstat", text) != 0) return std::nullopt;
    return detail::parse_vmstat(text, "numa_pages_migrated");
}

std::optional<double> fault_share(const process_snapshot& s) {
    std::uint64_t local = 0, total = 0;
    for (const auto& t : s.threads) {
        for (const auto f : t.faults) total += f;
        if (t.node >= 0 && static_cast<std::size_t>(t.node) < t.faults.size()) local += t.faults[static_cast<std::size_t>(t.node)];
    }
    if (total == 0) return std::nullopt;
    return static_cast<double>(local) / static_cast<double>(total);
}

}  // namespace

process_observer::process_observer(pid_t pid, observe_options options) : pid_(pid), options_(options) {
    const std::string what = "observe of PID " + std::to_string(pid);
    if (pid <= 0)
        detail::throw_error(errc::invalid_argument, what + ": not a process ID (expected a positive PID of a running process)");
    std::string text;
    if (const int err = detail::read_proc_text(pid, 0, "stat", text)) {
        if (err == ENOENT || err == ESRCH)
            detail::throw_error(errc::invalid_argument, what + ": no such process (expected the PID of a running process)");
        detail::throw_system_error(err, what + ": reading /proc/" + std::to_string(pid) + "/stat failed");
    }
    if (const auto st = detail::parse_stat(text)) start_time_ = st->start_time;
}

sample_status process_observer::sample() {
    if (status_ != sample_status::ok) return status_;
    process_sample next;
    detail::read_end end = detail::read_end::complete;
    try {
        end = detail::observe_into(pid_, options_, next.snapshot);
    } catch (const error& e) {
        // Gone between two samples: the natural end of a series. Anything else (rights) is the
        // caller's to see.
        if (e.code() != errc::invalid_argument || count_ == 0) throw;
        return status_ = sample_status::exited;
    }
    if (end == detail::read_end::reused || (start_time_ && next.snapshot.start_time != *start_time_))
        return status_ = sample_status::pid_reused;
    if (next.snapshot.state == 'Z' || next.snapshot.state == 'X') return status_ = sample_status::exited;
    // A process that exited while it was read is no later state of the program (its memory may
    // read empty): the series ends with the sample before. A first sample stands, with its note.
    if (end == detail::read_end::exited && count_ != 0) return status_ = sample_status::exited;
    const auto now = std::chrono::steady_clock::now();
    if (count_ == 0) first_time_ = now;
    next.seconds = std::chrono::duration<double>(now - first_time_).count();
    const auto migrated = vmstat_migrated();
    if (migrated && vmstat_prev_ && *migrated >= *vmstat_prev_) next.vmstat_pages_migrated = *migrated - *vmstat_prev_;
    if (migrated) vmstat_prev_ = migrated;
    next.local_fault_share = fault_share(next.snapshot);

    std::map<pid_t, const thread_info*> before;
    if (last_)
        for (const auto& t : last_->snapshot.threads) before.emplace(t.tid, &t);
    for (const auto& t : next.snapshot.threads) {
        const auto it = before.find(t.tid);
        if (it == before.end()) {
            if (last_) next.started.push_back(t.tid);
            continue;
        }
        const thread_info& was = *it->second;
        if (was.node >= 0 && t.node >= 0 && was.node != t.node) next.moved.push_back({t.tid, was.node, t.node});
        if (was.pages_migrated && t.pages_migrated && *t.pages_migrated >= *was.pages_migrated)
            next.thread_pages_migrated.emplace_back(t.tid, *t.pages_migrated - *was.pages_migrated);
        before.erase(it);
    }
    if (last_)
        for (const auto& [tid, t] : before) next.ended.push_back(tid);

    summary_.samples = ++count_;
    summary_.seconds = next.seconds;
    summary_.numa_balancing = next.snapshot.numa_balancing;
    summary_.node_count = next.snapshot.nodes.size();
    summary_.vmstat_pages_migrated += next.vmstat_pages_migrated;
    for (const auto& [tid, n] : next.thread_pages_migrated) summary_.thread_pages_migrated += n;
    summary_.moves.insert(summary_.moves.end(), next.moved.begin(), next.moved.end());
    summary_.threads_started += next.started.size();
    summary_.threads_ended += next.ended.size();
    if (next.local_fault_share) {
        if (!summary_.first_share) summary_.first_share = next.local_fault_share;
        summary_.last_share = next.local_fault_share;
    }
    last_ = std::move(next);
    return sample_status::ok;
}

const process_sample& process_observer::last() const {
    if (!last_)
        detail::throw_error(errc::invalid_argument, "process_observer::last of PID " + std::to_string(pid_) +
                                                        ": no sample yet (expected a call of sample() first)");
    return *last_;
}

std::vector<verdict> process_observer::verdicts() const {
    auto out = detail::judge_series(summary_);
    if (last_) out.insert(out.end(), last_->snapshot.verdicts.begin(), last_->snapshot.verdicts.end());
    return out;
}

sample_status watch(pid_t pid, std::chrono::milliseconds interval, std::size_t count,
                    const std::function<bool(const process_observer&)>& on_sample, const observe_options& options) {
    process_observer o(pid, options);
    // Samples start every `interval`, whatever one costs, so that the series has its rate.
    auto next = std::chrono::steady_clock::now();
    for (;;) {
        const auto status = o.sample();
        if (status != sample_status::ok) return status;
        if (on_sample && !on_sample(o)) return status;
        if (count != 0 && o.count() >= count) return status;
        next += interval;
        std::this_thread::sleep_until(std::max(next, std::chrono::steady_clock::now()));
    }
}

}  // namespace ccnuma
