// What a placement policy means: the one place (meaning_of) that turns a policy into an
// action, a mode, nodes, a schedule, a page size and a name, and the node checks made against
// the kernel's allowed set. How the kernel is then asked is the OS layer's (src/os/).

#include "scan.hpp"

#include "placement_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>

#include <algorithm>
#include <limits>
#include <string_view>
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
std::string with_args(std::string_view name, const std::string& args) {
    return args.empty() ? std::string(name) : std::string(name) + "(" + (args[0] == ',' ? args.substr(1) : args) + ")";
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
        if (x.tiers_by_bandwidth()) {
            const std::string sched = schedule_args(x.sched), sched_tail = sched.empty() ? sched : "," + sched;
            // Spills: a thread on a PU with one local node touches plainly, wherever that lands.
            auto m = meaning(policy_meaning::action::write_planned, MPOL_BIND, {}, true, x.sched, x.page,
                             with_args(first_touch::name, "tiers=by_bandwidth" + sched_tail + page_args(x.page)));
            m.how = policy_meaning::plan::tiers;
            return m;
        }
        return meaning(policy_meaning::action::touch, 0, {}, false, x.sched, x.page,
                with_args(first_touch::name, schedule_args(x.sched) + page_args(x.page)));
    }
    policy_meaning operator()(const blocked& x) const {
        return meaning(policy_meaning::action::bind_units, MPOL_BIND, {}, false, x.sched, x.page,
                with_args(blocked::name, schedule_args(x.sched) + page_args(x.page)));
    }
    policy_meaning operator()(const interleave& x) const {
        auto m = meaning(policy_meaning::action::kernel_policy, MPOL_INTERLEAVE, x.nodes(), false, {}, x.page,
                with_args(interleave::name, (x.nodes().empty() ? std::string("all") : format_list(x.nodes())) +
                                            page_args(x.page)));
        m.interleaves = true;
        return m;
    }
    policy_meaning operator()(const on_node& x) const {
        return meaning(policy_meaning::action::kernel_policy, MPOL_BIND, {x.node}, false, {}, x.page,
                with_args(on_node::name, std::to_string(x.node) + page_args(x.page)));
    }
    policy_meaning operator()(const preferred& x) const {
        return meaning(policy_meaning::action::kernel_policy, MPOL_PREFERRED, {x.node}, true, {}, x.page,
                with_args(preferred::name, std::to_string(x.node) + page_args(x.page)));
    }
    policy_meaning operator()(const weighted_interleave& x) const {
        const std::string nodes = x.nodes().empty() ? std::string("all") : format_list(x.nodes());
        if (x.weights().empty() && !x.weights_by_bandwidth()) {
            auto m = meaning(policy_meaning::action::kernel_policy, mpol_weighted_interleave, x.nodes(), false, {}, x.page,
                    with_args(weighted_interleave::name, nodes + page_args(x.page)));
            m.interleaves = true;
            return m;
        }
        std::string args;
        if (x.weights_by_bandwidth()) {
            args = nodes + ",by_bandwidth";
        } else {
            // "0:2,2:1": each node with its weight; a count mismatch still names every input.
            const std::size_t n = std::max(x.nodes().size(), x.weights().size());
            for (std::size_t i = 0; i < n; ++i)
                args += std::string(i ? "," : "") + (i < x.nodes().size() ? std::to_string(x.nodes()[i]) : "?") +
                        ":" + (i < x.weights().size() ? std::to_string(x.weights()[i]) : "?");
            if (x.nodes().empty()) {
                // Weights are not a set: "all:2,2,1", never compressed to a range.
                args = "all:";
                for (std::size_t i = 0; i < x.weights().size(); ++i)
                    args += (i ? "," : "") + std::to_string(x.weights()[i]);
            }
        }
        auto m = meaning(policy_meaning::action::write_planned, MPOL_BIND, x.nodes(), false, {}, x.page,
                         with_args(weighted_interleave::name, args + page_args(x.page)));
        m.how = policy_meaning::plan::weights;
        m.weights = x.weights();
        m.weights_by_bandwidth = x.weights_by_bandwidth();
        return m;
    }
    policy_meaning operator()(const fastest& x) const {
        auto m = meaning(policy_meaning::action::write_planned, MPOL_PREFERRED, {}, true, x.sched, x.page,
                         with_args(fastest::name, schedule_args(x.sched) + page_args(x.page)));
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

namespace {
constexpr std::string_view policy_forms =
    "first_touch, blocked or fastest with (chunk=N, threads=N, partition(B0,...,Bn), huge; first_touch also "
    "tiers=by_bandwidth), interleave(all|NODES[,huge]), on_node(N[,huge]), preferred(N[,huge]), "
    "weighted_interleave(all|NODES[,by_bandwidth] or N:W,... or all:W,...[,huge]), as to_string writes them";

[[noreturn]] void bad_policy(std::string_view text, const std::string& why) {
    detail::throw_error(errc::invalid_argument, "parse_policy", detail::quote(text) + ": " + why, policy_forms);
}

// text's arguments between the outer parentheses, split at the commas outside inner ones
// (partition(0,40,100) is one argument).
std::vector<std::string_view> split_arguments(std::string_view text, std::string_view inside) {
    std::vector<std::string_view> args;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= inside.size(); ++i) {
        const char c = i < inside.size() ? inside[i] : ',';
        if (c == '(') ++depth;
        if (c == ')' && --depth < 0) bad_policy(text, "a ')' that closes nothing");
        if (c == ',' && depth == 0) {
            if (i == start) bad_policy(text, "an empty argument");
            args.push_back(inside.substr(start, i - start));
            start = i + 1;
        }
    }
    if (depth != 0) bad_policy(text, "a '(' that is not closed");
    return args;
}

std::uint64_t number(std::string_view text, std::string_view digits, std::string_view what, std::uint64_t max) {
    const auto v = detail::whole_number<std::uint64_t>(digits);
    if (!v || *v > max)
        bad_policy(text, std::string(what) + " " + detail::quote(digits) + " is not a number from 0 to " +
                             std::to_string(max));
    return *v;
}

constexpr std::uint64_t max_node = (1u << 20) - 1;  // parse_list's bound: far above any machine

// The nodes of "all" or a list: empty for all, as the policies hold it.
std::vector<unsigned> node_list(std::string_view text, const std::vector<std::string_view>& args) {
    if (args.size() == 1 && args[0] == "all") return {};
    std::string joined;
    for (const auto a : args) joined += std::string(joined.empty() ? "" : ",") + std::string(a);
    if (joined.empty()) bad_policy(text, "no nodes (\"all\" for every allowed node)");
    try {
        return parse_list(joined, "node list");
    } catch (const error& e) {
        bad_policy(text, e.reason());
    }
}

// The arguments of first_touch, blocked and fastest, into their schedule and page kind.
template <class P>
P scheduled(std::string_view text, const std::vector<std::string_view>& args) {
    P p;
    for (const auto a : args) {
        if (a == "huge") {
            p.pages(page_kind::huge);
        } else if (a.starts_with("chunk=")) {
            p.chunk(number(text, a.substr(6), "chunk", std::numeric_limits<std::size_t>::max()));
        } else if (a.starts_with("threads=")) {
            p.threads(static_cast<unsigned>(number(text, a.substr(8), "threads", max_node)));
        } else if (a.starts_with("partition(") && a.ends_with(")")) {
            std::vector<std::size_t> bounds;
            for (const auto b : split_arguments(text, a.substr(10, a.size() - 11))) {
                if (b == "...") bad_policy(text, "a partition that to_string shortened (\"...\"): give every boundary");
                bounds.push_back(number(text, b, "partition boundary", std::numeric_limits<std::size_t>::max()));
            }
            try {
                p.partition(ccnuma::partition(std::move(bounds)));
            } catch (const error& e) {
                bad_policy(text, e.reason());
            }
        } else if constexpr (std::is_same_v<P, first_touch>) {
            if (a == "tiers=by_bandwidth") p.tiers(by_bandwidth);
            else bad_policy(text, "unknown argument " + detail::quote(a));
        } else {
            bad_policy(text, "unknown argument " + detail::quote(a));
        }
    }
    return p;
}

// Removes a trailing "huge" and says whether there was one.
bool take_huge(std::vector<std::string_view>& args) {
    if (args.empty() || args.back() != "huge") return false;
    args.pop_back();
    return true;
}

template <class P>
P one_node(std::string_view text, std::vector<std::string_view> args) {
    const bool huge = take_huge(args);
    if (args.size() != 1) bad_policy(text, std::string(P::name) + " takes one node");
    return P(static_cast<unsigned>(number(text, args[0], "node", max_node)), huge ? page_kind::huge : page_kind::base);
}

weighted_interleave weighted(std::string_view text, std::vector<std::string_view> args) {
    weighted_interleave p;
    if (take_huge(args)) p.pages(page_kind::huge);
    if (args.empty()) bad_policy(text, "weighted_interleave needs nodes (\"all\" for every allowed node)");
    if (args.back() == "by_bandwidth") {
        args.pop_back();
        return p.nodes(node_list(text, args)).weights(by_bandwidth);
    }
    if (args[0].starts_with("all:")) {  // all:2,1,1: the weights of every allowed node, in order
        args[0].remove_prefix(4);
        std::vector<unsigned> weights;
        for (const auto w : args) weights.push_back(static_cast<unsigned>(number(text, w, "weight", max_node)));
        return p.weights(std::move(weights));
    }
    if (args[0].find(':') == std::string_view::npos) return p.nodes(node_list(text, args));  // the kernel's weights
    std::vector<unsigned> nodes, weights;
    for (const auto a : args) {
        const auto colon = a.find(':');
        if (colon == std::string_view::npos) bad_policy(text, "node " + detail::quote(a) + " has no weight (N:W)");
        nodes.push_back(static_cast<unsigned>(number(text, a.substr(0, colon), "node", max_node)));
        weights.push_back(static_cast<unsigned>(number(text, a.substr(colon + 1), "weight", max_node)));
    }
    return p.nodes(std::move(nodes)).weights(std::move(weights));
}

// One entry per alternative of policy, by its name: a policy without an entry here is one that
// parse_policy cannot read, which the round-trip test over every alternative catches.
template <class P>
policy parsed(std::string_view text, std::vector<std::string_view> args) {
    if constexpr (std::is_same_v<P, first_touch> || std::is_same_v<P, blocked> || std::is_same_v<P, fastest>) {
        return scheduled<P>(text, args);
    } else if constexpr (std::is_same_v<P, interleave>) {
        interleave p;
        if (take_huge(args)) p.pages(page_kind::huge);
        return args.empty() ? p : p.nodes(node_list(text, args));
    } else if constexpr (std::is_same_v<P, on_node> || std::is_same_v<P, preferred>) {
        return one_node<P>(text, std::move(args));
    } else {
        static_assert(std::is_same_v<P, weighted_interleave>, "parse_policy: a policy without a parser");
        return weighted(text, std::move(args));
    }
}

template <class... P>
policy parse_alternative(std::string_view text, std::string_view name, std::vector<std::string_view> args,
                         std::variant<P...>*) {
    policy result;
    const bool found = ((name == P::name ? (result = parsed<P>(text, args), true) : false) || ...);
    if (!found) bad_policy(text, "unknown policy " + detail::quote(name) + " (the policies: " CCNUMA_POLICY_NAMES ")");
    return result;
}
}  // namespace

policy parse_policy(std::string_view text) {
    const auto open = text.find('(');
    const std::string_view name = text.substr(0, open);
    std::vector<std::string_view> args;
    if (open != std::string_view::npos) {
        if (!text.ends_with(")") || text.size() < open + 2) bad_policy(text, "the arguments do not end with ')'");
        if (text.size() == open + 2) bad_policy(text, "empty parentheses");
        args = split_arguments(text, text.substr(open + 1, text.size() - open - 2));
    }
    return parse_alternative(text, name, std::move(args), static_cast<policy*>(nullptr));
}

page_kind page_kind_of(const policy& p) noexcept {
    return std::visit([](const auto& x) { return x.page; }, p);
}

}  // namespace ccnuma
