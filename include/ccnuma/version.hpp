#pragma once
/// @file
/// Library version. CMake reads these three lines, so this header is the single source of truth.

#define CCNUMA_VERSION_MAJOR 0
#define CCNUMA_VERSION_MINOR 1
#define CCNUMA_VERSION_PATCH 0

namespace ccnuma {

#define CCNUMA_DETAIL_STR2(x) #x
#define CCNUMA_DETAIL_STR(x) CCNUMA_DETAIL_STR2(x)

/// Version of the headers in use, e.g. "0.1.0".
inline constexpr const char* version_string = CCNUMA_DETAIL_STR(CCNUMA_VERSION_MAJOR) "." CCNUMA_DETAIL_STR(
    CCNUMA_VERSION_MINOR) "." CCNUMA_DETAIL_STR(CCNUMA_VERSION_PATCH);

/// Version of the compiled library that was linked; differs from version_string only when
/// headers and library come from different installs.
const char* library_version() noexcept;

}  // namespace ccnuma
