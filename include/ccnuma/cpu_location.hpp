#pragma once
/// @file
/// hwloc locations, as hwloc-bind and hwloc-calc take them: `core:0-3`, `pu:3`, `numa:1`,
/// `package:0.core:1`, `core:all`, `0x3`, each resolved on a ccnuma topology snapshot with the
/// logical indexes lstopo prints in the same restriction.
///
///     auto topo = ccnuma::topology::load({.source = "pack:2 core:4 pu:2"});
///     ccnuma::cpu_location_pus("package:1.core:0-1", topo);  // {8, 9, 10, 11}
///     ccnuma::cpu_location_nodes("numa:1", topo);             // NUMA nodes, OS indexes
///
/// Grammar (hwloc-calc's, without its options): items separated by spaces; an item is a hex
/// mask of PU OS indexes (`0xff`, `0xf,0xffffffff`: 32-bit words, highest first) or
/// `type:range[.type:range]...`, where type is machine, package (socket), die, l3 (l3cache),
/// l2 (l2cache), core, pu, numa (node, numanode), group, or a prefix of at least two letters,
/// and range is N, N-M, N-, N:count, all, odd or even, counted inside the object before the
/// dot. A `~` before an item removes its PUs, `x` keeps only the common ones (hwloc-calc's `^`
/// is not taken).
/// Stricter than hwloc-calc: an index beyond the objects there are is an error, not a warning.

#include <ccnuma/topology.hpp>

#include <string_view>
#include <vector>

namespace ccnuma {

/// True when `text` starts like an hwloc location (a known type name and ':', or "0x"), so a
/// caller can tell it from a list ("0-3") or a likwid-pin expression ("S0:0-3").
bool is_cpu_location(std::string_view text) noexcept;

/// The allowed PUs (OS indexes, ascending) of the location, as
/// `hwloc-calc --physical-output --intersect pu LOCATION` prints them under the same
/// restriction (`--restrict`). Throws ccnuma::error (errc::invalid_argument) naming the
/// position of a malformed item, an object that does not exist, and a result without PUs.
std::vector<unsigned> cpu_location_pus(std::string_view text, const topology& topo);

/// The NUMA nodes (OS indexes, ascending) of the location: those it names (`numa:1`,
/// `package:0.numa:all`), else those local to its PUs (`package:1`: the nodes of package 1).
std::vector<unsigned> cpu_location_nodes(std::string_view text, const topology& topo);

}  // namespace ccnuma
