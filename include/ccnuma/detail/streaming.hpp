#pragma once
// Non-temporal stores of one thread's range: dst[i] = at(i) for i in [lo, hi). The elements
// before the first vector-aligned address and after the last whole vector are stored normally;
// the vectors in between with the widest streaming store the build targets (AVX-512, AVX, or
// SSE2, which every x86-64 has). One sfence at the end makes the thread's streamed lines
// visible before the region's closing barrier, as OpenMP's flush there requires.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define CCNUMA_DETAIL_HAVE_STREAMING 1
#else
#define CCNUMA_DETAIL_HAVE_STREAMING 0
#endif

namespace ccnuma::detail {

/// Whether T has streaming stores in this build: float and double on x86-64.
template <class T>
inline constexpr bool streamable =
    CCNUMA_DETAIL_HAVE_STREAMING && (std::is_same_v<T, double> || std::is_same_v<T, float>);

#if CCNUMA_DETAIL_HAVE_STREAMING
#if defined(__AVX512F__)
inline constexpr std::size_t stream_bytes = 64;
inline void stream_store(double* p, const double* v) { _mm512_stream_pd(p, _mm512_load_pd(v)); }
inline void stream_store(float* p, const float* v) { _mm512_stream_ps(p, _mm512_load_ps(v)); }
#elif defined(__AVX__)
inline constexpr std::size_t stream_bytes = 32;
inline void stream_store(double* p, const double* v) { _mm256_stream_pd(p, _mm256_load_pd(v)); }
inline void stream_store(float* p, const float* v) { _mm256_stream_ps(p, _mm256_load_ps(v)); }
#else
inline constexpr std::size_t stream_bytes = 16;
inline void stream_store(double* p, const double* v) { _mm_stream_pd(p, _mm_load_pd(v)); }
inline void stream_store(float* p, const float* v) { _mm_stream_ps(p, _mm_load_ps(v)); }
#endif

// `at` by value: a copy local to the thread's function, whose pointers the compiler keeps in
// registers (through a reference it reloads them after every store, which might alias them).
template <class T, class At>
    requires streamable<T>
void stream_range(T* dst, std::size_t lo, std::size_t hi, At at) {
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
    _mm_sfence();
}
#endif

}  // namespace ccnuma::detail
