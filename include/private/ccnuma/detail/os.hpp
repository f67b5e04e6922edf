#pragma once
// The part of the OS layer (src/os/) that the tools use as well as the library: thread affinity,
// anonymous mappings, and the procfs/sysfs facts a benchmark context records. As hwloc's tools
// bind through topology-linux.c's hooks, ccnuma's tools call these rather than the kernel, so
// that each system call has one caller to get right. The layer passes errno and data back; what
// a failure means is the caller's to say.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ccnuma::detail {

// --- thread affinity (src/os/affinity.cpp) --------------------------------------------------

/// The CPUs (OS indices, ascending) the calling thread may run on; empty where the kernel does
/// not say.
std::vector<unsigned> this_thread_cpus();
/// Restricts the calling thread to `cpus` (OS indices). Returns errno or 0: EINVAL for an empty
/// list or a CPU beyond the kernel's mask size, and whatever sched_setaffinity(2) answers.
int set_this_thread_cpus(std::span<const unsigned> cpus) noexcept;
/// The CPU the calling thread runs on at this instant (sched_getcpu), -1 where unknown.
int current_cpu() noexcept;
/// The NUMA node of the CPU the calling thread runs on at this instant (getcpu), -1 where unknown.
int current_node() noexcept;

// --- sizes and anonymous mappings (src/os/procfs.cpp, src/os/memory.cpp) --------------------

/// The base page size (sysconf(_SC_PAGESIZE)), read once. Public face: support().page_size.
std::size_t page_bytes() noexcept;
/// The huge page size: the one value a huge-page policy places by, seg_array pads to and a
/// benchmark aligns to. The PMD size the kernel tells (hpage_pmd_size), else the base page:
/// without THP a huge-page policy gets base pages, so its unit is one. Public face:
/// support().huge_page_size, 0 where the kernel does not tell (seg_array then pads to a page,
/// the same value).
std::size_t huge_page_bytes() noexcept;

/// A private anonymous read-write mapping p of `bytes` with p + `offset` (a multiple of the page)
/// on a multiple of `align` (a power of two, 0 or a page for no more than page alignment);
/// nullptr where mmap or mprotect fails. `bytes` is rounded up to whole pages; the excess
/// mapped for the alignment is unmapped again, so unmap(p, bytes) releases all of it. Where the
/// kernel has THP, in every mode, the huge-page frames that p's two ends fill only in part are
/// advised MADV_NOHUGEPAGE before p is writable, so that neither khugepaged nor a neighbour's
/// fault can give one folio to p's untouched pages and a neighbour's (memory.cpp).
void* map_anonymous(std::size_t bytes, std::size_t align = 0, std::size_t offset = 0) noexcept;
/// munmap(2) of a mapping of map_anonymous. Returns errno or 0.
int unmap(void* addr, std::size_t bytes) noexcept;
/// madvise(MADV_HUGEPAGE), or MADV_NOHUGEPAGE where `huge` is false. Returns errno or 0.
int advise_huge(void* addr, std::size_t bytes, bool huge) noexcept;

// --- procfs and sysfs facts (src/os/procfs.cpp) ---------------------------------------------

/// A "<key>: <value> kB" line of /proc/meminfo in bytes (key "MemAvailable", "MemTotal"...);
/// nullopt where the kernel does not say.
std::optional<std::uint64_t> meminfo(const char* key) noexcept;
/// The path of the running executable (/proc/self/exe); empty where procfs cannot say.
std::string executable_path();
/// The values of every "<key> : <value>" line of /proc/cpuinfo, in order (one per CPU for "model
/// name", "cpu MHz", "flags"); empty where there is no such key (ARM has no "model name").
std::vector<std::string> cpuinfo(const char* key);
/// /sys/devices/system/cpu/cpu<N>/cpufreq/<file> as text ("cpuinfo_max_freq", "scaling_governor");
/// empty where there is no such file (no cpufreq driver, a VM).
std::string cpufreq(unsigned cpu, const char* file);
/// The active choice of /sys/kernel/mm/transparent_hugepage/<name> ("enabled", "defrag"):
/// "always", "madvise", "never"...; empty where the file cannot be read (no THP).
std::string thp_setting(const char* name) noexcept;
/// The THP mode: thp_setting("enabled").
std::string thp_mode() noexcept;
/// Each anonymous folio size's THP mode (Linux 6.8+, mTHP): (bytes, the active choice of
/// hugepages-<size>kB/enabled), size ascending, the PMD size included; empty before 6.8.
std::vector<std::pair<std::size_t, std::string>> thp_size_modes() noexcept;
/// The folio sizes above a page that a fault in an unadvised anonymous mapping may get, from
/// the top-level mode `enabled` and the per-size modes (thp_size_modes()): each size whose mode
/// is "always", or "inherit" under "always"; before Linux 6.8 (no per-size modes) the PMD size
/// `pmd` under "always". Ascending. Pure: the settings are the caller's.
std::vector<std::size_t> thp_unadvised_sizes(const std::string& enabled,
                                             const std::vector<std::pair<std::size_t, std::string>>& sizes,
                                             std::size_t pmd);
/// The kernel's page-table isolation as /sys/devices/system/cpu/vulnerabilities/meltdown says
/// it ("Mitigation: PTI", "Not affected", "Vulnerable"); empty where the file cannot be read.
/// With PTI on a CPU without PCID every system call drops the TLB.
std::string page_table_isolation() noexcept;
/// /proc/sys/kernel/numa_balancing; nullopt when the kernel has no NUMA balancing.
std::optional<int> numa_balancing() noexcept;

}  // namespace ccnuma::detail
