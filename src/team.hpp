#pragma once
// The ownership team: which thread of a team owns which element (and so which page), and on
// which node each thread runs. The partition is detail/parallel.hpp's (static_owner,
// static_count, over the schedule's partition where it has one), the one the containers' loops
// and reductions use. team_layout::unit_owner is the one rule for which thread owns a
// placement unit (a base or huge page) of a range: placement, tiers and reports all ask it.
// The team is measured as it
// runs, and nothing here binds a thread: a caller that wants its threads on planned PUs binds
// them itself (bind_this_thread, OMP_PLACES) before it hands placement the work.

#include <ccnuma/schedule.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace ccnuma::detail {

/// The placement units of a byte range of elements: units of `unit` bytes aligned to absolute
/// addresses (so huge units line up with the kernel's huge pages), unit i starting at
/// first + i * unit, the first and last ones cut by the range.
struct unit_range {
    std::uintptr_t begin = 0, end = 0;
    std::size_t element_size = 1;
    std::size_t unit = 1;
    std::uintptr_t first = 0;
    unit_range(const void* ptr, std::size_t bytes, std::size_t element_bytes, std::size_t unit_bytes) noexcept;
    std::size_t count() const noexcept;
    std::uintptr_t start(std::size_t i) const noexcept { return first + i * unit; }
    /// Unit i's part of the range.
    std::uintptr_t from(std::size_t i) const noexcept { return std::max(start(i), begin); }
    std::uintptr_t to(std::size_t i) const noexcept { return std::min<std::uintptr_t>(start(i) + unit, end); }
};

/// A team and its partition, as data: `threads` threads, each on cpu[t] of node[t] (-1 if
/// unknown) when the team started, and `elements` elements dealt by the schedule `sched`
/// (schedule(static), schedule(static, chunk) or its partition).
struct team_layout {
    unsigned threads = 1;
    std::size_t elements = 0;
    ccnuma::schedule sched{};
    std::vector<int> node;  // per thread, -1 if unknown
    std::vector<int> cpu;   // per thread, -1 if unknown: the tier policies plan by its local nodes

    /// The thread that owns `element`.
    unsigned owner(std::size_t element) const noexcept;
    /// Elements of thread t.
    std::size_t share(unsigned t) const noexcept;
    /// Elements of the thread with the fewest.
    std::size_t smallest_share() const noexcept;
    /// The thread that owns unit i of `r`: the owner of the element in the middle of the unit's
    /// part of the range, so a boundary a few bytes into a unit does not decide it.
    unsigned unit_owner(const unit_range& r, std::size_t i) const noexcept;
    /// The units of `r` that thread t owns, in address order.
    std::vector<std::size_t> owned_units(const unit_range& r, unsigned t) const;
};

/// Runs a parallel region of team_size(s) threads over `elements` for `operation` (which
/// errors name). Each thread records the CPU and node it runs on, then calls in_thread(thread, layout).
/// An exception thrown by in_thread is carried out of the region and rethrown. No thread is
/// bound or moved. A team larger than max_team_threads() is refused with an error.
team_layout run_team(std::size_t elements, const schedule& s,
                     const std::function<void(unsigned, const team_layout&)>& in_thread = {},
                     std::string_view operation = "a parallel team");


/// The nodes local to thread t of `team`, fastest first: the local_nodes of the PU it ran on
/// (topology::pu(), where the snapshot is of this machine), else its node alone, else none.
/// The tier policies plan by it and placement_report measures by it.
std::vector<unsigned> thread_local_nodes(const team_layout& team, unsigned t);

/// The owner-node of each unit of `r` (team.unit_owner's thread's node).
std::vector<int> unit_nodes(const team_layout& team, const unit_range& r);

}  // namespace ccnuma::detail
