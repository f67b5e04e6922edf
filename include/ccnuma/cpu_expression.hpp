#pragma once
/// @file
/// likwid-pin's CPU expressions (likwid-pin -c), with likwid-pin's meaning: the PUs in the
/// order the threads are pinned.
///
///     auto topo = ccnuma::topology::load({.source = "pack:2 core:4 pu:2"});
///     ccnuma::cpu_expression_pus("S1:0-1", topo);     // {8, 10}: physical cores first
///     ccnuma::cpu_expression_pus("E:N:4:1:2", topo);  // {0, 2, 4, 6}
///
/// | expression | PUs |
/// |---|---|
/// | `0,4-6` | those PU OS indexes, in that order |
/// | `N:0-3`, `S1:0-3`, `D0:2`, `C1:0-3`, `M1:0-3` | indexes inside a domain (node/whole machine, socket, die, last-level cache, NUMA domain), physical cores first, then the SMT siblings |
/// | `S0:0-1@S1:0-1` | the parts one after another |
/// | `E:S0:4`, `E:N:4:1:2` | count PUs of the domain, taken chunk at a time every stride PUs, in hardware-thread order (SMT siblings adjacent) |
/// | `S:scatter`, `M:scatter` (also `D:`, `C:`) | round robin over the domains, physical cores first |
///
/// Domains are counted over the allowed PUs: a domain with no allowed PU does not exist.

#include <ccnuma/topology.hpp>

#include <string_view>
#include <vector>

namespace ccnuma {

/// True when `text` starts like a likwid-pin domain expression (`N:`, `S0:`, `E:`, `M:scatter`,
/// ...), so a caller can tell it from an hwloc location or a list.
bool is_cpu_expression(std::string_view text) noexcept;

/// The PUs of a likwid-pin expression, in pin order (repeats kept, as likwid-pin keeps them).
/// Throws ccnuma::error (errc::invalid_argument) pointing at the offending position; where
/// likwid-pin would have taken the expression (a domain or a PU this process may not use),
/// the message says what likwid-pin would have done and why it cannot be done here.
std::vector<unsigned> cpu_expression_pus(std::string_view text, const topology& topo);

}  // namespace ccnuma
