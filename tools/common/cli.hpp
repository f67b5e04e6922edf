#pragma once
// What every ccnuma tool does the same way: one line on stderr and a non-zero exit on error.

#include <cstdio>
#include <exception>
#include <string_view>

namespace tools {

/// Prints "tool: message" (the library's own "ccnuma: " prefix dropped) and returns 1.
inline int fail(const char* tool, const std::exception& e) {
    std::string_view msg = e.what();
    if (msg.substr(0, 8) == "ccnuma: ") msg.remove_prefix(8);
    std::fprintf(stderr, "%s: %.*s\n", tool, static_cast<int>(msg.size()), msg.data());
    return 1;
}

}  // namespace tools
