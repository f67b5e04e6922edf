#pragma once
/// @file
/// Library version. CMake reads these three lines, so this header is the single source of truth.

#define CCNUMA_VERSION_MAJOR 0
#define CCNUMA_VERSION_MINOR 1
#define CCNUMA_VERSION_PATCH 0

namespace ccnuma {

/// Version of the headers in use, e.g. "0.1.0".
inline constexpr const char* version_string = "0.1.0";

/// Version of the compiled library that was linked; differs from version_string only when
/// headers and library come from different installs.
const char* library_version() noexcept;

}  // namespace ccnuma
