// ccnuma-info --json: one document that embeds the library's topology value
// (detail::to_json_value) beside the kernel settings and the warnings.

#include "info.hpp"

#include "../common/slurm.hpp"

#include <ccnuma/detail/json.hpp>

#include <cstdio>

namespace tools::info {

namespace {
/// Version of the JSON document; raised when a key changes meaning or disappears.
// 2 (issue 22): logical indexes follow lstopo in the same restriction, a PU in no package has
// package -1, huge_read_fault_is_huge is null where the page-flag source cannot tell, and
// page_flags_valid is new.
constexpr int json_schema_version = 2;
}  // namespace

void print_json(const ccnuma::topology& t, const ccnuma::kernel_settings& k, const std::vector<std::string>& warnings) {
    using ccnuma::detail::json;
    json doc;
    doc["schema_version"] = json_schema_version;
    doc["topology"] = ccnuma::detail::to_json_value(t);
    json kernel;
    kernel["numa_balancing"] = k.numa_balancing ? json(*k.numa_balancing) : json(nullptr);
    json modes = json::array();
    if (k.numa_balancing && (*k.numa_balancing & 1)) modes.push_back("normal");
    if (k.numa_balancing && (*k.numa_balancing & 2)) modes.push_back("memory_tiering");
    kernel["numa_balancing_modes"] = modes;
    kernel["numa_balancing_mode"] = ccnuma::numa_balancing_mode(k.numa_balancing);
    kernel["demotion_enabled"] = k.demotion_enabled ? json(*k.demotion_enabled) : json(nullptr);
    json weights = json::array();
    for (const auto& [node, w] : k.interleave_weights) weights.push_back({{"node", node}, {"weight", w}});
    kernel["interleave_weights"] = weights;  // empty: no weighted interleave (before Linux 6.9)
    kernel["interleave_auto"] = k.interleave_auto ? json(*k.interleave_auto) : json(nullptr);  // null: before 6.16
    kernel["thp_enabled"] = k.thp_enabled;
    kernel["thp_defrag"] = k.thp_defrag;
    json sizes = json::array();  // empty: no per-size THP (before Linux 6.8)
    for (const auto& [bytes, mode] : k.thp_sizes) sizes.push_back({{"bytes", bytes}, {"enabled", mode}});
    kernel["thp_sizes"] = sizes;
    const auto& pg = ccnuma::support();
    kernel["read_fault"] = std::string(ccnuma::to_string(pg.read_fault));
    kernel["huge_read_fault"] = std::string(ccnuma::to_string(pg.huge_read_fault));
    kernel["huge_read_fault_is_huge"] =
        pg.huge_read_fault_size_known ? json(pg.huge_read_fault_is_huge) : json(nullptr);  // null: cannot tell
    kernel["pagemap"] = pg.pagemap;
    kernel["pfn_visible"] = pg.pfn_visible;
    kernel["page_flags"] = pg.page_flags;
    kernel["page_flags_valid"] = pg.page_flags_valid;
    if (t.source() == ccnuma::topology_source::system) {
        json free = json::array();
        for (const auto& n : t.numa_nodes()) {
            const auto f = ccnuma::node_free_bytes(n.os_index);
            free.push_back({{"node", n.os_index}, {"free_bytes", f ? json(*f) : json(nullptr)}});
        }
        kernel["node_free"] = free;
    }
    doc["kernel"] = kernel;
    // What 6.16's weighted_interleave/auto derives from the topology's bandwidths (empty: unknown).
    json auto_weights = json::array();
    for (const auto& [node, w] : ccnuma::auto_interleave_weights(t)) auto_weights.push_back({{"node", node}, {"weight", w}});
    doc["auto_interleave_weights"] = auto_weights;
    const auto vm = t.source() == ccnuma::topology_source::system ? ccnuma::emulated_machine::current() : std::nullopt;
    doc["emulated_machine"] = vm ? json(vm->to_string()) : json(nullptr);
    doc["warnings"] = warnings;
    if (t.is_this_system())
        for (const char* name : tools::slurm::binding_variables)
            if (const auto v = tools::slurm::variable(name)) doc["slurm"][name] = *v;
    std::puts(doc.dump().c_str());
}

}  // namespace tools::info
