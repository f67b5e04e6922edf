#pragma once
/// @file
/// Kernel memory-management settings of the host that decide where pages end up.
///
///     auto k = ccnuma::kernel_settings::read();
///     if (k.numa_balancing.value_or(0) != 0)
///         std::puts("NUMA balancing may migrate pages behind your back");

#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccnuma {

struct kernel_settings {
    /// /proc/sys/kernel/numa_balancing: 0 off, 1 on (NUMA_BALANCING_NORMAL), 2 memory tiering;
    /// nullopt when the kernel has no NUMA balancing.
    std::optional<int> numa_balancing;
    /// Active value of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
    /// "never"); empty when THP is not available.
    std::string thp_enabled;
    /// Active value of /sys/kernel/mm/transparent_hugepage/defrag.
    std::string thp_defrag;

    /// Reads the current values; never throws (unreadable files give the empty values).
    static kernel_settings read() noexcept;
};

/// Free memory of NUMA node `node` of this host right now, in bytes: MemFree of
/// /sys/devices/system/node/node<N>/meminfo, what `numactl -H` prints as "node N free".
/// nullopt where the kernel does not say (no such node, no NUMA sysfs).
///
///     if (auto free = ccnuma::node_free_bytes(1); free && *free < bytes)
///         std::puts("node 1 cannot hold the array: first touch will spill to other nodes");
std::optional<std::uint64_t> node_free_bytes(unsigned node) noexcept;

/// Settings of the host and properties of the topology a user should act on before measuring
/// or relying on placement: NUMA balancing on, a restricted affinity mask, SMT, THP "always",
/// and what a read of untouched memory does on this kernel (the zero page that makes read-only
/// arrays look impossibly fast, or private frames and huge pages that a serial read places).
/// One sentence each, with the remedy.
std::vector<std::string> placement_warnings(const topology& topo, const kernel_settings& kernel,
                                            const support_info& pages = support());

}  // namespace ccnuma
