// What a placement policy means: the one place (meaning_of) that turns a policy into an
// action, a mode, nodes, a schedule, a page size and a name, and the node checks made against
// the kernel's allowed set. How the kernel is then asked is the OS layer's (src/os/).

#include "placement_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>

#include <algorithm>
#include <variant>

namespace ccnuma {

namespace detail {

std::size_t unit_bytes(page_kind p) noexcept { return p == page_kind::huge ? huge_page_bytes() : page_bytes(); }

std::uint64_t node_memory(unsigned node) { return node_meminfo(node, "MemTotal").value_or(0); }

namespace {
// Where the snapshot describes another machine (CCNUMA_TOPOLOGY, HWLOC_XMLFILE), say that the
// allowed set is this machine's: the pages are placed here.
std::string snapshot_note() {
    try {
        const auto& t = topology::current();
        if (!t.is_this_system())
            return " (this machine's kernel: the topology " + quote(t.description()) +
                   " describes another machine, but pages are placed on this one)";
    } catch (...) {
        // A bad CCNUMA_TOPOLOGY is reported where a topology is asked for, not here.
    }
    return {};
}
}  // namespace

void check_node(unsigned node, const std::string& what) {
    const auto allowed = allowed_memory_nodes();
    if (std::find(allowed.begin(), allowed.end(), node) == allowed.end())
        throw_error(errc::invalid_argument, what + ": node " + std::to_string(node) + " is not in the allowed set {" +
                                                format_list(allowed) + "}" + snapshot_note());
}

void check_node(unsigned node, const std::string& what, std::span<const unsigned> allowed) {
    if (std::find(allowed.begin(), allowed.end(), node) == allowed.end())
        throw_error(errc::invalid_argument, what + ": node " + std::to_string(node) + " is not in the allowed set {" +
                                                format_list(allowed) + "}");
}

namespace {
std::string with_args(const std::string& name, const std::string& args) {
    return args.empty() ? name : name + "(" + (args[0] == ',' ? args.substr(1) : args) + ")";
}
std::string schedule_args(const schedule& s) {
    std::string r;
    if (s.chunk) r += "chunk=" + std::to_string(s.chunk);
    if (s.threads) r += std::string(r.empty() ? "" : ",") + "threads=" + std::to_string(s.threads);
    if (!s.partition.empty()) r += std::string(r.empty() ? "" : ",") + to_string(s.partition);
    return r;
}
std::string page_args(page_kind pg) { return pg == page_kind::huge ? ",huge" : ""; }

// One overload per policy type, and no generic one: std::visit then refuses to compile a policy
// variant with an alternative that is not handled here.
// The fields every policy sets; the tier plans add theirs after.
policy_meaning meaning(policy_meaning::action act, int mode, std::vector<unsigned> nodes, bool spills, schedule sched,
                       page_kind page, std::string name) {
    policy_meaning m;
    m.act = act;
    m.mode = mode;
    m.nodes = std::move(nodes);
    m.spills = spills;
    m.sched = sched;
    m.page = page;
    m.name = std::move(name);
    return m;
}

struct meaning_visitor {
    policy_meaning operator()(const first_touch& x) const {
        if (x.split_by_bandwidth) {
            const std::string sched = schedule_args(x.sched), sched_tail = sched.empty() ? sched : "," + sched;
            // Spills: a thread on a PU with one local node touches plainly, wherever that lands.
            auto m = meaning(policy_meaning::action::write_planned, MPOL_BIND, {}, true, x.sched, x.page,
                             with_args("first_touch", "tiers=by_bandwidth" + sched_tail + page_args(x.page)));
            m.how = policy_meaning::plan::tiers;
            return m;
        }
        return meaning(policy_meaning::action::touch, 0, {}, false, x.sched, x.page,
                with_args("first_touch", schedule_args(x.sched) + page_args(x.page)));
    }
    policy_meaning operator()(const blocked& x) const {
        return meaning(policy_meaning::action::bind_units, MPOL_BIND, {}, false, x.sched, x.page,
                with_args("blocked", schedule_args(x.sched) + page_args(x.page)));
    }
    policy_meaning operator()(const interleave& x) const {
        return meaning(policy_meaning::action::kernel_policy, MPOL_INTERLEAVE, x.node_set, false, {}, x.page,
                with_args("interleave", (x.node_set.empty() ? std::string("all") : format_list(x.node_set)) +
                                            page_args(x.page)));
    }
    policy_meaning operator()(const on_node& x) const {
        return meaning(policy_meaning::action::kernel_policy, MPOL_BIND, {x.node}, false, {}, x.page,
                with_args("on_node", std::to_string(x.node) + page_args(x.page)));
    }
    policy_meaning operator()(const preferred& x) const {
        return meaning(policy_meaning::action::kernel_policy, MPOL_PREFERRED, {x.node}, true, {}, x.page,
                with_args("preferred", std::to_string(x.node) + page_args(x.page)));
    }
    policy_meaning operator()(const weighted_interleave& x) const {
        const std::string nodes = x.node_set.empty() ? std::string("all") : format_list(x.node_set);
        if (x.weight_set.empty() && !x.from_bandwidth)
            return meaning(policy_meaning::action::kernel_policy, mpol_weighted_interleave, x.node_set, false, {}, x.page,
                    with_args("weighted_interleave", nodes + page_args(x.page)));
        std::string args;
        if (x.from_bandwidth) {
            args = nodes + ",by_bandwidth";
        } else {
            // "0:2,2:1": each node with its weight; a count mismatch still names every input.
            const std::size_t n = std::max(x.node_set.size(), x.weight_set.size());
            for (std::size_t i = 0; i < n; ++i)
                args += std::string(i ? "," : "") + (i < x.node_set.size() ? std::to_string(x.node_set[i]) : "?") +
                        ":" + (i < x.weight_set.size() ? std::to_string(x.weight_set[i]) : "?");
            if (x.node_set.empty()) {
                // Weights are not a set: "all:2,2,1", never compressed to a range.
                args = "all:";
                for (std::size_t i = 0; i < x.weight_set.size(); ++i)
                    args += (i ? "," : "") + std::to_string(x.weight_set[i]);
            }
        }
        auto m = meaning(policy_meaning::action::write_planned, MPOL_BIND, x.node_set, false, {}, x.page,
                         with_args("weighted_interleave", args + page_args(x.page)));
        m.how = policy_meaning::plan::weights;
        m.weights = x.weight_set;
        m.weights_by_bandwidth = x.from_bandwidth;
        return m;
    }
    policy_meaning operator()(const fastest& x) const {
        auto m = meaning(policy_meaning::action::write_planned, MPOL_PREFERRED, {}, true, x.sched, x.page,
                         with_args("fastest", schedule_args(x.sched) + page_args(x.page)));
        m.how = policy_meaning::plan::fastest;
        return m;
    }
};
}  // namespace

policy_meaning meaning_of(const policy& p) { return std::visit(meaning_visitor{}, p); }

namespace {
// A node the kernel lists without memory (MemTotal 0: CPUs only) can hold no page of a weighted
// interleave; where meminfo cannot be read, the kernel decides.
void check_has_memory(unsigned node, const std::string& what) {
    if (node_meminfo(node, "MemTotal").value_or(1) == 0)
        throw_error(errc::invalid_argument, what + ": node " + std::to_string(node) +
                                                " has no memory (MemTotal 0) (valid: nodes with memory)");
}

void check_weights(const policy_meaning& m, const std::vector<unsigned>& nodes, const std::string& what) {
    if (m.how != policy_meaning::plan::weights && m.mode != mpol_weighted_interleave) return;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (std::find(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(i), nodes[i]) !=
            nodes.begin() + static_cast<std::ptrdiff_t>(i))
            throw_error(errc::invalid_argument, what + ": node " + std::to_string(nodes[i]) +
                                                    " is named twice (valid: each node once)");
        check_has_memory(nodes[i], what);
    }
    if (m.weights_by_bandwidth || m.mode == mpol_weighted_interleave) return;
    if (m.weights.size() != nodes.size())
        throw_error(errc::invalid_argument,
                    what + ": " + std::to_string(m.weights.size()) + " weights for " + std::to_string(nodes.size()) +
                        " nodes {" + format_list(nodes) + "} (valid: one weight per node" +
                        (m.nodes.empty() ? std::string(", and no nodes means every allowed node") : std::string()) +
                        ")");
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (m.weights[i] == 0 || m.weights[i] > max_interleave_weight)
            throw_error(errc::invalid_argument, what + ": weight " + std::to_string(m.weights[i]) + " of node " +
                                                    std::to_string(nodes[i]) + " is out of range (valid: 1 to " +
                                                    std::to_string(max_interleave_weight) +
                                                    ", the kernel's range of a weighted-interleave weight)");
}
}  // namespace

std::vector<unsigned> policy_nodes(const policy_meaning& m, const std::string& what) {
    for (unsigned n : m.nodes) check_node(n, what);
    auto nodes = m.nodes.empty() || m.spills ? allowed_memory_nodes() : m.nodes;
    check_weights(m, m.nodes.empty() ? nodes : m.nodes, what);
    return nodes;
}

}  // namespace detail

std::string to_string(const policy& p) { return detail::meaning_of(p).name; }

page_kind page_kind_of(const policy& p) noexcept {
    return std::visit([](const auto& x) { return x.page; }, p);
}

}  // namespace ccnuma
