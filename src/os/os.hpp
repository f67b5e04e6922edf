#pragma once
// The OS layer: the only code that makes system calls about NUMA, pages, mappings and thread
// affinity, and the only reader of procfs and sysfs, as hwloc keeps topology-linux.c apart from
// bind.c. One unit per concern: mempolicy.cpp (mbind, set/get_mempolicy), pages.cpp (move_pages,
// pagemap, PAGEMAP_SCAN, kpageflags, smaps, mincore), memory.cpp (mmap, madvise, /proc/self/maps),
// affinity.cpp (sched_{set,get}affinity), procfs.cpp (sizes, THP, numa_balancing, meminfo,
// cpuinfo, cpufreq, rlimits, memory tiers, HMAT access, weighted-interleave weights), process.cpp (another process's /proc files). It passes
// errno and data back and decides nothing: what a policy
// means is placement_internal.hpp's (meaning_of), what a page state is pages/'s. hwloc's own
// calls stay in the topology units, behind hwloc. The part the tools need too is declared in
// <ccnuma/detail/os.hpp>.

#include <ccnuma/detail/os.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccnuma::detail {

// --- sizes and settings (procfs.cpp) ----------------------------------------------------------

/// The kernel's hpage_pmd_size under the sysfs root `sys`: `bytes` where it is a power of two
/// from the base page to 1 GiB; empty where the file is absent (no THP, or a kernel before
/// 4.13), and also where it holds anything else, with `rejected` saying what it held.
struct huge_page_size_read {
    std::optional<std::size_t> bytes;
    std::string rejected;  ///< e.g. `hpage_pmd_size "-1" is not a power of two from 4096 to 1073741824 bytes`
};
huge_page_size_read read_huge_page_size(const std::string& sys = "/sys") noexcept;
/// read_huge_page_size("/sys"), read once.
const huge_page_size_read& huge_page_size_here() noexcept;
/// The PMD size as the kernel tells it (huge_page_size_here().bytes): nullopt where it does not,
/// or tells an unusable value. huge_page_bytes() is the value to place by; this one is for
/// reports, which must not pass a fallback off as read.
std::optional<std::size_t> huge_page_bytes_told() noexcept;
/// A "Node N <key> <value> kB" line of /sys/devices/system/node/node<N>/meminfo in bytes, e.g.
/// key "MemFree" or "MemTotal"; nullopt where the kernel does not say.
std::optional<std::uint64_t> node_meminfo(unsigned node, const char* key) noexcept;
/// The soft RLIMIT_NPROC (`ulimit -u`) where the kernel enforces it on this process: threads
/// count against it, and libomp aborts when it cannot start one. Empty when unlimited, and for
/// root, whom the kernel exempts.
std::optional<std::size_t> thread_rlimit() noexcept;

// --- memory tiers, HMAT and weighted interleave (procfs.cpp) ---------------------------------
// Each reader takes the sysfs root, "/sys" on a live system, so that tests can hand it a fake
// tree. Each returns what the kernel wrote, or nothing where the file is absent or unreadable.

/// /sys/devices/system/node/node<N>/cpulist; nullopt where the node has no such file.
std::optional<std::vector<unsigned>> node_cpus(unsigned node, const std::string& sys = "/sys");
/// The kernel's memory tiers (Linux 6.1): tier id N of /sys/devices/virtual/memory_tiering/
/// memory_tier<N> and the nodes of its nodelist; empty where the kernel has none.
std::vector<std::pair<int, std::vector<unsigned>>> memory_tiers(const std::string& sys = "/sys");
/// /sys/devices/system/node/node<N>/access<K>/initiators: the initiator nodes (its node<M>
/// links) and the {read,write}_{bandwidth,latency} files (MB/s, ns; 0 where a file is absent).
struct node_access_class {
    std::vector<unsigned> initiators;
    std::uint64_t read_bandwidth = 0, write_bandwidth = 0, read_latency = 0, write_latency = 0;
};
std::optional<node_access_class> node_access(unsigned node, unsigned access_class, const std::string& sys = "/sys");
/// The weights of /sys/kernel/mm/mempolicy/weighted_interleave/node<N> (Linux 6.9), node
/// ascending; empty where the kernel has no weighted interleave.
std::vector<std::pair<unsigned, unsigned>> interleave_weights(const std::string& sys = "/sys");
/// /sys/kernel/mm/mempolicy/weighted_interleave/auto (Linux 6.16): true for "Y"/"1", nullopt
/// where the file does not exist.
std::optional<bool> interleave_auto(const std::string& sys = "/sys");
/// /sys/kernel/mm/numa/demotion_enabled (Linux 5.15): nullopt where it does not exist.
std::optional<bool> demotion_enabled(const std::string& sys = "/sys");

// --- the memory-policy calls (mempolicy.cpp) --------------------------------------------------

/// The nodes this process may allocate on right now: get_mempolicy(MPOL_F_MEMS_ALLOWED), or,
/// where the kernel has no such call, its online nodes (/sys/devices/system/node/online, else
/// node 0). Asked live, not snapshotted: a cpuset may change.
std::vector<unsigned> allowed_memory_nodes();
/// Whether the memory-policy calls exist here.
bool has_mempolicy() noexcept;
/// mbind(2) of a page-aligned range; nodes empty means MPOL_DEFAULT. Returns errno or 0.
int mbind_range(void* addr, std::size_t len, int mode, const std::vector<unsigned>& nodes, unsigned flags);
/// set_mempolicy(2) of the calling thread; nodes empty for modes without nodes. Returns errno or 0.
int set_thread_policy(int mode, const std::vector<unsigned>& nodes);
/// get_mempolicy(2) of the calling thread: mode and nodes. Returns errno or 0.
int get_thread_policy(int& mode, std::vector<unsigned>& nodes);
/// get_mempolicy(2) with MPOL_F_NODE alone: under an interleaving policy of the calling
/// thread, the node its next interleaved allocation without an address takes (the kernel's own
/// counter, numactl's "interleavenode"). Returns errno (EINVAL under any other policy) or 0.
int next_interleave_node(int& node);

// --- pages (pages.cpp) ------------------------------------------------------------------------

/// Whether move_pages exists here (a query of zero pages succeeds).
bool has_move_pages() noexcept;
/// move_pages(2) of the calling process. Without targets (`to` null) it queries: status[i] is
/// the node of page i, or a negative errno. With targets it moves: status[i] is the node of a
/// page the kernel queued or found in place, or the negative errno that kept it from queueing
/// it (-EACCES shared with another process, -EBUSY not isolatable...). The kernel's positive
/// return, stored in `not_migrated` where given, counts the pages whose migration failed plus
/// the rest of the call, which the kernel then abandons; it leaves their status unwritten
/// (Linux >= 4.17). Returns errno or 0.
/// `pid` 0 is the calling process; another's needs the rights ptrace's PTRACE_MODE_READ_REALCREDS
/// check grants (to query), PTRACE_MODE_ATTACH (to move).
int move_pages(std::size_t count, void** pages, const int* to, int* status, int flags,
               std::size_t* not_migrated = nullptr, pid_t pid = 0);

/// mincore(2) over `count` pages from the page-aligned `first`: 0 where all are mapped, ENOMEM
/// where part of the range is not (the check move_pages lacks: it reports unmapped and
/// untouched pages alike), else errno. In batches, so a huge bogus range costs no huge buffer.
int pages_mapped(std::uintptr_t first, std::size_t count) noexcept;

/// /proc/self/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
inline constexpr std::uint64_t pagemap_present = std::uint64_t{1} << 63;
inline constexpr std::uint64_t pagemap_pfn_mask = (std::uint64_t{1} << 55) - 1;  // bits 0-54: the frame
inline constexpr std::uint64_t pagemap_swapped = std::uint64_t{1} << 62;
inline constexpr std::uint64_t pagemap_exclusive = std::uint64_t{1} << 56;  // Linux >= 4.2
/// Bits 0-4 of a swap entry: its swap type (area), where PFNs are visible.
inline constexpr std::uint64_t pagemap_swap_type_mask = 0x1f;

/// What this kernel lets a process read about its page tables, probed once on a page of the
/// prober's own stack, which is always present.
struct page_table_access {
    bool pagemap = false;       ///< /proc/self/pagemap is readable
    bool pfn_visible = false;   ///< PFNs read as non-zero (CAP_SYS_ADMIN, Linux >= 4.2)
    bool pagemap_scan = false;  ///< the PAGEMAP_SCAN ioctl (Linux 6.7)
    bool kpageflags = false;    ///< /proc/kpageflags is readable
};
page_table_access probe_page_tables() noexcept;

/// The pagemap entries of `count` pages from the page-aligned `first` (of process `pid`, 0 for
/// the calling one). Returns errno or 0.
int read_pagemap(std::uintptr_t first, std::size_t count, std::uint64_t* entries, pid_t pid = 0) noexcept;
/// The frame number of the shared zero page, read from a page of the caller's own that it only
/// read; nullopt where PFNs are hidden (no CAP_SYS_ADMIN) or no pagemap.
std::optional<std::uint64_t> zero_page_pfn() noexcept;
/// The PAGEMAP_SCAN categories (Linux 6.7, include/uapi/linux/fs.h) that reports ask for.
inline constexpr std::uint64_t pagemap_scan_pfnzero = 1u << 5;
inline constexpr std::uint64_t pagemap_scan_huge = 1u << 6;
/// PAGEMAP_SCAN over [first, end) of process `pid` (0: the caller): `region(start, end,
/// categories)` for every run of pages with any of `categories`. Returns errno or 0 (ENOTTY
/// before Linux 6.7).
int pagemap_scan(pid_t pid, std::uintptr_t first, std::uintptr_t end, std::uint64_t categories,
                 const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& region);

/// Per page: on the zero page, huge, and whether "huge" is known at all.
struct page_flags {
    std::vector<unsigned char> zero, huge, huge_known;
};
/// The page flags from PAGEMAP_SCAN: exact for every page. Returns errno or 0.
int page_flags_from_pagemap_scan(std::uintptr_t first, std::size_t count, page_flags& f);
/// The page flags from /proc/kpageflags, by the PFNs of the pagemap `entries`; a page whose
/// frame cannot be read stays unknown.
void page_flags_from_kpageflags(const std::vector<std::uint64_t>& entries, page_flags& f);
/// The page flags from /proc/self/smaps, which says per mapping how much of it is huge: exact
/// where a mapping has no huge page or is hugetlb, unknown for present pages in between.
void page_flags_from_smaps(const std::vector<std::uint64_t>& entries, std::uintptr_t first, page_flags& f);
/// The number of active swap areas (/proc/swaps): a swap entry of a higher type is a migration
/// (or other non-swap) entry.
std::size_t swap_areas();

// --- mappings (memory.cpp) --------------------------------------------------------------------

/// madvise(MADV_POPULATE_WRITE) (Linux 5.14): write-faults the range in. Returns errno or 0.
int populate_write(void* addr, std::size_t bytes) noexcept;
/// Whether [begin, end) is covered by mappings without a gap, each writable where `writable`,
/// by /proc/self/maps; nullopt where that cannot be read (no procfs).
std::optional<bool> maps_cover(std::uintptr_t begin, std::uintptr_t end, bool writable) noexcept;
/// The parts of [begin, end) in mappings advised MADV_NOHUGEPAGE ("nh" in the VmFlags of
/// /proc/self/smaps), in address order; nullopt where smaps cannot be read.
std::optional<std::vector<std::pair<std::uintptr_t, std::uintptr_t>>> no_huge_ranges(std::uintptr_t begin,
                                                                                      std::uintptr_t end);

// --- another process (process.cpp) -----------------------------------------------------------
// The readers take a PID (and a TID, 0 for the process) and return errno or 0; the parsers take
// the text, truncated or hostile, and keep what they can read (tests/fuzz has one target each).

/// The fields of /proc/PID/stat (or task/TID/stat) that observing a process needs.
struct stat_fields {
    std::string comm;
    char state = '?';
    std::uint64_t flags = 0;       ///< field 9: PF_* (PF_KTHREAD 0x00200000)
    std::int64_t num_threads = 0;  ///< field 20
    std::uint64_t start_time = 0;  ///< field 22: clock ticks after boot
    int processor = -1;            ///< field 39: the CPU it last ran on
};
std::optional<stat_fields> parse_stat(std::string_view text);
/// One line of /proc/PID/maps.
struct maps_line {
    std::uintptr_t start = 0, end = 0;
    std::string perms;  ///< "rw-p", "r--s"
    std::string path;   ///< unescaped; "[heap]", "[stack]", "" for anonymous memory
};
std::vector<maps_line> parse_maps(std::string_view text);
/// One line of /proc/PID/numa_maps.
struct numa_maps_line {
    std::uintptr_t start = 0;
    std::string policy;  ///< as the kernel writes it: "default", "interleave:0-3", "weighted interleave:0-1"
    std::string file;    ///< file=, unescaped
    bool heap = false, stack = false, huge = false;
    std::vector<std::pair<unsigned, std::uint64_t>> nodes;  ///< N<node>=<pages>, in kernel pages
    std::uint64_t kernel_page_kb = 0, anon = 0, mapped = 0;
};
std::vector<numa_maps_line> parse_numa_maps(std::string_view text);
/// The NUMA-balancing lines of /proc/PID/task/TID/sched; has_numa false where there are none.
struct sched_numa {
    bool has_numa = false;
    std::optional<int> preferred_node;
    std::optional<std::uint64_t> pages_migrated;
    std::vector<std::pair<unsigned, std::uint64_t>> faults;  ///< task_private + task_shared per node
};
sched_numa parse_sched(std::string_view text);
/// The value of a "<key> <value>" line of /proc/vmstat.
std::optional<std::uint64_t> parse_vmstat(std::string_view text, std::string_view key);
/// The Cpus_allowed_list of a /proc/PID/status.
std::optional<std::vector<unsigned>> parse_status_cpus(std::string_view text);

/// The whole of /proc/PID/<file> (tid > 0: /proc/PID/task/TID/<file>); pid 0: `file` is a path.
int read_proc_text(pid_t pid, pid_t tid, const char* file, std::string& out) noexcept;
/// The TIDs of /proc/PID/task, ascending.
int list_tasks(pid_t pid, std::vector<pid_t>& out) noexcept;
/// /sys/devices/system/node/online; {0} where the kernel has no NUMA.
std::vector<unsigned> online_nodes();
/// /proc/sys/kernel/yama/ptrace_scope; nullopt without Yama.
std::optional<int> ptrace_scope() noexcept;
/// The user that owns process `pid` (the owner of /proc/PID); nullopt where it is gone.
std::optional<unsigned> process_uid(pid_t pid) noexcept;

}  // namespace ccnuma::detail
