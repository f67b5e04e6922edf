#pragma once
/// \file
/// How whole-range writes store their results: regular stores, or non-temporal (streaming)
/// stores that bypass the caches.
///
/// A regular store to a line that is not in the cache first reads it (read for ownership):
/// `a = b + c * d` moves 5 streams, not 4. Streaming stores skip that read, which is worth up
/// to 1.25x for the triad when the arrays are far larger than the caches, and costs when the
/// result would have been read again from the cache. `automatic` streams only where that cannot
/// happen: the destination aliases no operand, and it is larger than the last-level caches.
///
///     ccnuma::vector<double> a(n), b(n, 1.0), c(n, 2.0), d(n, 3.0);
///     a.set_store_mode(ccnuma::stores::streaming);   // or regular; automatic is the default
///     a = b + c * d;                                  // non-temporal stores, fenced per thread

#include <cstddef>
#include <string_view>

namespace ccnuma {

enum class stores {
    regular,    ///< ordinary stores, through the caches
    streaming,  ///< non-temporal stores where the element type allows them (float, double)
    automatic,  ///< streaming when the destination aliases no operand and the write moves more than streaming_threshold()
};

/// "regular", "streaming" or "automatic".
std::string_view to_string(stores s) noexcept;

/// Parses the names above. Throws ccnuma::error (errc::invalid_argument) naming the text and
/// the valid names.
stores parse_stores(std::string_view text);

/// The bytes a write moves (what it stores plus what it reads from its operands, an operand as
/// often as the expression names it: b * b reads b twice) above which
/// `automatic` streams: CCNUMA_STREAMING_THRESHOLD (bytes, as ccnuma-bench's calibration reports
/// it) if set, else the total size of the last-level caches of topology::current() (every
/// instance: a range is written by all threads). Read once. A write whose arrays together fit
/// in the caches keeps its result there for the next kernel to read; once they do not, the
/// result would be evicted by the write itself, and streaming it skips the read for ownership
/// (bench/store_reuse, docs/benchmarks.md).
std::size_t streaming_threshold();

/// The one decision: whether a write that moves `bytes` (stored plus read, as above) under
/// `mode` streams. `aliases` tells whether
/// the destination overlaps an operand of the expression (then the result would be read back
/// from the cache, and `automatic` does not stream); `streamable` whether the element type has
/// non-temporal stores here.
bool streams(stores mode, std::size_t bytes, bool aliases, bool streamable);

class topology;

namespace detail {
/// streaming_threshold() for a given snapshot and value of CCNUMA_STREAMING_THRESHOLD (nullptr
/// or empty: unset). Throws ccnuma::error (errc::invalid_argument) for a value that is not a
/// number of bytes.
std::size_t streaming_threshold(const topology& topo, const char* variable);
}  // namespace detail

}  // namespace ccnuma
