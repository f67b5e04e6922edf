#pragma once
// How ccnuma-bench writes a number in its table, context and CSV.

#include <cstdio>
#include <string>

namespace bench {

inline std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

/// Enough digits for the size of the value, so that small overheads and large rates both read.
inline std::string fmt(double v) {
    const double a = v < 0 ? -v : v;
    return fixed(v, a >= 100 ? 1 : a >= 1 ? 2 : 3);
}

}  // namespace bench
