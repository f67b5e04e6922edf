#pragma once
/// @file
/// Observing a running process, any process, unmodified: where its threads run, where its pages
/// live, what that means, and how it changes over time. What `numastat -p`, `/proc/PID/numa_maps`
/// and `/proc/PID/task/*/stat` show, read in one pass, joined and judged. No hardware counters.
///
///     auto s = ccnuma::observe(pid);
///     for (const auto& t : s.threads) std::printf("%d on CPU %d, node %d\n", t.tid, t.cpu, t.node);
///     for (const auto& r : s.regions)
///         std::printf("%s %s: %s\n", ccnuma::to_string(r.kind).data(), r.policy.c_str(), r.layout_text().c_str());
///     for (const auto& v : s.verdicts) std::puts(v.text.c_str());
///
///     ccnuma::process_observer o(pid);             // a series: deltas against the previous sample
///     while (o.sample(std::chrono::seconds(1)) == ccnuma::sample_status::ok) { ... o.last() ... }
///     for (const auto& v : o.verdicts()) std::puts(v.text.c_str());
///
/// The reads are those of the tools named: /proc/PID/{stat,maps,numa_maps}, /proc/PID/task/TID/
/// {stat,status,comm,sched}, /proc/vmstat, and, for the layout along a large region and its
/// zero pages, /proc/PID/pagemap (its PAGEMAP_SCAN ioctl, Linux >= 6.7) and move_pages(2) of the
/// other process without targets. They need the rights `numastat -p` needs: the same user, or
/// CAP_SYS_PTRACE, as the kernel's ptrace access mode check (and Yama's ptrace_scope) decide.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccnuma {

/// What observe() reads beyond per-mapping counts, and how regions are grouped.
struct observe_options {
    /// Regions at least this large (bytes of address space) are listed one by one, with a
    /// layout; smaller ones are summed into one region_kind::other row. 64 MiB by default:
    /// a large array, never a library's text.
    std::size_t min_region_bytes = std::size_t{64} << 20;
    /// List every region, whatever its size (min_region_bytes then only decides the layout).
    bool all_regions = false;
    /// Pages sampled along each listed region for its layout (move_pages of the other process):
    /// one at a pseudo-random place in each of as many equal strata, so that a periodic
    /// placement (interleave) cannot alias with the samples. 0 turns the per-page queries off.
    std::size_t layout_samples = 4096;
    /// Parts the layout of a region is cut into before equal neighbours are merged (20: 5% each).
    unsigned layout_parts = 20;
    /// Count the zero pages and huge pages of each listed region (PAGEMAP_SCAN, or pagemap PFNs
    /// where visible). Off: zero_pages and huge_pages stay unknown.
    bool page_flags = true;
};

/// What a mapping is, from /proc/PID/maps and numa_maps.
enum class region_kind : unsigned char {
    heap,     ///< [heap]: brk memory (small mallocs)
    stack,    ///< [stack] of the main thread
    anon,     ///< private anonymous memory (large mallocs, thread stacks, mmap)
    file,     ///< a private mapping of a file (program text, libraries, data files)
    shared,   ///< MAP_SHARED: shared memory, memfd, a shared file mapping
    huge,     ///< hugetlbfs pages (MAP_HUGETLB): numa_maps counts them in huge pages
    special,  ///< mapped by the kernel: [vdso], [vvar], [vsyscall]
    other,    ///< the sum of the regions smaller than observe_options::min_region_bytes
};
/// "heap", "stack", "anon", "file", "shared", "huge", "special", "other".
std::string_view to_string(region_kind k) noexcept;

/// One stretch of a region's layout: [begin, end) as fractions of the region.
struct layout_span {
    double begin = 0, end = 0;
    /// The node at least 90% of the stretch's sampled resident pages are on, else
    /// layout_span::mixed; layout_span::not_present where most samples have no frame.
    int node = not_present;
    /// The sampled resident pages per node (indexed by node number), for a plot's colours.
    std::vector<std::size_t> samples;
    static constexpr int not_present = -1;  ///< never written, zero page, or swapped out
    static constexpr int mixed = -2;        ///< no node holds 90%: interleaved or scattered
};

/// One mapping, or the sum of the small ones.
struct region_info {
    std::uintptr_t start = 0, end = 0;  ///< addresses; for region_kind::other those of the first and last summed
    region_kind kind = region_kind::anon;
    std::string path;              ///< the file, "[heap]", "[stack]", ...; empty for anonymous memory
    std::string policy = "default";  ///< as numa_maps writes it: "default", "interleave:0-3", "bind:1", "prefer:0", "weighted interleave:0-3"
    std::size_t page_size = 0;     ///< kernelpagesize_kB in bytes: the unit of pages[] (a hugetlb page for kind huge)
    std::vector<std::size_t> pages;  ///< resident pages per node, indexed by node number (numa_maps N<node>=)
    /// Pages mapped to the shared zero page: read, never written. numa_maps does not count them.
    /// nullopt where this kernel and these rights cannot tell (no PAGEMAP_SCAN and PFNs hidden).
    std::optional<std::size_t> zero_pages;
    /// Base pages that are part of a transparent huge page or hugetlb page; nullopt where unknown.
    std::optional<std::size_t> huge_pages;
    std::size_t regions = 1;     ///< how many mappings this row holds (more than 1 only for other)
    std::vector<layout_span> layout;  ///< along the region, in address order; empty where not sampled
    std::size_t size = 0;        ///< bytes of address space: end - start, for other the summed mappings'
    std::size_t bytes() const noexcept { return size; }
    /// Resident pages, all nodes.
    std::size_t resident() const noexcept;
    /// "0-25%: node 0, 25-100%: node 1", "0-100%: mixed", "not sampled".
    std::string layout_text() const;
};

/// Whether a thread's NUMA-balancing statistics exist, and if not, why.
enum class balancing_stats : unsigned char {
    available,     ///< /proc/PID/task/TID/sched has them, and kernel.numa_balancing is on
    off,           ///< the kernel has NUMA balancing, but kernel.numa_balancing is 0: no hinting faults are taken
    not_in_kernel, ///< no CONFIG_NUMA_BALANCING (no /proc/sys/kernel/numa_balancing, no fields in sched)
    unreadable,    ///< /proc/PID/task/TID/sched could not be read (CONFIG_SCHED_DEBUG off, or rights)
};
/// "available", "off (kernel.numa_balancing = 0)", "not in this kernel", "unreadable".
std::string_view to_string(balancing_stats b) noexcept;

/// One thread of the process.
struct thread_info {
    pid_t tid = 0;
    std::string name;             ///< /proc/PID/task/TID/comm
    char state = '?';             ///< R, S, D, Z, ... (stat field 3)
    std::vector<unsigned> allowed;  ///< the CPUs it may run on (Cpus_allowed_list)
    std::vector<unsigned> allowed_nodes;  ///< the nodes of those CPUs
    int cpu = -1;                 ///< the CPU it last ran on (stat field 39)
    int node = -1;                ///< that CPU's node; -1 where unknown
    balancing_stats balancing = balancing_stats::unreadable;
    /// numa_preferred_nid: the node NUMA balancing steers the thread and its pages to; -1 none yet.
    std::optional<int> preferred_node;
    /// The hinting faults on pages of each node (task_private + task_shared of the sched file's
    /// numa_faults lines, which the kernel decays over scan periods), indexed by node number;
    /// empty where balancing is not available.
    std::vector<std::uint64_t> faults;
    /// The thread's numa_pages_migrated: pages NUMA balancing moved for it, since it started.
    std::optional<std::uint64_t> pages_migrated;
    /// Share of faults[] on the thread's current node, nullopt without faults.
    std::optional<double> local_fault_share() const noexcept;
};

/// What one observation concludes, with its figures.
struct verdict {
    /// serial_first_touch, spread_threads, unbound_threads, zero_page, remote_faults,
    /// balancing_off, single_node, kernel_thread, zombie; over a series also pages_migrated,
    /// threads_moved, local_share_rising (docs/tools/ccnuma-ps.md says what each means).
    std::string kind;
    std::string subject;  ///< "region 7f3a00000000 (anon, 512 MiB)", "thread 1234 (a.out)", "process"
    std::string text;     ///< the evidence, and what to do
};

/// One observation of a process.
struct process_snapshot {
    pid_t pid = 0;
    std::string command;        ///< comm of the main thread
    char state = '?';           ///< of the main thread: 'Z' zombie, ...
    bool kernel_thread = false; ///< PF_KTHREAD: it has no user memory
    std::uint64_t start_time = 0;  ///< stat field 22 (clock ticks since boot): tells a reused PID apart
    std::chrono::system_clock::time_point taken;
    std::vector<unsigned> nodes;  ///< the machine's online nodes
    std::optional<int> numa_balancing;  ///< kernel.numa_balancing; nullopt where the kernel has none
    std::vector<thread_info> threads;   ///< by TID
    std::vector<region_info> regions;   ///< by address; region_kind::other last
    /// Bytes resident per node, indexed by node number: the sum over every mapping of its N<node>=
    /// pages times its page size, what `numastat -p` shows (in MiB).
    std::vector<std::uint64_t> node_bytes;
    std::vector<verdict> verdicts;
    /// What could not be read, and why ("the process exited while it was read: threads only").
    std::vector<std::string> notes;
    /// Base pages resident per node (node_bytes / page size).
    std::vector<std::uint64_t> node_pages() const;
    /// numastat-like text: a header line, the threads table, the regions table (a column per
    /// node, zero, huge, policy) with a totals row in MiB as `numastat -p` prints it, the
    /// layout lines, the verdicts and the notes. What `ccnuma-ps PID` prints.
    std::string to_string() const;
};

/// One snapshot of process `pid`.
///
///     auto s = ccnuma::observe(child_pid);
///     std::printf("%zu threads, node 0: %llu bytes\n", s.threads.size(),
///                 static_cast<unsigned long long>(s.node_bytes.at(0)));
///
/// Throws ccnuma::error: errc::invalid_argument for a PID that is not positive or names no
/// process; errc::system where the rights are missing, naming CAP_SYS_PTRACE and
/// /proc/sys/kernel/yama/ptrace_scope. A process that exits while it is read, a zombie and a
/// kernel thread are no errors: the snapshot holds what was read, and notes and verdicts say so.
process_snapshot observe(pid_t pid, const observe_options& options = {});

/// How a sample of a process_observer went.
enum class sample_status : unsigned char {
    ok,        ///< a new sample is last()
    exited,    ///< the process is gone (or a zombie): nothing new; the series so far stands
    pid_reused,  ///< the PID now names another process (its start time differs): nothing new
};

/// One sample of a series, with what changed since the previous one.
struct process_sample {
    process_snapshot snapshot;
    double seconds = 0;  ///< since the first sample
    /// /proc/vmstat numa_pages_migrated since the previous sample: the whole machine's pages
    /// migrated by NUMA balancing (the kernel has no per-process total); 0 for the first.
    std::uint64_t vmstat_pages_migrated = 0;
    /// Per thread, the growth of its numa_pages_migrated since the previous sample, by TID.
    std::vector<std::pair<pid_t, std::uint64_t>> thread_pages_migrated;
    /// Threads whose node differs from the previous sample: (tid, from node, to node).
    struct move {
        pid_t tid;
        int from, to;
    };
    std::vector<move> moved;
    std::vector<pid_t> started, ended;  ///< threads that appeared or went since the previous sample
    /// Share of all threads' hinting faults on the faulting thread's node; nullopt without faults.
    std::optional<double> local_fault_share;
};

namespace detail {
/// What a process_observer keeps of its series for the verdicts over it.
struct series_summary {
    std::size_t samples = 0;
    double seconds = 0;
    std::optional<int> numa_balancing;
    std::size_t node_count = 0;
    std::uint64_t vmstat_pages_migrated = 0;  ///< machine-wide, over the series
    std::uint64_t thread_pages_migrated = 0;  ///< this process's threads, over the series
    std::vector<process_sample::move> moves;
    std::size_t threads_started = 0, threads_ended = 0;
    std::optional<double> first_share, last_share;
};
}  // namespace detail

/// Samples one process over time, keeping the previous sample for the deltas. It stops at the
/// first sample that finds the process gone or its PID reused, and never mixes two processes.
///
///     ccnuma::process_observer o(pid);
///     for (int i = 0; i < 10 && o.sample() == ccnuma::sample_status::ok; ++i) {
///         std::printf("%.0f s: %llu pages migrated\n", o.last().seconds,
///                     static_cast<unsigned long long>(o.last().vmstat_pages_migrated));
///         std::this_thread::sleep_for(std::chrono::seconds(1));
///     }
///     for (const auto& v : o.verdicts()) std::puts(v.text.c_str());
class process_observer {
public:
    /// Throws as observe() does when `pid` cannot be observed at all. Takes no sample yet.
    explicit process_observer(pid_t pid, observe_options options = {});
    /// Takes the next sample. After exited or pid_reused, every later call returns the same.
    sample_status sample();
    /// The latest sample; throws ccnuma::error (errc::invalid_argument) before the first.
    const process_sample& last() const;
    /// Samples taken.
    std::size_t count() const noexcept { return count_; }
    /// The verdicts over the series so far: pages migrated, threads that moved between nodes,
    /// the local share of hinting faults rising; then the last snapshot's own verdicts.
    std::vector<verdict> verdicts() const;
    pid_t pid() const noexcept { return pid_; }

private:
    pid_t pid_;
    observe_options options_;
    std::size_t count_ = 0;
    sample_status status_ = sample_status::ok;
    std::chrono::steady_clock::time_point first_time_{};
    std::optional<std::uint64_t> start_time_, vmstat_prev_;
    std::optional<process_sample> last_;
    detail::series_summary summary_;
};

/// Samples `pid` every `interval` until it exits, its PID is reused, `count` samples were taken
/// (0: no limit) or `on_sample` returns false. Returns how it ended: sample_status::ok when the
/// count was reached or on_sample stopped it. The observer passed to on_sample holds the series.
///
///     ccnuma::watch(pid, std::chrono::seconds(1), 30, [](const ccnuma::process_observer& o) {
///         std::printf("%zu\n", o.last().snapshot.threads.size());
///         return true;
///     });
sample_status watch(pid_t pid, std::chrono::milliseconds interval, std::size_t count,
                    const std::function<bool(const process_observer&)>& on_sample,
                    const observe_options& options = {});

}  // namespace ccnuma
