// Restriction: which part of the machine a snapshot describes. The cgroup's allowed PUs and
// nodes, narrowed by CCNUMA_CPUSET (or topology_options::cpuset), else by this process's affinity
// mask (its threads' masks and a binding OpenMP runtime's places), and by a memory binding;
// numbered as lstopo numbers the same restriction.

#include "topology_internal.hpp"

#include <ccnuma/cpu_location.hpp>
#include <ccnuma/detail/openmp_places.hpp>
#include <ccnuma/detail/throw_error.hpp>

#include <algorithm>
#include <cerrno>
#include <limits>

namespace ccnuma {

namespace detail {

std::string cpuset_of(const topology_options& options, const std::string& source, const std::string& source_name,
                      std::string& cpuset_name) {
    std::string cpuset = options.cpuset;
    cpuset_name = "cpuset";
    if (cpuset.empty() && options.use_environment) {
        cpuset = env_or_empty("CCNUMA_CPUSET");
        cpuset_name = "CCNUMA_CPUSET";
    }
    // An hwloc location ("core:0-3", "package:1.core:0") means what hwloc-calc gives on the
    // whole machine, numbered as lstopo numbers what the cgroup allows (issue 24).
    if (!cpuset.empty() && is_cpu_location(cpuset)) {
        topology_options whole;
        whole.source = source;
        whole.source_name = source_name;
        whole.use_environment = false;
        whole.use_affinity_mask = false;
        cpuset = format_list(cpu_location_pus(cpuset, topology::load(whole)));
    }
    return cpuset;
}

void restrict_to_allowed(topology_ptr& topo, const topology& t, const std::string& source, const std::string& cpuset,
                         const std::string& cpuset_name, bool use_affinity_mask) {
    hwloc_topology_t raw = topo.get();
    const hwloc_obj_t root = hwloc_get_root_obj(raw);
    auto cpus = make_bitmap();
    hwloc_bitmap_copy(cpus.get(), hwloc_topology_get_allowed_cpuset(raw));
    if (!cpuset.empty()) {
        auto wanted = make_bitmap();
        for (unsigned i : parse_list(cpuset, cpuset_name)) hwloc_bitmap_set(wanted.get(), i);
        if (!hwloc_bitmap_isincluded(wanted.get(), root->cpuset)) {
            auto extra = make_bitmap();
            hwloc_bitmap_andnot(extra.get(), wanted.get(), root->cpuset);
            throw_error(errc::invalid_argument, cpuset_name + "=" + quote(cpuset) + " names PUs " +
                                                    format_list(to_indices(extra.get())) +
                                                    " that the topology does not have (valid: " +
                                                    format_list(to_indices(root->cpuset)) + ")");
        }
        hwloc_bitmap_and(cpus.get(), cpus.get(), wanted.get());
    } else if (t.is_this_system() && use_affinity_mask) {
        // hwloc ignores the affinity mask (taskset, cgroups, mpirun --bind-to) unless asked.
        // The mask is the union of the threads' masks, and with it the places of a binding
        // OpenMP runtime: libgomp pins the initial thread to one place before main, so before
        // its first team (or after a team of one) the threads' masks hold one core, and
        // streaming_threshold() counted one of two L3s (issue 35). Every place is a PU the
        // runtime will run this process's threads on.
        auto bound = make_bitmap();
        if (hwloc_get_cpubind(raw, bound.get(), HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound.get())) {
            for (const unsigned cpu : openmp_place_cpus()) hwloc_bitmap_set(bound.get(), cpu);
            hwloc_bitmap_and(cpus.get(), cpus.get(), bound.get());
        }
    }
    if (hwloc_bitmap_iszero(cpus.get()))
        throw_error(errc::invalid_argument,
                    cpuset_name + "=" + quote(cpuset) + " selects no allowed PU (allowed: " +
                        format_list(to_indices(hwloc_topology_get_allowed_cpuset(raw))) + ")");

    auto nodes = make_bitmap();
    hwloc_bitmap_copy(nodes.get(), hwloc_topology_get_allowed_nodeset(raw));
    if (t.is_this_system()) {
        // numactl --membind / set_mempolicy(MPOL_BIND) narrows the nodes this process may use.
        auto bound = make_bitmap();
        hwloc_membind_policy_t policy{};
        if (hwloc_get_membind(raw, bound.get(), &policy, HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) == 0 &&
            policy == HWLOC_MEMBIND_BIND && !hwloc_bitmap_iszero(bound.get()))
            hwloc_bitmap_and(nodes.get(), nodes.get(), bound.get());
    }

    // The tree is the one lstopo shows (issue 22): where the source disallows PUs or nodes,
    // it is hwloc's load without them, as plain lstopo's; a restriction within it is
    // hwloc_topology_restrict, as lstopo --restrict's. (hwloc's restrict re-sorts children
    // by their remaining PUs, so restricting the whole tree to the allowed part could number
    // cores and packages unlike lstopo.)
    if (!hwloc_bitmap_isequal(hwloc_topology_get_allowed_cpuset(raw), root->cpuset) ||
        !hwloc_bitmap_isequal(hwloc_topology_get_allowed_nodeset(raw), root->nodeset)) {
        topology_ptr allowed = open_hwloc(0);
        // (The system source reads this machine, or HWLOC_XMLFILE / HWLOC_SYNTHETIC, again.)
        if (!source.empty() && t.source() == topology_source::xml) hwloc_topology_set_xml(allowed.get(), source.c_str());
        if (!source.empty() && t.source() == topology_source::synthetic)
            hwloc_topology_set_synthetic(allowed.get(), source.c_str());
        if (hwloc_topology_load(allowed.get()) != 0)
            throw_system_error(errno, "loading the allowed part of the topology of " + t.description());
        topo = std::move(allowed);
        raw = topo.get();
    }
    if (!hwloc_bitmap_isequal(cpus.get(), hwloc_get_root_obj(raw)->cpuset) &&
        hwloc_topology_restrict(raw, cpus.get(), 0) != 0)
        throw_system_error(errno, "restricting the topology to PUs " +
                                              format_list(to_indices(cpus.get())));
    if (!hwloc_bitmap_isequal(nodes.get(), hwloc_get_root_obj(raw)->nodeset) &&
        hwloc_topology_restrict(raw, nodes.get(), HWLOC_RESTRICT_FLAG_BYNODESET) != 0)
        throw_system_error(errno, "restricting the topology to NUMA nodes " +
                                              format_list(to_indices(nodes.get())));

}

}  // namespace detail

std::vector<unsigned> topology::allowed_cpus() const {
    std::vector<unsigned> v;
    for (const auto& p : pus_) v.push_back(p.os_index);
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<unsigned> topology::allowed_nodes() const {
    std::vector<unsigned> v;
    for (const auto& n : nodes_) v.push_back(n.os_index);
    return v;
}

unsigned topology::max_threads_per_core() const noexcept {
    std::size_t m = 0;
    for (const auto& c : cores_) m = std::max(m, c.pus.size());
    return static_cast<unsigned>(m);
}

const pu_info& topology::pu(unsigned os_index) const {
    if (os_index >= pu_by_os_.size() || pu_by_os_[os_index] == std::numeric_limits<std::size_t>::max())
        detail::throw_error(errc::invalid_argument, "PU " + std::to_string(os_index) +
                                                        " is not in the topology (allowed PUs: " +
                                                        format_list(allowed_cpus()) + ")");
    return pus_[pu_by_os_[os_index]];
}

}  // namespace ccnuma
