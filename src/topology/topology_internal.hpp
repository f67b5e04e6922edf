#pragma once
// What the parts of the topology snapshot share: hwloc handles (load.cpp loads the tree and
// builds the snapshot, restrict.cpp narrows it to the allowed PUs and nodes, memory.cpp reads
// the tiers, bandwidths and latencies of the nodes, export.cpp writes it out). <hwloc.h> stays
// in src/.

#include <ccnuma/topology.hpp>

#include <hwloc.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ccnuma::detail {

struct topology_deleter {
    void operator()(hwloc_topology* t) const noexcept { hwloc_topology_destroy(t); }
};
struct bitmap_deleter {
    void operator()(hwloc_bitmap_s* b) const noexcept { hwloc_bitmap_free(b); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;
using bitmap_ptr = std::unique_ptr<hwloc_bitmap_s, bitmap_deleter>;

inline bitmap_ptr make_bitmap() {
    bitmap_ptr b(hwloc_bitmap_alloc());
    if (!b) throw std::bad_alloc();
    return b;
}

inline std::vector<unsigned> to_indices(hwloc_const_bitmap_t set) {
    std::vector<unsigned> out;
    int i = -1;
    while ((i = hwloc_bitmap_next(set, i)) != -1) out.push_back(static_cast<unsigned>(i));
    return out;
}

inline std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

/// A fresh hwloc topology with the filters every snapshot uses and `flags`; not loaded yet.
topology_ptr open_hwloc(unsigned long flags);

/// The cpuset a load narrows to: options.cpuset, else CCNUMA_CPUSET, with an hwloc location
/// resolved on the whole machine of `source`; `name` says which, for messages.
std::string cpuset_of(const topology_options& options, const std::string& source, const std::string& source_name,
                      std::string& name);

/// Narrows the loaded whole machine `topo` to what `t` (source, description, this system) may
/// use: the cgroup's PUs and nodes, then `cpuset` or this process's affinity mask, and the
/// memory binding. May replace `topo` by a load of the allowed part.
void restrict_to_allowed(topology_ptr& topo, const topology& t, const std::string& source, const std::string& cpuset,
                         const std::string& cpuset_name, bool use_affinity_mask);

/// What the memory of the whole machine is like, read before the restriction (which drops
/// nodes, PUs and with them memory attributes) and applied to the snapshot after it.
struct memory_facts {
    /// PU OS index -> the node that has it as a CPU (-1: none); a CPU-less node's hwloc
    /// cpuset is its locality, so "has CPUs" is decided here, not by the cpuset.
    std::vector<int> owner;
    std::map<unsigned, bool> has_cpus;                     ///< node -> has CPUs on the whole machine
    std::map<unsigned, std::vector<bool>> locality;        ///< CPU-less node -> its PUs (by OS index)
    std::map<unsigned, std::vector<memory_access>> access;  ///< node -> from its near initiators
    std::map<unsigned, int> tier_id;                       ///< node -> tier id as its source gives it
    tier_source tier_from = tier_source::none;
    std::map<unsigned, unsigned> interleave_weight;        ///< node -> the kernel's weight
};

/// Reads the facts from `whole` (the loaded, unrestricted machine) and, where the snapshot is
/// of this system, from the kernel's sysfs under `sys` where hwloc has nothing (tests hand a
/// fake tree).
memory_facts read_memory_facts(hwloc_topology_t whole, bool this_system, const std::string& sys = "/sys");

/// Fills numa_node::{has_cpus, tier, tier_from, kernel_tier_id, access, interleave_weight}
/// and pu_info::local_nodes of a built snapshot (`distances` in `nodes` order).
void apply_memory_facts(const memory_facts& facts, std::vector<numa_node>& nodes, std::vector<pu_info>& pus,
                        const std::vector<std::vector<unsigned>>& distances);

}  // namespace ccnuma::detail
