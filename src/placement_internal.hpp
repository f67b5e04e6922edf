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
        write_planned,  ///< plan_units() decides each unit's node; its owner writes it under
                        ///< the thread policy `mode` (MPOL_BIND, or MPOL_PREFERRED to spill)
    };
    /// How write_planned plans (plan_units()).
    enum class plan {
        none,
        weights,  ///< weighted round-robin of `weights` over `nodes` (by bandwidth if asked)
        tiers,    ///< each thread's part split over its PU's local nodes by bandwidth
        fastest,  ///< each thread's part on its fastest local node while free memory lasts
    };
    action act = action::touch;
    int mode = 0;                  ///< MPOL_* for kernel_policy
    std::vector<unsigned> nodes;   ///< kernel_policy's nodes; empty: every allowed node
    bool spills = false;           ///< pages may land on any allowed node when `nodes` are full
    ccnuma::schedule sched{};      ///< the partition, for touch and bind_units
    ccnuma::page_kind page = page_kind::base;
    std::string name;              ///< to_string(): "blocked(chunk=4,huge)"
    plan how = plan::none;         ///< for write_planned
    std::vector<unsigned> weights;  ///< plan::weights: one per node of `nodes`
    bool weights_by_bandwidth = false;  ///< plan::weights: from the bandwidths, at allocation
    /// kernel_policy: consecutive pages go to different nodes (interleave, weighted_interleave
    /// by the kernel's weights). The kernel interleaves a folio as one unit, so with base pages
    /// the range is opted out of THP first (placement.cpp).
    bool interleaves = false;
    /// The meaning writes every untouched page (touch and write_planned): place() needs
    /// writable memory for it.
    bool writes() const noexcept { return act == action::touch || act == action::write_planned; }
};

/// The meaning of `p`, with one overload per policy type: a new alternative of ccnuma::policy
/// does not compile until it is given one. Pure: no node is checked, no system call made.
policy_meaning meaning_of(const policy& p);

/// The nodes `m` may put pages on (its own, or every allowed one), each checked against the
/// allowed set, and its weights against its nodes and the kernel's range; errors name `what`.
std::vector<unsigned> policy_nodes(const policy_meaning& m, const std::string& what);

/// MPOL_WEIGHTED_INTERLEAVE (Linux 6.9), which Debian 12's headers lack.
inline constexpr int mpol_weighted_interleave = 6;
/// The kernel's range of a weighted-interleave weight (u8, 0 meaning "the default").
inline constexpr unsigned max_interleave_weight = 255;

/// Weights for `targets` from their read bandwidth seen from `initiators` (the nodes a team
/// runs on): per target the mean over the initiators the topology knows a bandwidth from,
/// scaled so the largest is 100, rounded (at least 1) and divided by their gcd, so 1 : 0.5
/// gives 2 : 1; one target gets {1}. Throws errc::not_supported, naming `what`, for a target with no known
/// bandwidth from any initiator.
std::vector<unsigned> bandwidth_weights(const std::vector<unsigned>& targets, const std::vector<int>& initiators,
                                        const std::string& what);

/// The node of each placement unit of `range` (src/tiers.cpp) for a write_planned meaning, given the team that learned where its threads
/// run; -1 for a unit its owner touches plainly. `nodes` is policy_nodes(m, what).
std::vector<int> plan_units(const policy_meaning& m, const std::vector<unsigned>& nodes, const team_layout& team,
                            const unit_range& range, const std::string& what);

/// Sends a diagnostic to the handler of set_diagnostic_handler().
void diagnose(const std::string& message);

}  // namespace ccnuma::detail
