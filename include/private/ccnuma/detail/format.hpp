#pragma once
// Byte counts for messages and tables, one format everywhere: "502 MiB", "1.5 GiB", "12 KiB", "1.0 MiB".

#include <cstdint>
#include <string>

namespace ccnuma::detail {

/// Binary units; one decimal below 10 of a unit ("1.0 GiB", as ccnuma-info has always printed
/// it), none above.
std::string human_bytes(std::uint64_t bytes);

}  // namespace ccnuma::detail
