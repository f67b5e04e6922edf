// What a snapshot and a series mean: each verdict names its subject and figures, says what the
// lecture says to do (identify the problem, then parallel first touch; NUMA balancing is slow and
// not to be relied on), and says so where the evidence cannot tell.

#include "process_internal.hpp"

#include "../os/os.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/list.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace ccnuma::detail {

namespace {

// A region counts as large enough to judge from 1 MiB resident: below that, where it is cannot
// matter to bandwidth.
constexpr std::size_t judged_bytes = std::size_t{1} << 20;
// "At least 90% on one node" is the threshold for a one-node region.
constexpr double one_node_share = 0.9;
constexpr std::size_t zero_array_bytes = std::size_t{16} << 20;
constexpr std::uint64_t min_faults = 100;  // fewer hinting faults say nothing yet

std::string percent(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
    return buf;
}

bool private_data(region_kind k) { return k == region_kind::anon || k == region_kind::heap || k == region_kind::stack; }

std::string nodes_text(const std::set<unsigned>& nodes) {
    const std::vector<unsigned> v(nodes.begin(), nodes.end());
    return (v.size() == 1 ? "node " : "nodes ") + format_list(v);
}

}  // namespace

void judge_snapshot(process_snapshot& s) {
    auto& out = s.verdicts;
    if (s.kernel_thread) {
        out.push_back({"kernel_thread", "process",
                       "PID " + std::to_string(s.pid) + " (" + s.command +
                           ") is a kernel thread: it has no user memory, so there is no placement to judge"});
        return;
    }
    if (s.state == 'Z' || s.state == 'X') {
        out.push_back({"zombie", "process",
                       "PID " + std::to_string(s.pid) + " (" + s.command +
                           ") has exited (a zombie): it holds no memory and runs no thread; observe it while it runs"});
        return;
    }
    const std::size_t page = s.regions.empty() ? 4096 : s.regions.front().page_size;

    // Zero pages matter on any machine: a benchmark that only reads them measures nothing.
    for (const auto& r : s.regions) {
        if (!private_data(r.kind) || !r.zero_pages) continue;
        const std::size_t zero = *r.zero_pages, resident = r.resident();
        // Half the region, or an array's worth inside it: the kernel merges adjacent mappings, so
        // a calloc'ed array often shares one region with arrays that were written.
        if (zero * page < judged_bytes || (zero * 2 < zero + resident && zero * page < zero_array_bytes)) continue;
        out.push_back({"zero_page", region_subject(r),
                       std::to_string(zero) + " of its " + std::to_string(zero + resident) + " pages with a frame (" +
                           percent(static_cast<double>(zero) / static_cast<double>(zero + resident)) + ", " +
                           human_bytes(zero * page) +
                           ") are the shared zero page: read, never written (the calloc trap). Reading them moves no "
                           "data from memory, so a benchmark that reads them measures the cache, and the pages get their "
                           "node only at the first write. Initialise it with a parallel write (first touch) before "
                           "timing."});
    }

    if (s.nodes.size() <= 1) {
        out.push_back({"single_node", "process",
                       "this machine has one NUMA node (" + nodes_text({s.nodes.begin(), s.nodes.end()}) +
                           "): every page is local to every thread, so placement cannot matter here; observe the "
                           "program on a machine with several nodes, or in ccnuma-vm"});
        return;
    }

    std::set<unsigned> ran_on;
    for (const auto& t : s.threads)
        if (t.node >= 0) ran_on.insert(static_cast<unsigned>(t.node));

    for (const auto& r : s.regions) {
        if (!private_data(r.kind)) continue;
        const std::size_t resident = r.resident();
        if (resident * r.page_size < judged_bytes) continue;
        const auto top = std::max_element(r.pages.begin(), r.pages.end());
        const auto node = static_cast<unsigned>(top - r.pages.begin());
        const double share = static_cast<double>(*top) / static_cast<double>(resident);
        if (share < one_node_share) continue;
        const std::string where = percent(share) + " of its " + std::to_string(resident) + " resident pages are on node " +
                                  std::to_string(node);
        if (ran_on.size() >= 2) {
            std::set<unsigned> others = ran_on;
            others.erase(node);
            std::string cause = "This is what a serial first touch gives (one thread initialised it), or a memory "
                                "binding (numactl -m, ccnuma-run -m). Initialise it in parallel with the same static "
                                "schedule as the loops that use it (parallel first touch); to test whether placement "
                                "matters at all, run with numactl --interleave=all (ccnuma-run -i all).";
            if (r.policy.rfind("bind", 0) == 0 || r.policy.rfind("prefer", 0) == 0)
                cause = "Its policy is " + r.policy + ": the binding put it there, not the first touch; bind it to the "
                        "nodes its threads run on, or interleave it.";
            out.push_back({"serial_first_touch", region_subject(r),
                           where + " while the process's threads last ran on " + nodes_text(ran_on) +
                               ": the threads on " + nodes_text(others) +
                               " reach it remotely, if they use it (a snapshot cannot tell which thread uses which "
                               "part). " +
                               cause});
        } else if (ran_on.size() == 1 && *ran_on.begin() != node) {
            out.push_back({"remote_region", region_subject(r),
                           where + ", while every thread last ran on node " + std::to_string(*ran_on.begin()) +
                               ": every access to it is remote. Run the threads where the memory is, or bind both "
                               "together (numactl -N " +
                               std::to_string(node) + " -m " + std::to_string(node) + ", ccnuma-run)."});
        }
    }

    // Threads the scheduler may move away from their pages.
    std::size_t unbound = 0;
    std::set<unsigned> unbound_nodes;
    for (const auto& t : s.threads)
        if (t.allowed_nodes.size() > 1) {
            ++unbound;
            unbound_nodes.insert(t.allowed_nodes.begin(), t.allowed_nodes.end());
        }
    if (unbound > 0)
        out.push_back({"unbound_threads", "process",
                       std::to_string(unbound) + " of " + std::to_string(s.threads.size()) +
                           " threads may run on " + nodes_text(unbound_nodes) +
                           " (not bound to one node): the scheduler may move them away from the pages they first "
                           "touched. Bind them: OMP_PROC_BIND=close or spread with OMP_PLACES=cores, or ccnuma-run "
                           "--bind."});

    for (const auto& t : s.threads) {
        if (t.balancing != balancing_stats::available) continue;
        std::uint64_t total = 0;
        for (const auto f : t.faults) total += f;
        const auto local = t.local_fault_share();
        if (total < min_faults || !local || *local >= 0.5) continue;
        out.push_back({"remote_faults", "thread " + std::to_string(t.tid) + " (" + t.name + ")",
                       percent(*local) + " of its " + std::to_string(total) +
                           " recent NUMA hinting faults were on pages of its own node " + std::to_string(t.node) +
                           ": most of its sampled accesses are remote. NUMA balancing may migrate its pages (slowly); "
                           "do not rely on it: bind the thread and place its data by parallel first touch."});
    }

    if (!s.numa_balancing)
        out.push_back({"balancing_off", "process",
                       "this kernel has no NUMA balancing (no /proc/sys/kernel/numa_balancing): pages stay where first "
                       "touch put them, and there are no hinting faults to show each thread's access locality"});
    else if ((*s.numa_balancing & 1) == 0)
        out.push_back({"balancing_off", "process",
                       "NUMA balancing is off (kernel.numa_balancing = " + std::to_string(*s.numa_balancing) +
                           "): pages stay where first touch put them, and there are no hinting faults to show each "
                           "thread's access locality (echo 1 > /proc/sys/kernel/numa_balancing turns it on)"});
}

std::vector<verdict> judge_series(const series_summary& s) {
    std::vector<verdict> out;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f s", s.seconds);
    const std::string over = std::to_string(s.samples) + " samples over " + secs;
    if (s.samples < 2) {
        out.push_back({"series", "process", "one sample only: nothing over time can be told"});
        return out;
    }
    if (s.vmstat_pages_migrated > 0)
        out.push_back({"pages_migrated", "machine",
                       std::to_string(s.vmstat_pages_migrated) + " pages (" +
                           human_bytes(s.vmstat_pages_migrated * page_bytes()) +
                           ") were migrated by NUMA balancing on the whole machine in " + over +
                           " (/proc/vmstat numa_pages_migrated, all processes); this process's threads account for " +
                           std::to_string(s.thread_pages_migrated) +
                           " (their numa_pages_migrated). Balancing is moving pages to where they are used: it heals "
                           "a bad placement slowly, over tens of seconds. Do not rely on it: parallel first touch."});
    else if (s.numa_balancing && (*s.numa_balancing & 1))
        out.push_back({"pages_migrated", "machine", "no page was migrated by NUMA balancing in " + over});
    if (!s.moves.empty()) {
        std::set<pid_t> tids;
        std::string list;
        for (const auto& m : s.moves) {
            tids.insert(m.tid);
            if (list.size() < 200)
                list += (list.empty() ? "" : ", ") + std::to_string(m.tid) + ": node " + std::to_string(m.from) + " to " +
                        std::to_string(m.to);
        }
        out.push_back({"threads_moved", "process",
                       std::to_string(tids.size()) + " threads moved between nodes in " + over + " (" + list +
                           "): their pages stay behind, remote. Bind them: OMP_PROC_BIND with OMP_PLACES, or "
                           "ccnuma-run --bind."});
    } else if (s.node_count > 1) {
        out.push_back({"threads_moved", "process", "no thread moved between nodes in " + over});
    }
    if (s.first_share && s.last_share) {
        const double d = *s.last_share - *s.first_share;
        if (d >= 0.1)
            out.push_back({"local_share_rising", "process",
                           "the local share of the threads' NUMA hinting faults rose from " + percent(*s.first_share) +
                               " to " + percent(*s.last_share) + " in " + over +
                               ": NUMA balancing is moving pages (or threads) to where they are used, the lecture's "
                               "Jacobi riddle. It is slow and not a fix: place the data by parallel first touch."});
        else if (d <= -0.1)
            out.push_back({"local_share_falling", "process",
                           "the local share of the threads' NUMA hinting faults fell from " + percent(*s.first_share) +
                               " to " + percent(*s.last_share) + " in " + over +
                               ": threads moved away from their pages, or a new phase uses other data"});
    } else if (s.node_count > 1) {
        out.push_back({"local_share", "process",
                       "no hinting faults were taken in " + over +
                           ", so the local share of accesses cannot be told (NUMA balancing off, or not yet scanning)"});
    }
    return out;
}

}  // namespace ccnuma::detail
