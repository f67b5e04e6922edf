#pragma once
/// @file
/// CPU and node lists in the syntax of taskset and numactl: "0-3,8" is {0, 1, 2, 3, 8}.
///
///     std::string text = ccnuma::format_list(node.cpus);                  // "0-3,8"
///     std::vector<unsigned> cpus = ccnuma::parse_list("0-3,8", "--cpus");  // {0, 1, 2, 3, 8}
///
/// Implemented in src/list.cpp. topology.hpp includes this header, since its sets print this way.

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

}  // namespace ccnuma
