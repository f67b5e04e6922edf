// Export: the snapshot as the names, JSON and data that tools and users read.

#include "topology_internal.hpp"

#include <ccnuma/detail/json.hpp>

#include <cstdint>

namespace ccnuma {

std::string_view to_string(domain_kind kind) noexcept {
    switch (kind) {
    case domain_kind::machine: return "machine";
    case domain_kind::group: return "group";
    case domain_kind::package: return "package";
    case domain_kind::die: return "die";
    case domain_kind::l3: return "l3";
    case domain_kind::l2: return "l2";
    case domain_kind::core: return "core";
    case domain_kind::pu: return "pu";
    }
    return "?";
}

std::string_view to_string(tier_source s) noexcept {
    switch (s) {
    case tier_source::none: return "none";
    case tier_source::kernel: return "kernel";
    case tier_source::hwloc: return "hwloc";
    }
    return "?";
}

const memory_access* topology::access(unsigned initiator, unsigned target) const noexcept {
    for (const auto& n : nodes_)
        if (n.os_index == target)
            for (const auto& a : n.access)
                if (a.initiator == initiator) return &a;
    return nullptr;
}

bool topology::is_tiered() const noexcept {
    for (const auto& n : nodes_)
        if (!n.has_cpus || n.tier > 0) return true;
    return false;
}

namespace detail {
json to_json_value(const topology& t) {
    json j;
    j["source"] = t.source() == topology_source::system      ? "system"
                  : t.source() == topology_source::synthetic ? "synthetic"
                                                              : "xml";
    j["description"] = t.description();
    j["this_system"] = t.is_this_system();
    j["total_pus"] = static_cast<std::uint64_t>(t.total_pus());
    j["total_numa_nodes"] = static_cast<std::uint64_t>(t.total_numa_nodes());
    j["allowed_cpus"] = format_list(t.allowed_cpus());
    j["allowed_nodes"] = format_list(t.allowed_nodes());
    j["restricted"] = t.is_restricted();
    json& nodes = j["numa_nodes"] = json::array();
    for (const auto& n : t.numa_nodes()) {
        json access = json::array();
        for (const auto& a : n.access)
            access.push_back({{"initiator", a.initiator},
                              {"read_bandwidth", a.read_bandwidth},
                              {"write_bandwidth", a.write_bandwidth},
                              {"read_latency", a.read_latency},
                              {"write_latency", a.write_latency}});
        nodes.push_back({{"os_index", n.os_index},
                         {"memory_bytes", n.memory_bytes},
                         {"cpus", n.cpus},
                         {"has_cpus", n.has_cpus},
                         {"locality", n.locality},
                         {"subtype", n.subtype},
                         {"tier", n.tier},
                         {"tier_from", std::string(to_string(n.tier_from))},
                         {"kernel_tier_id", n.kernel_tier_id},
                         {"access", access},
                         {"interleave_weight", n.interleave_weight}});
    }
    json& packages = j["packages"] = json::array();
    for (const auto& p : t.packages())
        packages.push_back(
            {{"logical_index", p.logical_index}, {"cores", p.cores}, {"numa_nodes", p.numa_nodes}, {"pus", p.pus}});
    json& cores = j["cores"] = json::array();
    for (const auto& c : t.cores())
        cores.push_back({{"logical_index", c.logical_index},
                         {"package", c.package == no_package ? std::int64_t{-1} : std::int64_t{c.package}},
                         {"numa", c.numa},
                         {"pus", c.pus}});
    json& caches = j["caches"] = json::array();
    for (const auto& c : t.caches())
        caches.push_back({{"level", c.level}, {"logical_index", c.logical_index}, {"bytes", c.bytes}, {"pus", c.pus}});
    j["distances"] = t.distances();
    json& pus = j["pus"] = json::array();
    for (const auto& p : t.pus()) pus.push_back({{"os_index", p.os_index}, {"local_nodes", p.local_nodes}});
    return j;
}
}  // namespace detail

std::string topology::to_json() const { return detail::dump(detail::to_json_value(*this)); }

}  // namespace ccnuma
