#pragma once
// How the kernel is asked: the one unit that makes the NUMA system calls (mbind, move_pages,
// get_mempolicy, set_mempolicy) and reads the memory-management files of sysfs and procfs, as
// hwloc keeps topology-linux.c apart from bind.c. What a policy means is decided elsewhere
// (placement_internal.hpp, meaning_of); this unit only passes it on, and returns errno where a
// call fails, so that the caller can say what it was doing.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccnuma::detail {

// --- sizes: the one source of each --------------------------------------------------------

/// The base page size (sysconf(_SC_PAGESIZE)), read once. Public face: support().page_size.
std::size_t page_bytes() noexcept;
/// The huge page size: the PMD size of /sys/kernel/mm/transparent_hugepage/hpage_pmd_size,
/// read once, or 2 MiB where the kernel does not say (no THP). It is the unit a huge-page
/// policy places by. Public face: support().huge_page_size (0 where the kernel does not say).
std::size_t huge_page_bytes() noexcept;
/// The PMD size as the kernel tells it (hpage_pmd_size), read once; nullopt where it does not
/// (no THP, or a kernel before 4.13), so that a report never passes the 2 MiB default off as read.
std::optional<std::size_t> huge_page_bytes_told() noexcept;

// --- transparent huge pages and other settings ----------------------------------------------

/// The active choice of /sys/kernel/mm/transparent_hugepage/<name> ("enabled", "defrag"):
/// "always", "madvise", "never"...; empty where the file cannot be read (no THP).
std::string thp_setting(const char* name) noexcept;
/// The THP mode: thp_setting("enabled").
std::string thp_mode() noexcept;
/// /proc/sys/kernel/numa_balancing; nullopt when the kernel has no NUMA balancing.
std::optional<int> numa_balancing() noexcept;
/// A "Node N <key> <value> kB" line of /sys/devices/system/node/node<N>/meminfo in bytes, e.g.
/// key "MemFree" or "MemTotal"; nullopt where the kernel does not say.
std::optional<std::uint64_t> node_meminfo(unsigned node, const char* key) noexcept;

// --- the memory-policy calls ------------------------------------------------------------------

/// The nodes this process may allocate on right now: get_mempolicy(MPOL_F_MEMS_ALLOWED), or,
/// where the kernel has no such call, its online nodes (/sys/devices/system/node/online, else
/// node 0). Asked live, not snapshotted: a cpuset may change.
std::vector<unsigned> allowed_memory_nodes();
/// Whether the memory-policy calls exist here.
bool has_mempolicy() noexcept;
/// Whether move_pages exists here (a query of zero pages succeeds).
bool has_move_pages() noexcept;

/// mbind(2) of a page-aligned range; nodes empty means MPOL_DEFAULT. Returns errno or 0.
int mbind_range(void* addr, std::size_t len, int mode, const std::vector<unsigned>& nodes, unsigned flags);
/// set_mempolicy(2) of the calling thread; nodes empty for modes without nodes. Returns errno or 0.
int set_thread_policy(int mode, const std::vector<unsigned>& nodes);
/// get_mempolicy(2) of the calling thread: mode and nodes. Returns errno or 0.
int get_thread_policy(int& mode, std::vector<unsigned>& nodes);

/// move_pages(2) of the calling process. Without targets (`to` null) it queries: status[i] is
/// the node of page i, or a negative errno. With targets it moves: status[i] is the node of a
/// page the kernel queued or found in place, or the negative errno that kept it from queueing
/// it (-EACCES shared with another process, -EBUSY not isolatable...). The kernel's positive
/// return, stored in `not_migrated` where given, counts the pages whose migration failed plus
/// the rest of the call, which the kernel then abandons; it leaves their status unwritten
/// (Linux >= 4.17). Returns errno or 0.
int move_pages(std::size_t count, void** pages, const int* to, int* status, int flags,
               std::size_t* not_migrated = nullptr);

/// The soft RLIMIT_NPROC (`ulimit -u`) where the kernel enforces it on this process: threads
/// count against it, and libomp aborts when it cannot start one. Empty when unlimited, and for
/// root, whom the kernel exempts.
std::optional<std::size_t> thread_rlimit() noexcept;

}  // namespace ccnuma::detail
