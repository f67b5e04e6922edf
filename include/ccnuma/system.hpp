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
#include <utility>
#include <vector>

namespace ccnuma {

struct kernel_settings {
    /// /proc/sys/kernel/numa_balancing: 0 off, 1 on (NUMA_BALANCING_NORMAL), 2 memory tiering,
    /// 3 both (a bit mask); nullopt when the kernel has no NUMA balancing.
    /// numa_balancing_mode() spells it out.
    std::optional<int> numa_balancing;
    /// Active value of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
    /// "never"); empty when THP is not available.
    std::string thp_enabled;
    /// Active value of /sys/kernel/mm/transparent_hugepage/defrag.
    std::string thp_defrag;
    /// Each anonymous folio size's THP mode (Linux 6.8+, mTHP): (bytes, the active value of
    /// hugepages-<size>kB/enabled: "always", "inherit" for thp_enabled's, "madvise", "never"),
    /// size ascending, the PMD size (2 MiB on x86-64) included; empty before 6.8. A size whose
    /// mode is "always" is given to unadvised faults whatever thp_enabled says.
    std::vector<std::pair<std::size_t, std::string>> thp_sizes;
    /// /sys/kernel/mm/numa/demotion_enabled (Linux 5.15): whether reclaim moves cold pages to a
    /// slower tier instead of dropping them; nullopt where the kernel has no such file.
    std::optional<bool> demotion_enabled;
    /// The weighted-interleave weight of each node (node, weight), node ascending:
    /// /sys/kernel/mm/mempolicy/weighted_interleave/node<N> (Linux 6.9), what MPOL_WEIGHTED_INTERLEAVE
    /// (numactl -w, ccnuma-run -w) uses; empty where the kernel has none.
    std::vector<std::pair<unsigned, unsigned>> interleave_weights;
    /// /sys/kernel/mm/mempolicy/weighted_interleave/auto (Linux 6.16): true while the kernel
    /// derives the weights from the nodes' bandwidths (auto_interleave_weights()), false once a
    /// weight was written; nullopt before 6.16.
    std::optional<bool> interleave_auto;

    /// Reads the current values; never throws (unreadable files give the empty values).
    static kernel_settings read() noexcept;
};

/// kernel.numa_balancing spelled out: "off", "normal", "memory tiering", "normal + memory
/// tiering" (unknown bits are named as such); "not available" for nullopt.
std::string numa_balancing_mode(std::optional<int> value);

/// The weights Linux 6.16's weighted_interleave/auto chooses from the nodes' bandwidths
/// (node, bandwidth in MB/s, 0 where unknown): each node's share of the total bandwidth scaled
/// to 1..32, at least 1, divided by the weights' greatest common divisor. Node order is kept.
///
///     ccnuma::auto_interleave_weights({{0, 1000}, {1, 1000}, {2, 500}, {3, 500}});
///     // {{0, 2}, {1, 2}, {2, 1}, {3, 1}}
std::vector<std::pair<unsigned, unsigned>> auto_interleave_weights(
    const std::vector<std::pair<unsigned, std::uint64_t>>& bandwidths);
/// The same from a topology: every node with memory, at the bandwidth the kernel takes for it
/// (the smaller of read and write bandwidth from its best CPU initiator; 0 where unknown).
/// Empty where no node's bandwidth is known.
std::vector<std::pair<unsigned, unsigned>> auto_interleave_weights(const topology& topo);

/// Free memory of NUMA node `node` of this host right now, in bytes: MemFree of
/// /sys/devices/system/node/node<N>/meminfo, what `numactl -H` prints as "node N free".
/// nullopt where the kernel does not say (no such node, no NUMA sysfs).
///
///     if (auto free = ccnuma::node_free_bytes(1); free && *free < bytes)
///         std::puts("node 1 cannot hold the array: first touch will spill to other nodes");
std::optional<std::uint64_t> node_free_bytes(unsigned node) noexcept;

/// Settings of the host and properties of the topology a user should act on before measuring
/// or relying on placement: NUMA balancing on, a restricted affinity mask, SMT, THP "always"
/// (the PMD size's mode, or since Linux 6.8 a smaller folio size at "always": thp_sizes),
/// and what a read of untouched memory does on this kernel (the zero page that makes read-only
/// arrays look impossibly fast, or private frames and huge pages that a serial read places),
/// and a tiered machine (bandwidths from one initiator differ) whose kernel weighted-interleave
/// weights are all 1 for its nodes. One sentence each, with the remedy.
std::vector<std::string> placement_warnings(const topology& topo, const kernel_settings& kernel,
                                            const support_info& pages = support());

}  // namespace ccnuma
