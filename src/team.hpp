#pragma once
// The ownership team: which thread of a team owns which element (and so which page), and on
// which node each thread runs. The partition is detail/parallel.hpp's (static_owner,
// static_count), the one the containers' loops and reductions use; the team is measured as it
// runs, and nothing here binds a thread: a caller that wants its threads on planned PUs binds
// them itself (bind_this_thread, OMP_PLACES) before it hands placement the work.

#include <ccnuma/schedule.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace ccnuma::detail {

/// A team and its partition, as data: `threads` threads, each on cpu[t] of node[t] (-1 if
/// unknown) when the team started, and
/// `elements` elements dealt by schedule(static) (chunk 0) or schedule(static, chunk).
struct team_layout {
    unsigned threads = 1;
    std::size_t elements = 0;
    std::size_t chunk = 0;
    std::vector<int> node;  // per thread, -1 if unknown
    std::vector<int> cpu;   // per thread, -1 if unknown: the tier policies plan by its local nodes

    /// The thread that owns `element`.
    unsigned owner(std::size_t element) const noexcept;
    /// Elements of the thread with the fewest.
    std::size_t smallest_share() const noexcept;
};

/// Runs a parallel region of team_size(s) threads over `elements` for `operation` (which
/// errors name). Each thread records the CPU and node it runs on, then calls in_thread(thread, layout).
/// An exception thrown by in_thread is carried out of the region and rethrown. No thread is
/// bound or moved. A team larger than max_team_threads() is refused with an error.
team_layout run_team(std::size_t elements, const schedule& s,
                     const std::function<void(unsigned, const team_layout&)>& in_thread = {},
                     std::string_view operation = "a parallel team");

/// The element that decides who owns the unit starting at unit_start: the one in the middle
/// of the unit's part of [begin, end).
std::size_t unit_owner_element(std::uintptr_t unit_start, std::size_t unit, std::uintptr_t begin, std::uintptr_t end,
                               std::size_t element_size, std::size_t elements);

/// The nodes local to thread t of `team`, fastest first: the local_nodes of the PU it ran on
/// (topology::pu(), where the snapshot is of this machine), else its node alone, else none.
/// The tier policies plan by it and placement_report measures by it.
std::vector<unsigned> thread_local_nodes(const team_layout& team, unsigned t);

/// The owner-node of each placement unit of [ptr, ptr + bytes): units are aligned to `unit`
/// absolute addresses; a unit belongs to the thread owning the element in its middle.
std::vector<int> unit_nodes(const team_layout& team, const void* ptr, std::size_t bytes, std::size_t element_size,
                            std::size_t unit);

}  // namespace ccnuma::detail
