// --show and --hardware: this process and this machine, in numactl's words and format.

#include "run.hpp"

#include "../common/slurm.hpp"

#include <ccnuma/detail/json.hpp>
#include <ccnuma/detail/os.hpp>

#include <ccnuma/system.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

namespace tools::run {

// numactl's name of a policy (policy_name() in numactl.c).
namespace {
std::string numactl_name(ccnuma::memory_policy::mode m) {
    using mode = ccnuma::memory_policy::mode;
    switch (m) {
        case mode::local: return "default";
        case mode::bind: return "bind";
        case mode::interleave: return "interleave";
        case mode::preferred: return "preferred";
        case mode::preferred_many: return "preferred-many";
        case mode::weighted_interleave: return "weighted-interleave";
    }
    return "unknown";
}

/// The kernel's weighted-interleave weight of each allowed node (node, weight), node
/// ascending; empty where the kernel has none (before Linux 6.9).
std::vector<std::pair<unsigned, unsigned>> kernel_weights(const ccnuma::topology& topo) {
    std::vector<std::pair<unsigned, unsigned>> w;
    for (const auto& n : topo.numa_nodes())
        if (n.interleave_weight) w.emplace_back(n.os_index, n.interleave_weight);
    return w;
}

// numactl's printmask(): "label: 0 1 2 \n".
void print_mask(const char* label, const std::vector<unsigned>& v) {
    std::string s;
    for (unsigned x : v) s += std::to_string(x) + " ";
    std::printf("%s: %s\n", label, s.c_str());
}

}  // namespace

// numactl --show: what this process runs on and allocates from, with numactl's labels and
// meanings (libnuma's numa_get_membind: the policy's nodes under bind, else every allowed
// node; "preferred": the policy's nodes), then ccnuma's own lines.
// Over 80 lines: numactl --show's lines in numactl's order, then ccnuma's, each from one fact;
// the text and the JSON are written side by side so that they cannot say different things.
int show(bool json) {
    const std::vector<unsigned> cpus = ccnuma::detail::this_thread_cpus();
    ccnuma::topology_options to;
    to.use_environment = false;
    const auto topo = ccnuma::topology::load(to);
    std::vector<unsigned> nodes;
    for (const auto& n : topo.numa_nodes())
        for (unsigned cpu : n.cpus)
            if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) {
                nodes.push_back(n.os_index);
                break;
            }
    std::sort(nodes.begin(), nodes.end());
    const auto policy = ccnuma::current_memory_policy();
    using mode = ccnuma::memory_policy::mode;
    const auto mems = policy.kind == mode::bind ? policy.nodes : ccnuma::parse_node_set("all");
    const auto spec = ccnuma::binding_spec::from_environment();
    const auto weights = kernel_weights(topo);
    // MPOL_WEIGHTED_INTERLEAVE's pattern: each node of the policy as many pages in a row as its
    // weight says, the round repeating; the kernel takes a node without a weight as 1.
    std::vector<std::pair<unsigned, unsigned>> pattern;
    if (policy.kind == mode::weighted_interleave)
        for (unsigned node : policy.nodes) {
            unsigned w = 1;
            for (const auto& [n, weight] : weights)
                if (n == node) w = weight;
            pattern.emplace_back(node, w);
        }
    // The kernel's own next interleave node of this process, as numactl --show prints its own.
    const std::optional<unsigned> next = ccnuma::next_interleave_node();
    const std::string next_text = next ? std::to_string(*next) : "none";
    if (json) {
        ccnuma::detail::json doc;
        doc["schema_version"] = json_schema_version;
        doc["policy"] = numactl_name(policy.kind);
        doc["memory_policy"] = ccnuma::detail::to_json_value(policy);
        doc["physcpubind"] = cpus;
        doc["nodebind"] = nodes;
        doc["membind"] = mems;
        doc["preferred"] = policy.nodes;
        doc["interleave_next"] = next ? ccnuma::detail::json(*next) : ccnuma::detail::json(nullptr);
        doc["binding_spec"] = spec.empty() ? ccnuma::detail::json(nullptr) : ccnuma::detail::json(spec.to_string());
        doc["interleave_weights"] = ccnuma::detail::json::array();
        for (const auto& [n, w] : weights) doc["interleave_weights"].push_back({{"node", n}, {"weight", w}});
        if (!pattern.empty()) {
            doc["interleave_pattern"] = ccnuma::detail::json::array();
            for (const auto& [n, w] : pattern) doc["interleave_pattern"].push_back({{"node", n}, {"pages", w}});
        }
        for (const char* name : tools::slurm::binding_variables)
            if (const auto v = tools::slurm::variable(name)) doc["slurm"][name] = *v;
        std::puts(doc.dump().c_str());
        return 0;
    }
    std::printf("policy: %s\n", numactl_name(policy.kind).c_str());
    const std::string first = policy.nodes.empty() ? "" : std::to_string(policy.nodes.front());
    switch (policy.kind) {
        case mode::local: std::printf("preferred node: current\n"); break;
        case mode::interleave:
        case mode::weighted_interleave: std::printf("preferred node: %s (interleave next)\n", next_text.c_str()); break;
        case mode::preferred_many: std::printf("preferred node: %s (preferred-many)\n", first.c_str()); break;
        default: std::printf("preferred node: %s\n", first.c_str()); break;
    }
    if (policy.kind == mode::interleave || policy.kind == mode::weighted_interleave) {
        print_mask("interleavemask", policy.nodes);
        std::printf("interleavenode: %s\n", next_text.c_str());
    }
    print_mask("physcpubind", cpus);
    print_mask("cpubind", nodes);
    print_mask("nodebind", nodes);
    print_mask("membind", mems);
    print_mask("preferred", policy.nodes);
    // ccnuma's additions, after numactl's lines.
    std::printf("ccnuma policy: %s\n", policy.to_string().c_str());
    std::printf("numa balancing: %s\n", policy.numa_balancing ? "on (MPOL_F_NUMA_BALANCING)" : "off");
    std::string in_force;
    for (const auto& [n, w] : weights)
        in_force += (in_force.empty() ? "" : " ") + ("node" + std::to_string(n)) + "=" + std::to_string(w);
    // Linux 6.16 derives them from the bandwidths until one is written (weighted_interleave/auto).
    if (!in_force.empty() && ccnuma::kernel_settings::read().interleave_auto.value_or(false))
        in_force += " (auto: the kernel derives them from the nodes' bandwidths)";
    std::printf("weighted interleave weights: %s\n",
                in_force.empty() ? "none (no /sys/kernel/mm/mempolicy/weighted_interleave: Linux 6.9 or later has them)"
                                 : in_force.c_str());
    if (!pattern.empty()) {
        std::string round;
        unsigned pages = 0;
        for (const auto& [n, w] : pattern) {
            round += (round.empty() ? "" : ", ") + ("node " + std::to_string(n)) + " x" + std::to_string(w);
            pages += w;
        }
        std::printf("weighted interleave pattern: %s (a round of %u page%s)\n", round.c_str(), pages, pages == 1 ? "" : "s");
    }
    std::printf("binding spec: %s\n", spec.empty() ? "none" : spec.to_string().c_str());
    for (const auto& line : tools::slurm::binding_lines()) std::printf("slurm: %s\n", line.c_str());
    return 0;
}

// -w on a tiered machine whose kernel weights are all equal interleaves DRAM and far memory
// page for page, which wastes DRAM's bandwidth; the weights the kernel's own rule derives from
// the bandwidths (auto_interleave_weights, Linux 6.16's weighted_interleave/auto) say what to set.
void hint_kernel_weights(const ccnuma::memory_policy& policy, const ccnuma::topology& topo) {
    if (policy.kind != ccnuma::memory_policy::mode::weighted_interleave || !topo.is_tiered()) return;
    const auto weights = kernel_weights(topo);
    std::vector<unsigned> mine;
    for (const auto& [n, w] : weights)
        if (std::find(policy.nodes.begin(), policy.nodes.end(), n) != policy.nodes.end()) mine.push_back(w);
    if (mine.size() < 2 || std::adjacent_find(mine.begin(), mine.end(), std::not_equal_to<>{}) != mine.end()) return;
    std::string set;
    for (const auto& [n, w] : ccnuma::auto_interleave_weights(topo))
        if (std::find(policy.nodes.begin(), policy.nodes.end(), n) != policy.nodes.end())
            set += (set.empty() ? "" : "; ") + ("echo " + std::to_string(w)) +
                   " | sudo tee /sys/kernel/mm/mempolicy/weighted_interleave/node" + std::to_string(n);
    std::fprintf(stderr,
                 "ccnuma-run: note: the kernel's weighted-interleave weights of nodes %s are all %u on this tiered "
                 "machine, so -w spreads the pages evenly over tiers of different bandwidth; %s, or place one "
                 "allocation with ccnuma::weighted_interleave{}.weights(ccnuma::by_bandwidth)\n",
                 ccnuma::format_list(policy.nodes).c_str(), mine.front(),
                 set.empty() ? "the firmware gives no bandwidths: measure them with ccnuma-bench tiers and set "
                               "/sys/kernel/mm/mempolicy/weighted_interleave/node<N> from them"
                             : ("the bandwidths give: " + set).c_str());
}

// numactl -H: nodes, their CPUs, size and free memory, and the distance table, in numactl's format.
int hardware() {
    ccnuma::topology_options to;
    to.use_environment = false;
    to.use_affinity_mask = false;  // numactl -H lists each node's CPUs, whatever this process's mask
    const auto topo = ccnuma::topology::load(to);
    std::vector<unsigned> ids;
    for (const auto& n : topo.numa_nodes()) ids.push_back(n.os_index);
    std::printf("available: %zu nodes (%s)\n", ids.size(), ccnuma::format_list(ids).c_str());
    for (const auto& n : topo.numa_nodes()) {
        std::string cpus;
        for (unsigned c : n.cpus) cpus += " " + std::to_string(c);
        std::printf("node %u cpus:%s\n", n.os_index, cpus.c_str());
        std::printf("node %u size: %llu MB\n", n.os_index, static_cast<unsigned long long>(n.memory_bytes >> 20));
        const auto free = ccnuma::node_free_bytes(n.os_index);
        if (free) std::printf("node %u free: %llu MB\n", n.os_index, static_cast<unsigned long long>(*free >> 20));
        else std::printf("node %u free: <not available>\n", n.os_index);
    }
    auto d = topo.distances();
    // hwloc keeps no matrix for one node; its distance to itself is the local 10 (ACPI SLIT),
    // which numactl reads from sysfs.
    if (d.empty() && ids.size() == 1) d = {{10}};
    if (d.size() != ids.size() || d.empty()) {
        std::printf("No distance information available.\n");
        return 0;
    }
    std::printf("node distances:\nnode ");
    for (unsigned i : ids) std::printf("%3u ", i);
    std::printf("\n");
    for (std::size_t i = 0; i < ids.size(); ++i) {
        std::printf("%3u: ", ids[i]);
        for (std::size_t k = 0; k < ids.size(); ++k) std::printf("%3u ", d[i][k]);
        std::printf("\n");
    }
    return 0;
}

}  // namespace tools::run
