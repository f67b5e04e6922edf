#pragma once
// Shared by placement.cpp, pages.cpp and memory_policy.cpp: the kernel's memory-policy calls,
// and the team that decides which thread owns which element (and so which page).

#include <ccnuma/detail/format.hpp>
#include <ccnuma/placement.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma::detail {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
std::size_t base_page_bytes() noexcept;
/// The placement unit: a base page, or a 2 MiB huge page.
std::size_t unit_bytes(pages p) noexcept;

/// Node masks as mbind, set_mempolicy and get_mempolicy take them: MAX_NUMNODES bits (1024 on
/// Debian's kernels), one bit per OS node index.
inline constexpr unsigned long max_node_bits = 1024;
/// The maxnode argument for such a mask: the kernel reads one bit fewer than it is told (a
/// historical off-by-one that libnuma compensates for the same way).
inline constexpr unsigned long syscall_max_node = max_node_bits + 1;
using node_mask = std::vector<unsigned long>;
/// The mask of `nodes`; nodes at or above max_node_bits are left out.
node_mask mask_of(const std::vector<unsigned>& nodes);
/// The nodes of a mask, ascending.
std::vector<unsigned> nodes_of(const node_mask& mask);

/// The nodes this process may allocate on (get_mempolicy MPOL_F_MEMS_ALLOWED).
std::vector<unsigned> allowed_memory_nodes();
/// Memory of a node in bytes as hwloc reports it for this machine, 0 if unknown.
std::uint64_t node_memory(unsigned node);
/// Throws ccnuma::error naming `what`, the node and the allowed set unless `node` is allowed.
void check_node(unsigned node, const std::string& what);
/// The same against a given allowed set (another machine's, or a test's).
void check_node(unsigned node, const std::string& what, std::span<const unsigned> allowed);

/// mbind(2) of a page-aligned range; nodes empty means MPOL_DEFAULT. Returns errno or 0.
int mbind_range(void* addr, std::size_t len, int mode, const std::vector<unsigned>& nodes, unsigned flags);

/// Which thread of a team owns which element under a static schedule, and where each thread
/// runs. For schedule(static) the ranges are measured by running that very loop (the spec
/// leaves the chunk sizes to the runtime); schedule(static, c) is round-robin by the spec.
struct team_layout {
    unsigned threads = 1;
    std::size_t elements = 0;
    std::size_t chunk = 0;
    std::vector<std::size_t> first, last_plus_one;  // per thread, for schedule(static)
    std::vector<int> node;                          // per thread, -1 if unknown

    unsigned owner(std::size_t element) const noexcept;
    std::size_t smallest_share() const noexcept;  // elements of the thread with the fewest
};

/// Runs a parallel region of s.threads (or omp_get_max_threads()) threads over `elements`.
/// Each thread binds to the binding plan if one is set and covers it, records its node, takes
/// part in the static loop, then calls in_thread(thread, layout) after a barrier. An exception
/// thrown by in_thread is carried out of the region and rethrown. A team larger than
/// max_team_threads() is refused with an error that names `operation`.
team_layout run_team(std::size_t elements, const schedule& s,
                     const std::function<void(unsigned, const team_layout&)>& in_thread = {},
                     std::string_view operation = "a parallel team");

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
    ccnuma::pages page = pages::base;
    std::string name;              ///< to_string(): "blocked(chunk=4,huge)"
};

/// The meaning of `p`, with one overload per policy type: a new alternative of ccnuma::policy
/// does not compile until it is given one. Pure: no node is checked, no system call made.
policy_meaning meaning_of(const policy& p);

/// The nodes `m` may put pages on (its own, or every allowed one), each checked against the
/// allowed set; errors name `what`.
std::vector<unsigned> target_nodes(const policy_meaning& m, const std::string& what);

/// Sends a diagnostic to the handler of set_diagnostic_handler().
void diagnose(const std::string& message);

/// The element that decides who owns the unit starting at unit_start: the one in the middle
/// of the unit's part of [begin, end).
std::size_t unit_owner_element(std::uintptr_t unit_start, std::size_t unit, std::uintptr_t begin, std::uintptr_t end,
                               std::size_t element_size, std::size_t elements);

/// The owner-node of each placement unit of [ptr, ptr + bytes): units are aligned to `unit`
/// absolute addresses; a unit belongs to the thread owning the element in its middle.
std::vector<int> unit_nodes(const team_layout& team, const void* ptr, std::size_t bytes, std::size_t element_size,
                            std::size_t unit);

}  // namespace ccnuma::detail
