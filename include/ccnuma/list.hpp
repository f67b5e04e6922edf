#pragma once
/// @file
/// CPU and node lists in the syntax of taskset and numactl: "0-3,8" is {0, 1, 2, 3, 8}.
///
///     std::string text = ccnuma::format_list(node.cpus);                  // "0-3,8"
///     std::vector<unsigned> cpus = ccnuma::parse_list("0-3,8", "--cpus");  // {0, 1, 2, 3, 8}
///
/// Implemented in src/list.cpp. topology.hpp includes this header, since its sets print this way,
/// and memory_policy.hpp, whose node sets parse_node_set reads.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma {

/// Formats OS indices in the list syntax of taskset/numactl: {0,1,2,3,8} -> "0-3,8".
std::string format_list(std::span<const unsigned> indices);

/// Parses the list syntax ("0-3,8", "all" is not accepted), sorted and without duplicates.
/// Throws ccnuma::error (errc::invalid_argument) naming `what` (e.g. "CCNUMA_CPUSET") on
/// malformed input.
std::vector<unsigned> parse_list(std::string_view text, std::string_view what);

/// The nodes of a node set in numactl's syntax, ascending, checked against the nodes this
/// process may allocate on (the cpuset's mems), or against `allowed`:
///
/// | text | nodes (allowed 0-3) |
/// |---|---|
/// | `all` | every allowed node: 0,1,2,3 |
/// | `1,3`, `0-2`, `0-1,3` | those nodes |
/// | `+0-1` | the first and second allowed node (relative: with allowed 2,3,6,7 it is 2,3) |
/// | `!1`, `!+0` | every allowed node but those |
///
/// Throws ccnuma::error (errc::invalid_argument) pointing at the offending character of a
/// malformed set, naming a node that is not allowed (or a relative index beyond them) and the
/// allowed set, and when no node is left:
///
///     ccnuma::parse_node_set("0,x");  // ccnuma: bad node set "0,x": unexpected character "x" at position 2 (...)
///     ccnuma::parse_node_set("5");    // ccnuma: node set "5": node 5 is not in the allowed set {0-3}
std::vector<unsigned> parse_node_set(std::string_view text);
std::vector<unsigned> parse_node_set(std::string_view text, std::span<const unsigned> allowed);

/// The CPUs of a CPU list in numactl's --physcpubind syntax, by the same rules as
/// parse_node_set: `all`, a list, `+` for indices into the allowed CPUs, `!` for all others,
/// ascending, checked against this process's allowed CPUs (topology::current()) or `allowed`:
///
///     ccnuma::parse_cpu_set("+1,3", std::vector<unsigned>{4, 5, 6, 7});  // {5, 7}
///     ccnuma::parse_cpu_set("99");  // ccnuma: CPU set "99": CPU 99 is not in the allowed set {0-15}
std::vector<unsigned> parse_cpu_set(std::string_view text);
std::vector<unsigned> parse_cpu_set(std::string_view text, std::span<const unsigned> allowed);

}  // namespace ccnuma
