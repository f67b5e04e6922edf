#include "baselines.hpp"

#include "kernels.hpp"

#include <immintrin.h>
#include <omp.h>

#include <cstdint>

namespace bench::expert {

namespace {

// The widest vectors of the build, as an expert's intrinsics would name them.
#if defined(__AVX512F__)
using vd = __m512d;
constexpr std::size_t lanes = 8;
inline vd load(const double* p) { return _mm512_loadu_pd(p); }
inline void store_nt(double* p, vd v) { _mm512_stream_pd(p, v); }
inline vd vadd(vd a, vd b) { return _mm512_add_pd(a, b); }
inline vd vmul(vd a, vd b) { return _mm512_mul_pd(a, b); }
inline vd broadcast(double x) { return _mm512_set1_pd(x); }
inline vd zero() { return _mm512_setzero_pd(); }
// Through memory, not _mm512_reduce_add_pd: GCC 12's header warns (-Wuninitialized) in it.
inline double horizontal(vd v) {
    alignas(64) double t[8];
    _mm512_store_pd(t, v);
    return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}
#elif defined(__AVX__)
using vd = __m256d;
constexpr std::size_t lanes = 4;
inline vd load(const double* p) { return _mm256_loadu_pd(p); }
inline void store_nt(double* p, vd v) { _mm256_stream_pd(p, v); }
inline vd vadd(vd a, vd b) { return _mm256_add_pd(a, b); }
inline vd vmul(vd a, vd b) { return _mm256_mul_pd(a, b); }
inline vd broadcast(double x) { return _mm256_set1_pd(x); }
inline vd zero() { return _mm256_setzero_pd(); }
inline double horizontal(vd v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
#else
using vd = __m128d;
constexpr std::size_t lanes = 2;
inline vd load(const double* p) { return _mm_loadu_pd(p); }
inline void store_nt(double* p, vd v) { _mm_stream_pd(p, v); }
inline vd vadd(vd a, vd b) { return _mm_add_pd(a, b); }
inline vd vmul(vd a, vd b) { return _mm_mul_pd(a, b); }
inline vd broadcast(double x) { return _mm_set1_pd(x); }
inline vd zero() { return _mm_setzero_pd(); }
inline double horizontal(vd v) { return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v))); }
#endif
constexpr std::size_t vector_bytes = lanes * sizeof(double);

/// out[i] = scalar(i) for the elements before out's first aligned vector and after its last
/// whole one; vector(i) streamed in between; one sfence for the piece, before the region's
/// closing barrier publishes it.
template <class Scalar, class Vector>
inline void stream_loop(double* __restrict out, std::size_t len, Scalar scalar, Vector vector) {
    std::size_t i = 0;
    for (; i < len && reinterpret_cast<std::uintptr_t>(out + i) % vector_bytes != 0; ++i) out[i] = scalar(i);
    for (; i + lanes <= len; i += lanes) store_nt(out + i, vector(i));
    for (; i < len; ++i) out[i] = scalar(i);
    _mm_sfence();
}

/// Runs body(lo, hi) on every thread of a team, on its static block, `sweeps` times.
template <class Body>
inline void team(std::size_t n, std::size_t sweeps, const void* out, Body body) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel
        {
            std::size_t lo = 0, hi = 0;
            static_block(n, static_cast<unsigned>(omp_get_thread_num()), static_cast<unsigned>(omp_get_num_threads()), lo, hi);
            body(lo, hi);
        }
        escape(out);
    }
}

}  // namespace

const char* to_string(stores s) { return s == stores::regular ? "regular" : "streaming"; }

const char* isa() {
#if defined(__AVX512F__)
    return "AVX-512";
#elif defined(__AVX2__)
    return "AVX2";
#elif defined(__AVX__)
    return "AVX";
#else
    return "SSE2";
#endif
}

#ifndef CCNUMA_BENCH_FLAGS
#define CCNUMA_BENCH_FLAGS "unknown"
#endif
const char* flags() { return CCNUMA_BENCH_FLAGS; }

void static_block(std::size_t n, unsigned t, unsigned threads, std::size_t& lo, std::size_t& hi) {
    const std::size_t q = n / threads, r = n % threads;
    lo = t * q + (t < r ? t : r);
    hi = lo + q + (t < r ? 1 : 0);
}

__attribute__((noinline)) void triad_piece(double* __restrict a, const double* __restrict b, const double* __restrict c,
                                           const double* __restrict d, std::size_t len, stores s) {
    if (s == stores::regular) {
#pragma omp simd
        for (std::size_t i = 0; i < len; ++i) a[i] = b[i] + c[i] * d[i];
        return;
    }
    stream_loop(
        a, len, [=](std::size_t i) { return b[i] + c[i] * d[i]; },
        [=](std::size_t i) { return vadd(load(b + i), vmul(load(c + i), load(d + i))); });
}

__attribute__((noinline)) void scaled_triad_piece(double* __restrict a, const double* __restrict b,
                                                  const double* __restrict c, double q, std::size_t len) {
#pragma omp simd
    for (std::size_t i = 0; i < len; ++i) a[i] = b[i] + q * c[i];
}

__attribute__((noinline)) double sum_piece(const double* __restrict a, std::size_t len) {
    vd s0 = zero(), s1 = zero(), s2 = zero(), s3 = zero();
    std::size_t i = 0;
    for (; i + 4 * lanes <= len; i += 4 * lanes) {
        s0 = vadd(s0, load(a + i));
        s1 = vadd(s1, load(a + i + lanes));
        s2 = vadd(s2, load(a + i + 2 * lanes));
        s3 = vadd(s3, load(a + i + 3 * lanes));
    }
    for (; i + lanes <= len; i += lanes) s0 = vadd(s0, load(a + i));
    double tail = 0;
    for (; i < len; ++i) tail += a[i];
    return horizontal(vadd(vadd(s0, s1), vadd(s2, s3))) + tail;
}

void triad(double* a, const double* b, const double* c, const double* d, std::size_t n, std::size_t sweeps, stores s) {
    if (s == stores::regular) {
        for (std::size_t k = 0; k < sweeps; ++k) {
            double* __restrict pa = a;
            const double* __restrict pb = b;
            const double* __restrict pc = c;
            const double* __restrict pd = d;
#pragma omp parallel for simd schedule(static)
            for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i] + pc[i] * pd[i];
            escape(a);
        }
        return;
    }
    team(n, sweeps, a, [=](std::size_t lo, std::size_t hi) { triad_piece(a + lo, b + lo, c + lo, d + lo, hi - lo, s); });
}

void copy(double* c, const double* a, std::size_t n, std::size_t sweeps, stores s) {
    team(n, sweeps, c, [=](std::size_t lo, std::size_t hi) {
        double* __restrict out = c + lo;
        const double* __restrict in = a + lo;
        if (s == stores::regular) {
#pragma omp simd
            for (std::size_t i = 0; i < hi - lo; ++i) out[i] = in[i];
        } else {
            stream_loop(out, hi - lo, [=](std::size_t i) { return in[i]; }, [=](std::size_t i) { return load(in + i); });
        }
    });
}

void scale(double* d, const double* a, double q, std::size_t n, std::size_t sweeps, stores s) {
    team(n, sweeps, d, [=](std::size_t lo, std::size_t hi) {
        double* __restrict out = d + lo;
        const double* __restrict in = a + lo;
        if (s == stores::regular) {
#pragma omp simd
            for (std::size_t i = 0; i < hi - lo; ++i) out[i] = q * in[i];
        } else {
            const vd vq = broadcast(q);
            stream_loop(out, hi - lo, [=](std::size_t i) { return q * in[i]; }, [=](std::size_t i) { return vmul(vq, load(in + i)); });
        }
    });
}

void add(double* c, const double* a, const double* b, std::size_t n, std::size_t sweeps, stores s) {
    team(n, sweeps, c, [=](std::size_t lo, std::size_t hi) {
        double* __restrict out = c + lo;
        const double* __restrict x = a + lo;
        const double* __restrict y = b + lo;
        if (s == stores::regular) {
#pragma omp simd
            for (std::size_t i = 0; i < hi - lo; ++i) out[i] = x[i] + y[i];
        } else {
            stream_loop(out, hi - lo, [=](std::size_t i) { return x[i] + y[i]; },
                        [=](std::size_t i) { return vadd(load(x + i), load(y + i)); });
        }
    });
}

void triad3(double* d, const double* a, const double* b, double q, std::size_t n, std::size_t sweeps, stores s) {
    team(n, sweeps, d, [=](std::size_t lo, std::size_t hi) {
        double* __restrict out = d + lo;
        const double* __restrict x = a + lo;
        const double* __restrict y = b + lo;
        if (s == stores::regular) {
#pragma omp simd
            for (std::size_t i = 0; i < hi - lo; ++i) out[i] = y[i] + q * x[i];
        } else {
            const vd vq = broadcast(q);
            stream_loop(out, hi - lo, [=](std::size_t i) { return y[i] + q * x[i]; },
                        [=](std::size_t i) { return vadd(load(y + i), vmul(vq, load(x + i))); });
        }
    });
}

double sum_simd(const double* a, std::size_t n, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = 0;
        // The static block and an `omp simd` reduction over it: the combined `parallel for simd
        // reduction` is the same loop, but Clang 14 does not vectorize it (it warns that it
        // cannot), while both compilers vectorize this form.
#pragma omp parallel reduction(+ : s)
        {
            std::size_t lo = 0, hi = 0;
            static_block(n, static_cast<unsigned>(omp_get_thread_num()), static_cast<unsigned>(omp_get_num_threads()), lo, hi);
            const double* __restrict p = a + lo;
            const std::size_t len = hi - lo;
            double t = 0;
#pragma omp simd reduction(+ : t)
            for (std::size_t i = 0; i < len; ++i) t += p[i];
            s += t;
        }
        escape(&s);
    }
    return s;
}

double sum_unrolled(const double* a, std::size_t n, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = 0;
#pragma omp parallel reduction(+ : s)
        {
            std::size_t lo = 0, hi = 0;
            static_block(n, static_cast<unsigned>(omp_get_thread_num()), static_cast<unsigned>(omp_get_num_threads()), lo, hi);
            s += sum_piece(a + lo, hi - lo);
        }
        escape(&s);
    }
    return s;
}

double sum_one_region(const double* a, std::size_t n, std::size_t sweeps) {
    double s = 0;
#pragma omp parallel
    {
        const auto threads = static_cast<unsigned>(omp_get_num_threads());
        for (std::size_t k = 0; k < sweeps; ++k) {
            // After the previous sweep's reduction and its barrier: every thread has its share in.
#pragma omp single
            {
                escape(&s);
                s = 0;
            }
            // schedule(static) over one iteration per thread gives iteration t to thread t
            // (OpenMP: at most one chunk per thread, in thread order), the block it first touched.
#pragma omp for schedule(static) reduction(+ : s)
            for (unsigned t = 0; t < threads; ++t) {
                std::size_t lo = 0, hi = 0;
                static_block(n, t, threads, lo, hi);
                s += sum_piece(a + lo, hi - lo);
            }
        }
    }
    escape(&s);
    return s;
}

}  // namespace bench::expert
