// The thread's default memory policy, so that ccnuma needs no libnuma. The system calls are the
// OS layer's (src/os/mempolicy.cpp); the allowed set and its error message are placement's
// (placement_internal.hpp), so both say the same about a node that is not allowed.

#include "list_internal.hpp"
#include "placement_internal.hpp"

#include <ccnuma/detail/json.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/memory_policy.hpp>
#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

namespace ccnuma {

namespace {

// The kernel's numbers for the modes newer than Debian 12's <linux/mempolicy.h>; the weighted
// interleave's is placement_internal.hpp's, which weighted_interleave{} uses too.
constexpr int mpol_preferred_many = 5;
using detail::mpol_weighted_interleave;
// MPOL_F_NUMA_BALANCING (Linux 5.12), also newer than some headers.
constexpr int mpol_f_numa_balancing = 1 << 13;

std::string name(memory_policy::mode m) {
    switch (m) {
        case memory_policy::mode::bind: return "bind";
        case memory_policy::mode::interleave: return "interleave";
        case memory_policy::mode::preferred: return "preferred";
        case memory_policy::mode::preferred_many: return "preferred_many";
        case memory_policy::mode::weighted_interleave: return "weighted_interleave";
        case memory_policy::mode::local: return "local";
    }
    return "mode " + std::to_string(static_cast<int>(m));
}

bool known(memory_policy::mode m) { return name(m).rfind("mode ", 0) != 0; }

// Said in our words before the kernel sees it: it answers a bare EINVAL to bind or interleave
// without nodes and to local with nodes, and it silently keeps only the first node of a
// preferred set, which would place pages where the caller did not say.
void check_shape(const memory_policy& p, const std::string& what) {
    using mode = memory_policy::mode;
    std::string why;
    if (!known(p.kind))
        why = name(p.kind) + " is not a memory_policy::mode (expected local, bind, interleave, preferred, "
                             "preferred_many or weighted_interleave)";
    else if (p.kind == mode::local && !p.nodes.empty()) why = "local takes no nodes";
    else if (p.kind == mode::preferred && p.nodes.size() != 1)
        why = "preferred takes exactly one node, not " + std::to_string(p.nodes.size()) +
              " (use interleave or bind for several)";
    else if (p.kind != mode::local && p.nodes.empty())
        why = name(p.kind) + " needs at least one node";
    else if (p.numa_balancing && p.kind != mode::bind && p.kind != mode::preferred_many)
        why = "NUMA balancing (MPOL_F_NUMA_BALANCING) goes with bind or preferred_many, not " + name(p.kind) +
              " (numactl ignores --balancing there)";
    if (!why.empty()) detail::throw_error(errc::invalid_argument, what + ": " + why);
}

std::vector<unsigned> sorted_unique(std::span<const unsigned> nodes) {
    std::vector<unsigned> v(nodes.begin(), nodes.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

}  // namespace

memory_policy memory_policy::parse(mode kind, std::string_view node_set) {
    return parse(kind, node_set, detail::allowed_memory_nodes());
}

memory_policy memory_policy::parse(mode kind, std::string_view node_set, std::span<const unsigned> allowed) {
    const std::string what = name(kind) + " node set " + detail::quote(node_set);
    if (!known(kind)) check_shape(memory_policy{kind, {}}, what);
    if (kind == mode::local) {
        if (!node_set.empty()) detail::throw_error(errc::invalid_argument, what + ": local takes no nodes");
        return local();
    }
    memory_policy p{kind, parse_node_set(node_set, allowed)};
    check_shape(p, what);
    return p;
}

std::string memory_policy::to_string() const {
    return (nodes.empty() ? name(kind) : name(kind) + "(" + format_list(nodes) + ")") +
           (numa_balancing ? "+balancing" : "");
}

namespace detail {
json to_json_value(const memory_policy& p) {
    json j = {{"mode", name(p.kind)}, {"nodes", sorted_unique(p.nodes)}};
    if (p.numa_balancing) j["numa_balancing"] = true;
    return j;
}
}  // namespace detail

std::string memory_policy::to_json() const { return detail::dump(detail::to_json_value(*this)); }

void set_memory_policy(const memory_policy& p) {
    const std::string what = "set_memory_policy " + p.to_string();
    check_shape(p, what);
    const auto allowed = detail::allowed_memory_nodes();
    for (unsigned n : p.nodes) detail::check_node(n, what, allowed);
    using mode = memory_policy::mode;
    const int kernel_mode = p.kind == mode::bind                  ? MPOL_BIND
                            : p.kind == mode::interleave          ? MPOL_INTERLEAVE
                            : p.kind == mode::preferred           ? MPOL_PREFERRED
                            : p.kind == mode::preferred_many      ? mpol_preferred_many
                            : p.kind == mode::weighted_interleave ? mpol_weighted_interleave
                                                                  : MPOL_DEFAULT;
    const int flags = p.numa_balancing ? mpol_f_numa_balancing : 0;
    if (const int err = detail::set_thread_policy(kernel_mode | flags, p.nodes)) {
        // A kernel without the mode answers EINVAL, as for a bad argument; the shape and the
        // nodes are checked above, so here it means the mode.
        if (err == EINVAL && kernel_mode == mpol_preferred_many)
            detail::throw_error(errc::not_supported,
                                what + ": this kernel lacks MPOL_PREFERRED_MANY (Linux 5.15 or later); use preferred "
                                       "with one node or bind");
        if (err == EINVAL && kernel_mode == mpol_weighted_interleave)
            detail::throw_error(errc::not_supported,
                                what + ": this kernel lacks MPOL_WEIGHTED_INTERLEAVE (Linux 6.9 or later); use "
                                       "interleave");
        // Shape and nodes are checked above, and bind is in every kernel: so it is the flag.
        if (err == EINVAL && flags != 0)
            detail::throw_error(errc::not_supported,
                                what + ": this kernel refuses MPOL_F_NUMA_BALANCING with " + name(p.kind) +
                                    " (bind needs Linux 5.12, preferred_many a later kernel); drop --balancing");
        detail::throw_system_error(err, what + ": set_mempolicy failed");
    }
}

memory_policy current_memory_policy() {
    int kernel_mode = 0;
    std::vector<unsigned> nodes;
    if (const int err = detail::get_thread_policy(kernel_mode, nodes))
        detail::throw_system_error(err, "current_memory_policy: get_mempolicy failed");
    // The optional flags (MPOL_F_STATIC_NODES...) only say how the nodes follow cpuset changes;
    // MPOL_F_NUMA_BALANCING says more and is kept.
    const bool balancing = (kernel_mode & mpol_f_numa_balancing) != 0;
    kernel_mode &= ~(MPOL_MODE_FLAGS | mpol_f_numa_balancing);
    switch (kernel_mode) {
        case MPOL_DEFAULT:
        case MPOL_LOCAL: return memory_policy::local();
        case MPOL_PREFERRED:
            // Preferred without a node is the kernel's own spelling of local allocation.
            return nodes.empty() ? memory_policy::local() : memory_policy{memory_policy::mode::preferred, std::move(nodes)};
        case MPOL_BIND: return memory_policy::bind(std::move(nodes)).with_balancing(balancing);
        case MPOL_INTERLEAVE: return memory_policy::interleave(std::move(nodes));
        case mpol_preferred_many: return memory_policy::preferred_many(std::move(nodes)).with_balancing(balancing);
        case mpol_weighted_interleave: return memory_policy::weighted_interleave(std::move(nodes));
        default: break;
    }
    detail::throw_error(errc::not_supported, "current_memory_policy: the thread's memory policy has mode " +
                                                 std::to_string(kernel_mode) + " on nodes {" +
                                                 format_list(nodes) + "}, which memory_policy cannot express");
}

std::optional<unsigned> next_interleave_node() {
    int node = -1;
    const int err = detail::next_interleave_node(node);
    // EINVAL: the thread's policy does not interleave, the one case the kernel refuses the query.
    if (err == EINVAL) return std::nullopt;
    if (err != 0) detail::throw_system_error(err, "next_interleave_node: get_mempolicy(MPOL_F_NODE) failed");
    if (node < 0)
        detail::throw_error(errc::not_supported,
                            "next_interleave_node: the kernel named node " + std::to_string(node) + ", which is no node");
    return static_cast<unsigned>(node);
}

}  // namespace ccnuma
