#pragma once
// Non-temporal stores of one thread's range: dst[i] = at(i) for i in [lo, hi). The elements
// before the first vector-aligned address and after the last whole vector are stored normally;
// the vectors in between with the widest streaming store the build targets (AVX-512, AVX, or
// SSE2, which every x86-64 has). One sfence at the end makes the thread's streamed lines
// visible before the region's closing barrier, as OpenMP's flush there requires.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

// The compilers' own builtins, not <immintrin.h>: every file that includes <ccnuma/vector.hpp>
// would otherwise parse all of Intel's intrinsics for these three instructions (0.4-0.9 s a file
// here, of 1.3-1.6 s for the whole header).
#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define CCNUMA_DETAIL_HAVE_STREAMING 1
#else
#define CCNUMA_DETAIL_HAVE_STREAMING 0
#endif

namespace ccnuma::detail {

/// The bytes a write of n Ts moves that also reads `read` bytes of operands: what stores.hpp's
/// streams() compares with the threshold, the one formula of every automatic write.
/// Saturates rather than wraps.
template <class T>
std::size_t moved_bytes(std::size_t n, std::size_t read) noexcept {
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    const std::size_t stored = n > most / sizeof(T) ? most : n * sizeof(T);
    return stored > most - read ? most : stored + read;
}

/// The bytes that the ranges [lo, hi) cover together, each byte once (ranges sorted in place):
/// an array counts once however often a write reads it, and ranges that overlap count their
/// union. The one rule of what an automatic write reads, for expressions (operand_bytes) and for
/// par::transform's two inputs. Insertion sort: a handful of ranges, where std::sort's call cost
/// 150 instructions of a 2,000-instruction triad at n = 8.
template <std::size_t N>
std::size_t union_bytes(std::array<std::pair<std::uintptr_t, std::uintptr_t>, N>& ranges) noexcept {
    for (std::size_t i = 1; i < N; ++i)
        for (std::size_t j = i; j > 0 && ranges[j] < ranges[j - 1]; --j) std::swap(ranges[j], ranges[j - 1]);
    std::size_t read = 0;
    std::uintptr_t covered = 0;  // the end of the union so far
    for (const auto& [lo, hi] : ranges) {
        const std::uintptr_t from = lo > covered ? lo : covered;
        if (hi > from) read = moved_bytes<char>(hi - from, read);
        if (hi > covered) covered = hi;
    }
    return read;
}

/// Whether T has streaming stores in this build: float and double on x86-64.
template <class T>
inline constexpr bool streamable =
    CCNUMA_DETAIL_HAVE_STREAMING && (std::is_same_v<T, double> || std::is_same_v<T, float>);

#if CCNUMA_DETAIL_HAVE_STREAMING
#if defined(__AVX512F__)
inline constexpr std::size_t stream_bytes = 64;
#elif defined(__AVX__)
inline constexpr std::size_t stream_bytes = 32;
#else
inline constexpr std::size_t stream_bytes = 16;
#endif
// One vector register of the widest streaming store (vmovntpd zmm, ymm or movntpd xmm).
typedef double stream_doubles __attribute__((vector_size(stream_bytes)));
typedef float stream_floats __attribute__((vector_size(stream_bytes)));

#if defined(__clang__)
// As on clang's _mm512_stream_pd: without it, a -march that prefers 256-bit vectors (Skylake-X
// and later) splits the 64-byte store in two.
#define CCNUMA_DETAIL_STREAM_WIDTH __attribute__((min_vector_width(8 * stream_bytes)))
#else
#define CCNUMA_DETAIL_STREAM_WIDTH
#endif

template <class Vector, class T>
CCNUMA_DETAIL_STREAM_WIDTH inline void stream_store_vector(T* p, const T* v) {
    Vector x;
    __builtin_memcpy(&x, v, stream_bytes);  // v is aligned and in a register by now: one move
#if defined(__clang__)
    // What clang's own _mm*_stream_pd/ps are.
    __builtin_nontemporal_store(x, reinterpret_cast<Vector*>(p));
#elif defined(__AVX512F__)
    // What GCC's own _mm512_stream_pd/ps are.
    if constexpr (std::is_same_v<T, double>) __builtin_ia32_movntpd512(p, x);
    else __builtin_ia32_movntps512(p, x);
#elif defined(__AVX__)
    if constexpr (std::is_same_v<T, double>) __builtin_ia32_movntpd256(p, x);
    else __builtin_ia32_movntps256(p, x);
#else
    if constexpr (std::is_same_v<T, double>) __builtin_ia32_movntpd(p, x);
    else __builtin_ia32_movntps(p, x);
#endif
}
inline void stream_store(double* p, const double* v) { stream_store_vector<stream_doubles>(p, v); }
inline void stream_store(float* p, const float* v) { stream_store_vector<stream_floats>(p, v); }

// `at` by value: a copy local to the thread's function, whose pointers the compiler keeps in
// registers (through a reference it reloads them after every store, which might alias them).
template <class T, class At>
    requires streamable<T>
void stream_range(T* __restrict dst, std::size_t lo, std::size_t hi, At at) {
    constexpr std::size_t lanes = stream_bytes / sizeof(T);
    std::size_t i = lo;
    for (; i < hi && reinterpret_cast<std::uintptr_t>(dst + i) % stream_bytes != 0; ++i) dst[i] = at(i);
    for (; i + lanes <= hi; i += lanes) {
        // Computed into an aligned block the compiler keeps in a register, then stored around
        // the caches in one instruction.
        alignas(stream_bytes) T v[lanes];
        for (std::size_t k = 0; k < lanes; ++k) v[k] = at(i + k);
        stream_store(dst + i, v);
    }
    for (; i < hi; ++i) dst[i] = at(i);
    __builtin_ia32_sfence();  // _mm_sfence()
}
#endif

}  // namespace ccnuma::detail
