#pragma once
// What the three parts of the topology snapshot share: hwloc handles (load.cpp loads the tree
// and builds the snapshot, restrict.cpp narrows it to the allowed PUs and nodes, export.cpp
// writes it out). <hwloc.h> stays in src/.

#include <ccnuma/topology.hpp>

#include <hwloc.h>

#include <cstdlib>
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

}  // namespace ccnuma::detail
