// Store modes: their names, automatic's threshold and the one decision whether a write streams.

#include "scan.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/topology.hpp>

#include <cstdlib>
#include <string>

namespace ccnuma {

std::string_view to_string(stores s) noexcept {
    switch (s) {
        case stores::regular: return "regular";
        case stores::streaming: return "streaming";
        case stores::automatic: return "automatic";
    }
    return "?";
}

stores parse_stores(std::string_view text) {
    for (stores s : {stores::regular, stores::streaming, stores::automatic})
        if (text == to_string(s)) return s;
    detail::throw_error(errc::invalid_argument,
                        "bad store mode " + detail::quote(text) + " (expected regular, streaming or automatic)");
}

namespace detail {

std::size_t streaming_threshold(const topology& topo, const char* env) {
    if (env != nullptr && *env != '\0') {
        const std::string_view text(env);
        const auto bytes = whole_number<std::size_t>(text);
        if (!bytes)
            detail::throw_error(errc::invalid_argument, "bad CCNUMA_STREAMING_THRESHOLD=" + detail::quote(text) +
                                                            " (expected a size in bytes, e.g. 33554432)");
        return *bytes;
    }
    // The caches of the highest level the snapshot knows, every instance: each thread's part of
    // a range goes through its own last-level cache.
    unsigned level = 0;
    std::size_t total = 0;
    for (const auto& c : topo.caches()) {
        if (c.level > level) level = c.level, total = 0;
        if (c.level == level) total += c.bytes;
    }
    return total;
}

}  // namespace detail

std::size_t streaming_threshold() {
    static const std::size_t bytes =
        detail::streaming_threshold(topology::current(), std::getenv("CCNUMA_STREAMING_THRESHOLD"));
    return bytes;
}

bool streams(stores mode, std::size_t bytes, bool aliases, bool streamable) {
    if (!streamable) return false;
    switch (mode) {
        case stores::regular: return false;
        case stores::streaming: return true;
        // A machine whose caches the snapshot does not know (threshold 0) keeps regular stores:
        // streaming a range that fits in a cache is the costly mistake.
        case stores::automatic: return !aliases && streaming_threshold() != 0 && bytes > streaming_threshold();
    }
    return false;
}

}  // namespace ccnuma
