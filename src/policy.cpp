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
    return r;
}
std::string page_args(page_kind pg) { return pg == page_kind::huge ? ",huge" : ""; }

// One overload per policy type, and no generic one: std::visit then refuses to compile a policy
// variant with an alternative that is not handled here.
struct meaning_visitor {
    policy_meaning operator()(const first_touch& x) const {
        return {policy_meaning::action::touch, 0, {}, false, x.sched, x.page,
                with_args("first_touch", schedule_args(x.sched) + page_args(x.page))};
    }
    policy_meaning operator()(const blocked& x) const {
        return {policy_meaning::action::bind_units, MPOL_BIND, {}, false, x.sched, x.page,
                with_args("blocked", schedule_args(x.sched) + page_args(x.page))};
    }
    policy_meaning operator()(const interleave& x) const {
        return {policy_meaning::action::kernel_policy, MPOL_INTERLEAVE, x.node_set, false, {}, x.page,
                with_args("interleave", (x.node_set.empty() ? std::string("all") : format_list(x.node_set)) +
                                            page_args(x.page))};
    }
    policy_meaning operator()(const on_node& x) const {
        return {policy_meaning::action::kernel_policy, MPOL_BIND, {x.node}, false, {}, x.page,
                with_args("on_node", std::to_string(x.node) + page_args(x.page))};
    }
    policy_meaning operator()(const preferred& x) const {
        return {policy_meaning::action::kernel_policy, MPOL_PREFERRED, {x.node}, true, {}, x.page,
                with_args("preferred", std::to_string(x.node) + page_args(x.page))};
    }
};
}  // namespace

policy_meaning meaning_of(const policy& p) { return std::visit(meaning_visitor{}, p); }

std::vector<unsigned> policy_nodes(const policy_meaning& m, const std::string& what) {
    for (unsigned n : m.nodes) check_node(n, what);
    return m.nodes.empty() || m.spills ? allowed_memory_nodes() : m.nodes;
}

}  // namespace detail

std::string to_string(const policy& p) { return detail::meaning_of(p).name; }

page_kind page_kind_of(const policy& p) noexcept {
    return std::visit([](const auto& x) { return x.page; }, p);
}

}  // namespace ccnuma
