#pragma once
/// @file
/// A snapshot of the machine, read once through hwloc and restricted to what this process may
/// use: its CPU affinity mask and its allowed memory nodes.
///
///     const auto& topo = ccnuma::topology::current();   // honours CCNUMA_TOPOLOGY, CCNUMA_CPUSET
///     for (const auto& node : topo.numa_nodes())
///         std::printf("node %u: %s, %llu MiB\n", node.os_index,
///                     ccnuma::format_list(node.cpus).c_str(),
///                     static_cast<unsigned long long>(node.memory_bytes >> 20));
///
///     // Plan for a machine you are not logged into:
///     ccnuma::topology_options other;
///     other.source = "pack:2 numa:4 core:8 pu:2";
///     auto big = ccnuma::topology::load(other);
///
/// Indices: PUs and NUMA nodes are named by their OS index (what taskset, numactl and
/// /proc/cpuinfo use); cores, packages and caches by their hwloc logical index (L#) in the
/// allowed part of the machine: the numbers lstopo prints in the same restriction (plain
/// lstopo for a cgroup's allowed PUs, `lstopo --restrict MASK` under an affinity mask or
/// CCNUMA_CPUSET). total_pus() and total_numa_nodes() count the whole machine.

#include <ccnuma/list.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma {

namespace detail {
struct topology_builder;
}

/// Where the snapshot came from.
enum class topology_source {
    system,     ///< this machine, as the kernel reports it
    synthetic,  ///< an hwloc synthetic description such as "pack:2 numa:2 core:8 pu:2"
    xml,        ///< an hwloc XML export (lstopo foo.xml) of some machine
};

/// A level of the hardware tree that binding strategies distinguish. Caches other than L2/L3
/// and I/O objects are not represented: no strategy decides by them.
enum class domain_kind { machine, group, package, die, l3, l2, core, pu };

/// Name of a kind as printed by the tools: "machine", "group", "package", ..., "pu".
std::string_view to_string(domain_kind kind) noexcept;

/// The package index of a PU or core that hwloc places in no package (some VMs, synthetic
/// descriptions without "pack:", PUs beside the packages of a firmware-confused machine):
/// lstopo shows them under the machine, and topology::packages() does not list them.
inline constexpr unsigned no_package = static_cast<unsigned>(-1);

/// One object of the hardware tree, restricted to the allowed PUs.
struct domain {
    domain_kind kind;
    unsigned logical_index;              ///< hwloc logical index in the allowed part (lstopo's L#)
    unsigned os_index;                   ///< OS index (meaningful for PUs)
    std::uint64_t cache_bytes;           ///< size, for l2/l3; 0 otherwise
    std::ptrdiff_t parent;               ///< index into topology::domains(), -1 for the root
    std::vector<std::size_t> children;   ///< indices into topology::domains(), topology order
    std::vector<unsigned> pus;           ///< allowed PU OS indices below, in topology order
    std::vector<unsigned> numa_nodes;    ///< OS indices of NUMA nodes whose memory is attached here
};

/// How fast a node's memory is from one initiator: the CPUs of NUMA node `initiator`. Values
/// come from the firmware's HMAT, through hwloc's memory attributes or, where hwloc has none,
/// the kernel's /sys/devices/system/node/node<N>/access{0,1}/initiators. 0 means not known.
/// Linux and hwloc report only the best (local) initiators of each node, so a node lists the
/// initiators that are near it, not every pair.
struct memory_access {
    unsigned initiator = 0;              ///< OS index of the NUMA node whose CPUs access
    std::uint64_t read_bandwidth = 0;    ///< MB/s (hwloc: MiB/s as the firmware gives it)
    std::uint64_t write_bandwidth = 0;   ///< MB/s
    std::uint64_t read_latency = 0;      ///< ns
    std::uint64_t write_latency = 0;     ///< ns
    friend bool operator==(const memory_access&, const memory_access&) = default;
};

/// Where numa_node::tier comes from.
enum class tier_source {
    none,    ///< nobody said: every node counts as one tier
    kernel,  ///< /sys/devices/virtual/memory_tiering (Linux 6.1), ranked
    hwloc,   ///< hwloc's "MemoryTier" info (hwloc 2.10 and later, or an XML export)
};

/// "none", "kernel", "hwloc".
std::string_view to_string(tier_source s) noexcept;

/// A NUMA node (locality domain). cpus may be empty: CPU-less memory such as CXL or HBM, or a
/// node whose CPUs are all outside the affinity mask.
struct numa_node {
    unsigned os_index;
    std::uint64_t memory_bytes;  ///< local memory, as hwloc reports it
    /// Allowed PU OS indices of the node's own CPUs: what `numactl -H` lists, what
    /// `--cpunodebind` binds to, likwid's M domain. Empty for CPU-less memory (has_cpus false).
    std::vector<unsigned> cpus;
    /// The kind of memory where hwloc knows it ("MCDRAM", "HBM", "GPUMemory", "CXLMem", ...);
    /// empty for ordinary DRAM and where hwloc does not say.
    std::string subtype = {};
    /// The node's memory tier, ranked: 0 is the fastest tier present, 1 the next. From the
    /// kernel's memory_tiering (whose memory_tier<N> ids are abstract distances, ranked here)
    /// on this machine, else hwloc's MemoryTier; -1 where neither says (tier_from is none).
    int tier = -1;
    tier_source tier_from = tier_source::none;
    /// The kernel's own id of the tier (N of /sys/devices/virtual/memory_tiering/memory_tier<N>),
    /// -1 where the tier is not the kernel's.
    int kernel_tier_id = -1;
    /// Whether the node has CPUs on the whole machine (not only allowed ones): false for
    /// CPU-less memory (CXL expanders, HBM in flat mode, far DRAM).
    bool has_cpus = true;
    /// Allowed PUs of the node's hwloc locality (its cpuset): the same as cpus for a node with
    /// CPUs; for CPU-less memory the PUs it is attached near, which is what `hwloc-calc numa:N`
    /// gives and what the hwloc-location syntax (cpu_location.hpp) means by "numa:N".
    std::vector<unsigned> locality = {};
    /// Bandwidth and latency from the initiators near this node, initiator ascending.
    std::vector<memory_access> access = {};
    /// The kernel's weighted-interleave weight of the node
    /// (/sys/kernel/mm/mempolicy/weighted_interleave/node<N>, Linux 6.9), 0 where the kernel
    /// has none or the snapshot is of another machine.
    unsigned interleave_weight = 0;
};

struct package_info {
    unsigned logical_index;
    unsigned os_index;
    std::vector<unsigned> pus;         ///< allowed PU OS indices
    std::vector<unsigned> numa_nodes;  ///< nodes whose CPUs intersect this package
    unsigned cores;                    ///< cores with at least one allowed PU
};

struct core_info {
    unsigned logical_index;      ///< lstopo's core L#; a PU without a core is one, numbered after them
    unsigned package;            ///< package logical index, no_package if none
    int numa;                    ///< OS index of the node local to this core, -1 if none
    std::vector<unsigned> pus;   ///< allowed PU OS indices (SMT siblings), topology order
};

struct pu_info {
    unsigned os_index;
    unsigned core;     ///< core logical index
    unsigned package;  ///< package logical index, no_package if none
    int numa;          ///< OS index of the local NUMA node, -1 if none is allowed
    std::size_t domain;  ///< index into topology::domains()
    /// The allowed nodes local to this PU, fastest first: its own node (`numa`) and the
    /// CPU-less memory whose locality contains the PU (hwloc's local NUMA nodes: CXL or HBM
    /// attached near its package), ordered by read bandwidth from this PU's node, then by
    /// latency; where bandwidths are unknown, nodes with CPUs first, then by distance, then by
    /// OS index.
    std::vector<unsigned> local_nodes = {};
};

struct cache_info {
    unsigned level;  ///< 2 or 3
    unsigned logical_index;
    std::uint64_t bytes;
    std::vector<unsigned> pus;  ///< allowed PU OS indices sharing it
};

/// How to obtain a snapshot.
struct topology_options {
    /// hwloc synthetic description or XML path; empty means CCNUMA_TOPOLOGY if set (and
    /// use_environment), else this machine. An existing file is read as XML; a string with '/'
    /// or ending in ".xml" that names no file is an error; anything else is a synthetic
    /// description.
    std::string source;
    /// Restrict further to these PUs (list syntax "0-3,8"). Empty means CCNUMA_CPUSET if set
    /// (and use_environment), else the process affinity mask (for the system source) or all
    /// PUs (for synthetic and XML sources).
    std::string cpuset;
    /// Read CCNUMA_TOPOLOGY and CCNUMA_CPUSET where the fields above are empty.
    bool use_environment = true;
    /// Restrict the system source to the process affinity mask: its threads' masks and, where
    /// the OpenMP runtime binds, the PUs of its places (libgomp pins the initial thread to the
    /// first place before main). Off only for callers that pin their own threads and want the
    /// machine regardless; the cgroup's allowed CPUs still apply.
    bool use_affinity_mask = true;
    /// How error messages name `source` ("--input" in a tool); empty: "topology source".
    /// Last, so that positional initializers of the fields above keep their meaning.
    std::string source_name = {};
};

/// An immutable snapshot. Copyable; holds no hwloc handle.
class topology {
public:
    /// Largest machine a snapshot may describe, and largest PU OS index (Linux's NR_CPUS is at
    /// most 8192). load() refuses a topology beyond them with errc::topology; the bounds keep
    /// every table of the snapshot small, whatever numbers an XML file carries.
    static constexpr std::size_t max_pus = std::size_t{1} << 18;
    static constexpr unsigned max_pu_os_index = (1u << 20) - 1;

    /// Reads a topology. Throws ccnuma::error (errc::topology) when the source cannot be
    /// loaded (the message says why: missing, empty, truncated, an XML format newer than this
    /// hwloc reads, or beyond max_pus / max_pu_os_index), and (errc::invalid_argument) for a malformed cpuset or one that selects no PU.
    static topology load(const topology_options& options = {});

    /// The process-wide snapshot, loaded on first use with default options. Thread-safe.
    static const topology& current();

    topology_source source() const noexcept { return source_; }
    /// "this machine", the synthetic string, or the XML path.
    const std::string& description() const noexcept { return description_; }
    /// True when the snapshot describes the machine this process runs on, so binding is possible.
    bool is_this_system() const noexcept { return this_system_; }

    const std::vector<domain>& domains() const noexcept { return domains_; }  ///< [0] is the root
    const std::vector<numa_node>& numa_nodes() const noexcept { return nodes_; }
    /// The packages with allowed PUs, as hwloc counts them (L# ascending; a package holding only
    /// memory is skipped, so the numbers may have gaps, as in lstopo).
    const std::vector<package_info>& packages() const noexcept { return packages_; }
    const std::vector<core_info>& cores() const noexcept { return cores_; }
    const std::vector<pu_info>& pus() const noexcept { return pus_; }  ///< topology order
    const std::vector<cache_info>& caches() const noexcept { return caches_; }

    /// Relative NUMA distances (10 = local), rows and columns in numa_nodes() order; empty when
    /// the source provides none (synthetic descriptions, some VMs).
    const std::vector<std::vector<unsigned>>& distances() const noexcept { return distances_; }

    /// Allowed PUs / nodes (OS indices, ascending) and how many the machine has in total.
    std::vector<unsigned> allowed_cpus() const;
    std::vector<unsigned> allowed_nodes() const;
    std::size_t total_pus() const noexcept { return total_pus_; }
    std::size_t total_numa_nodes() const noexcept { return total_nodes_; }
    /// True when the affinity mask, CCNUMA_CPUSET or the allowed memory nodes hide part of the
    /// machine.
    bool is_restricted() const noexcept {
        return total_pus_ != pus_.size() || total_nodes_ != nodes_.size();
    }
    /// How fast node `target`'s memory is from the CPUs of node `initiator`; nullptr where the
    /// source does not say (no HMAT, no memory attributes, or not a near initiator).
    const memory_access* access(unsigned initiator, unsigned target) const noexcept;
    /// Whether any allowed node is CPU-less or the nodes sit in more than one tier.
    bool is_tiered() const noexcept;

    /// Largest number of allowed PUs on one core (2 with SMT enabled and allowed).
    unsigned max_threads_per_core() const noexcept;

    /// The entry for PU `os_index`; throws ccnuma::error if it is not allowed here.
    const pu_info& pu(unsigned os_index) const;

    /// The whole snapshot as one JSON object (schema in docs/topology.md).
    std::string to_json() const;

private:
    friend struct detail::topology_builder;
    topology() = default;

    topology_source source_ = topology_source::system;
    std::string description_;
    bool this_system_ = false;
    std::vector<domain> domains_;
    std::vector<numa_node> nodes_;
    std::vector<package_info> packages_;
    std::vector<core_info> cores_;
    std::vector<pu_info> pus_;
    std::vector<cache_info> caches_;
    std::vector<std::vector<unsigned>> distances_;
    std::vector<std::size_t> pu_by_os_;  // os index -> position in pus_, npos if absent
    std::size_t total_pus_ = 0;
    std::size_t total_nodes_ = 0;
};

}  // namespace ccnuma
