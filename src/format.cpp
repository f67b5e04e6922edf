// Byte counts for messages and tables (detail/format.hpp).

#include <ccnuma/detail/format.hpp>

#include <cstdio>

namespace ccnuma::detail {

std::string human_bytes(std::uint64_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    unsigned u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 && u > 0 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

}  // namespace ccnuma::detail
