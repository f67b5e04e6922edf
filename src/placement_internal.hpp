#pragma once
// What a placement policy means (meaning_of, in policy.cpp), the node checks made against the
// kernel's allowed set, and the diagnostics. Shared by placement.cpp, src/pages/ and
// memory_policy.cpp. The system calls are the OS layer's (os/os.hpp), the ownership team is
// team.hpp's.

#include "os/os.hpp"
#include "team.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/placement.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ccnuma::detail {

/// The placement unit: a base page (page_bytes()), or a huge page (huge_page_bytes()).
std::size_t unit_bytes(page_kind p) noexcept;

/// Memory of a node in bytes as the kernel reports it (MemTotal of its sysfs meminfo), 0 if
/// unknown. The pages are real, so their capacity is this machine's, whatever topology
/// CCNUMA_TOPOLOGY describes.
std::uint64_t node_memory(unsigned node);
/// Throws ccnuma::error naming `what`, the node and the allowed set unless `node` is one the
/// kernel lets this process allocate on (allowed_memory_nodes()).
void check_node(unsigned node, const std::string& what);
/// The same against a given allowed set (another machine's, or a test's).
void check_node(unsigned node, const std::string& what, std::span<const unsigned> allowed);

/// What a placement policy means, decided in one place (meaning_of): every user of a policy
/// (apply, to_string, place, migrate) works from this, never from the variant itself.
struct policy_meaning {
    enum class action {
        touch,          ///< a team writes each unit from the thread the schedule gives it to
        bind_units,     ///< a team decides each unit's node; mbind(MPOL_BIND) puts it there
        kernel_policy,  ///< one mbind of the whole range with `mode` and `nodes`
    };
    action act = action::touch;
    int mode = 0;                  ///< MPOL_* for kernel_policy
    std::vector<unsigned> nodes;   ///< kernel_policy's nodes; empty: every allowed node
    bool spills = false;           ///< pages may land on any allowed node when `nodes` are full
    ccnuma::schedule sched{};      ///< the partition, for touch and bind_units
    ccnuma::page_kind page = page_kind::base;
    std::string name;              ///< to_string(): "blocked(chunk=4,huge)"
};

/// The meaning of `p`, with one overload per policy type: a new alternative of ccnuma::policy
/// does not compile until it is given one. Pure: no node is checked, no system call made.
policy_meaning meaning_of(const policy& p);

/// The nodes `m` may put pages on (its own, or every allowed one), each checked against the
/// allowed set; errors name `what`.
std::vector<unsigned> policy_nodes(const policy_meaning& m, const std::string& what);

/// Sends a diagnostic to the handler of set_diagnostic_handler().
void diagnose(const std::string& message);

}  // namespace ccnuma::detail
