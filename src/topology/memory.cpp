// Memory: which nodes have CPUs, the tier of each node, its bandwidth and latency from the
// initiators near it, the kernel's weighted-interleave weights, and the nodes local to each PU
// (issue 26). hwloc's memory attributes first; on this machine, the kernel's sysfs where hwloc
// has nothing, through the OS layer.

#include "../os/os.hpp"
#include "topology_internal.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <tuple>

namespace ccnuma::detail {

namespace {

std::vector<hwloc_obj_t> numa_objects(hwloc_topology_t topo) {
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) out.push_back(n);
    return out;
}

hwloc_const_bitmap_t whole_cpuset(hwloc_obj_t o) { return o->complete_cpuset ? o->complete_cpuset : o->cpuset; }

// Linux gives each CPU to one node; hwloc gives a CPU-less node the cpuset of its locality (its
// HMAT initiators, or the package or machine it hangs below), so several nodes may cover a PU.
// The PU belongs to the most local of them (the smallest cpuset), and among equals to the
// lowest OS index: firmware numbers the nodes with CPUs before the memory-only ones. This
// machine's sysfs cpulist overrides the rule where the kernel tells.
void decide_owners(hwloc_topology_t topo, const std::vector<hwloc_obj_t>& nodes, bool this_system,
                   const std::string& sys, memory_facts& f) {
    unsigned max_pu = 0;
    for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu));)
        max_pu = std::max(max_pu, pu->os_index);
    f.owner.assign(std::size_t{max_pu} + 1, -1);
    std::vector<hwloc_obj_t> order = nodes;
    // A node without a cpuset (or an infinite one) covers no PU before any node that has one.
    const auto weight = [](hwloc_obj_t o) {
        const int w = whole_cpuset(o) ? hwloc_bitmap_weight(whole_cpuset(o)) : -1;
        return w < 0 ? std::numeric_limits<int>::max() : w;
    };
    std::sort(order.begin(), order.end(), [&](hwloc_obj_t a, hwloc_obj_t b) {
        return std::make_pair(weight(a), a->os_index) < std::make_pair(weight(b), b->os_index);
    });
    for (hwloc_obj_t n : order) {
        const hwloc_const_bitmap_t set = whole_cpuset(n);
        if (set == nullptr) continue;
        for (int p = hwloc_bitmap_first(set); p >= 0 && static_cast<unsigned>(p) <= max_pu;
             p = hwloc_bitmap_next(set, p))
            if (f.owner[static_cast<std::size_t>(p)] < 0) f.owner[static_cast<std::size_t>(p)] = static_cast<int>(n->os_index);
    }
    if (this_system) {
        std::map<unsigned, std::vector<unsigned>> told;
        for (hwloc_obj_t n : nodes)
            if (auto cpus = node_cpus(n->os_index, sys)) told[n->os_index] = std::move(*cpus);
        for (auto& o : f.owner)
            if (o >= 0 && told.count(static_cast<unsigned>(o))) o = -1;
        for (const auto& [node, cpus] : told)
            for (unsigned c : cpus)
                if (c <= max_pu) f.owner[c] = static_cast<int>(node);
    }
    for (hwloc_obj_t n : nodes) f.has_cpus[n->os_index] = false;
    for (int o : f.owner)
        if (o >= 0) f.has_cpus[static_cast<unsigned>(o)] = true;
    for (hwloc_obj_t n : nodes) {
        if (f.has_cpus[n->os_index] || whole_cpuset(n) == nullptr) continue;
        std::vector<bool> pus(f.owner.size(), false);
        const hwloc_const_bitmap_t set = whole_cpuset(n);
        for (int p = hwloc_bitmap_first(set); p >= 0 && static_cast<unsigned>(p) <= max_pu; p = hwloc_bitmap_next(set, p))
            pus[static_cast<std::size_t>(p)] = true;
        f.locality[n->os_index] = std::move(pus);
    }
}

memory_access& entry(std::vector<memory_access>& list, unsigned initiator) {
    for (auto& a : list)
        if (a.initiator == initiator) return a;
    list.push_back(memory_access{initiator});
    return list.back();
}

// hwloc names an initiator by a cpuset (or an object, whose cpuset it is): the nodes whose CPUs
// lie in it initiate.
std::set<unsigned> initiator_nodes(const hwloc_location& where, const memory_facts& f) {
    hwloc_const_bitmap_t set = nullptr;
    if (where.type == HWLOC_LOCATION_TYPE_CPUSET) set = where.location.cpuset;
    if (where.type == HWLOC_LOCATION_TYPE_OBJECT && where.location.object) set = where.location.object->cpuset;
    std::set<unsigned> out;
    if (set == nullptr) return out;
    for (int p = hwloc_bitmap_first(set); p >= 0 && static_cast<std::size_t>(p) < f.owner.size();
         p = hwloc_bitmap_next(set, p))
        if (f.owner[static_cast<std::size_t>(p)] >= 0) out.insert(static_cast<unsigned>(f.owner[static_cast<std::size_t>(p)]));
    return out;
}

void read_memattrs(hwloc_topology_t topo, const std::vector<hwloc_obj_t>& nodes, memory_facts& f) {
    // The read and write attributes (hwloc 2.8) come first; the plain ones, which HMAT gives as
    // "access" bandwidth and latency, fill in only what they leave unknown.
    static constexpr struct {
        hwloc_memattr_id_t id;
        std::uint64_t memory_access::*first;
        std::uint64_t memory_access::*second;
    } attrs[] = {
        {HWLOC_MEMATTR_ID_READ_BANDWIDTH, &memory_access::read_bandwidth, nullptr},
        {HWLOC_MEMATTR_ID_WRITE_BANDWIDTH, &memory_access::write_bandwidth, nullptr},
        {HWLOC_MEMATTR_ID_READ_LATENCY, &memory_access::read_latency, nullptr},
        {HWLOC_MEMATTR_ID_WRITE_LATENCY, &memory_access::write_latency, nullptr},
        {HWLOC_MEMATTR_ID_BANDWIDTH, &memory_access::read_bandwidth, &memory_access::write_bandwidth},
        {HWLOC_MEMATTR_ID_LATENCY, &memory_access::read_latency, &memory_access::write_latency},
    };
    for (hwloc_obj_t n : nodes) {
        std::vector<memory_access> list;
        for (const auto& attr : attrs) {
            unsigned count = 0;
            if (hwloc_memattr_get_initiators(topo, attr.id, n, 0, &count, nullptr, nullptr) != 0 || count == 0)
                continue;
            std::vector<hwloc_location> where(count);
            std::vector<hwloc_uint64_t> values(count);
            if (hwloc_memattr_get_initiators(topo, attr.id, n, 0, &count, where.data(), values.data()) != 0) continue;
            for (unsigned i = 0; i < count && i < where.size(); ++i)
                for (unsigned init : initiator_nodes(where[i], f)) {
                    auto& a = entry(list, init);
                    for (auto field : {attr.first, attr.second})
                        if (field != nullptr && a.*field == 0) a.*field = values[i];
                }
        }
        if (list.empty()) continue;
        std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.initiator < b.initiator; });
        f.access[n->os_index] = std::move(list);
    }
}

// The kernel's HMAT view, where hwloc had none for a node: access0 holds the best initiators of
// any kind, access1 the best CPU initiators; a node near a GPU or accelerator node only has
// CPU initiators in access1.
void read_sysfs_access(const std::vector<hwloc_obj_t>& nodes, const std::string& sys, memory_facts& f) {
    for (hwloc_obj_t n : nodes) {
        if (f.access.count(n->os_index)) continue;
        auto cls = node_access(n->os_index, 0, sys);
        const auto has_cpu_initiator = [&](const node_access_class& c) {
            return std::any_of(c.initiators.begin(), c.initiators.end(), [&](unsigned i) {
                const auto it = f.has_cpus.find(i);
                return it != f.has_cpus.end() && it->second;
            });
        };
        if (!cls || !has_cpu_initiator(*cls)) {
            if (auto cpu = node_access(n->os_index, 1, sys); cpu && has_cpu_initiator(*cpu)) cls = cpu;
        }
        if (!cls) continue;
        std::vector<memory_access> list;
        for (unsigned i : cls->initiators)
            list.push_back({i, cls->read_bandwidth, cls->write_bandwidth, cls->read_latency, cls->write_latency});
        if (!list.empty()) f.access[n->os_index] = std::move(list);
    }
}

void read_tiers(const std::vector<hwloc_obj_t>& nodes, bool this_system, const std::string& sys, memory_facts& f) {
    if (this_system) {
        for (const auto& [id, members] : memory_tiers(sys))
            for (unsigned node : members) f.tier_id[node] = id;
        if (!f.tier_id.empty()) {
            f.tier_from = tier_source::kernel;
            return;
        }
    }
    // hwloc writes a tier as a decimal rank; anything else ("junk", "-1", "1x", beyond an int)
    // leaves the node's tier unknown rather than reading as tier 0, as strtol would.
    for (hwloc_obj_t n : nodes)
        if (const char* tier = hwloc_obj_get_info_by_name(n, "MemoryTier")) {
            const std::string_view text(tier);
            int id = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
            if (!text.empty() && text.front() != '-' && ec == std::errc{} && end == text.data() + text.size())
                f.tier_id[n->os_index] = id;
        }
    if (!f.tier_id.empty()) f.tier_from = tier_source::hwloc;
}

}  // namespace

memory_facts read_memory_facts(hwloc_topology_t whole, bool this_system, const std::string& sys) {
    memory_facts f;
    const auto nodes = numa_objects(whole);
    decide_owners(whole, nodes, this_system, sys, f);
    read_memattrs(whole, nodes, f);
    if (this_system) {
        read_sysfs_access(nodes, sys, f);
        for (const auto& [node, weight] : interleave_weights(sys)) f.interleave_weight[node] = weight;
    }
    read_tiers(nodes, this_system, sys, f);
    return f;
}

void apply_memory_facts(const memory_facts& f, std::vector<numa_node>& nodes, std::vector<pu_info>& pus,
                        const std::vector<std::vector<unsigned>>& distances) {
    // Tiers are ranked over the ids the source gives for the whole machine: 0 is the fastest.
    std::set<int> ids;
    for (const auto& [node, id] : f.tier_id) ids.insert(id);
    // A node's CPUs are the PUs whose node it is (pu.numa: the smallest node cpuset holding the
    // PU). Where node cpusets nest (linux-fakeheterocpunuma: node 4 holds 16-23, node 3 20-23),
    // the outer node's cpuset is its locality, and the inner node's PUs are not its CPUs.
    std::map<int, std::vector<unsigned>> owned;
    for (const auto& pu : pus)
        if (pu.numa >= 0) owned[pu.numa].push_back(pu.os_index);
    for (auto& entry : owned) std::sort(entry.second.begin(), entry.second.end());
    for (auto& n : nodes) {
        if (const auto it = f.has_cpus.find(n.os_index); it != f.has_cpus.end()) n.has_cpus = it->second;
        // hwloc gives a CPU-less node the cpuset of the CPUs it is near; those are not its CPUs
        // (numactl -H lists none, --cpunodebind to it binds to nothing, a likwid M domain of it
        // has no threads), so they move to `locality`.
        n.locality = n.cpus;
        if (!n.has_cpus) {
            n.cpus.clear();
        } else {
            const auto it = owned.find(static_cast<int>(n.os_index));
            n.cpus = it != owned.end() ? it->second : std::vector<unsigned>{};
        }
        if (const auto it = f.tier_id.find(n.os_index); it != f.tier_id.end()) {
            n.tier = static_cast<int>(std::distance(ids.begin(), ids.find(it->second)));
            n.tier_from = f.tier_from;
            n.kernel_tier_id = f.tier_from == tier_source::kernel ? it->second : -1;
        } else {
            n.tier = -1;
            n.tier_from = tier_source::none;
            n.kernel_tier_id = -1;
        }
        if (const auto it = f.access.find(n.os_index); it != f.access.end()) n.access = it->second;
        if (const auto it = f.interleave_weight.find(n.os_index); it != f.interleave_weight.end())
            n.interleave_weight = it->second;
    }

    std::map<unsigned, std::size_t> position;
    for (std::size_t i = 0; i < nodes.size(); ++i) position[nodes[i].os_index] = i;
    const auto access_of = [&](unsigned initiator, const numa_node& target) -> const memory_access* {
        for (const auto& a : target.access)
            if (a.initiator == initiator) return &a;
        return nullptr;
    };
    constexpr std::uint64_t unknown = std::numeric_limits<std::uint64_t>::max();
    // A CPU-less node without memory (a generic initiator) holds no pages: no place to put them.
    std::vector<std::size_t> far;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (!nodes[i].has_cpus && nodes[i].memory_bytes != 0) far.push_back(i);
    for (auto& pu : pus) {
        const int own = pu.numa >= 0 ? pu.numa
                        : pu.os_index < f.owner.size() ? f.owner[pu.os_index]
                                                       : -1;
        std::vector<std::size_t> local;
        if (pu.numa >= 0)
            if (const auto it = position.find(static_cast<unsigned>(pu.numa)); it != position.end())
                local.push_back(it->second);
        for (std::size_t i : far) {
            const auto& n = nodes[i];
            if (static_cast<int>(n.os_index) == pu.numa) continue;
            const auto loc = f.locality.find(n.os_index);
            const bool covers = loc != f.locality.end() && pu.os_index < loc->second.size() && loc->second[pu.os_index];
            const bool near = own >= 0 && access_of(static_cast<unsigned>(own), n) != nullptr;
            if (covers || near) local.push_back(i);
        }
        const auto own_pos = own >= 0 ? position.find(static_cast<unsigned>(own)) : position.end();
        const auto key = [&](std::size_t i) {
            const auto& n = nodes[i];
            const memory_access* a = own >= 0 ? access_of(static_cast<unsigned>(own), n) : nullptr;
            const std::uint64_t bw = a && a->read_bandwidth ? a->read_bandwidth : 0;
            const std::uint64_t lat = a && a->read_latency ? a->read_latency : unknown;
            const unsigned dist = own_pos != position.end() && !distances.empty() ? distances[own_pos->second][i]
                                                                                  : 0u;
            // Bandwidth descending (unknown last), latency ascending, then nodes with CPUs first.
            return std::make_tuple(bw == 0, unknown - bw, lat, !n.has_cpus, dist, n.os_index);
        };
        std::sort(local.begin(), local.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
        pu.local_nodes.clear();
        for (std::size_t i : local) pu.local_nodes.push_back(nodes[i].os_index);
    }
}

}  // namespace ccnuma::detail
