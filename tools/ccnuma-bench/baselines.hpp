#pragma once
// The loops an HPC engineer writes by hand, in one place: every ccnuma row is compared with
// these (and with likwid-bench's assembly kernels), never with a weaker loop. `__restrict`
// operands, `omp simd` on every loop, reductions with several vector accumulators, and for every
// kernel that stores a regular-store and a non-temporal-store twin. They use no ccnuma code, so
// a defect of the library cannot flatter it by also slowing its baseline.
//
// Each team-wide function runs `sweeps` sweeps, each in its own `parallel` region with the
// static schedule's partition (so it first-touches and reads pages as a `parallel for` and
// ccnuma's containers do), and hands its output to escape() so no sweep is deleted.

#include <cstddef>
#include <string>

namespace bench::expert {

/// Regular stores (write-allocate) or non-temporal ones.
enum class stores { regular, streaming };
const char* to_string(stores s);

/// The vector ISA the kernels of this executable were compiled for ("AVX-512", "AVX2", "AVX",
/// "SSE2"): the build's -march, which the run's context records.
const char* isa();

/// The build type and flags the kernels of this executable were compiled with ("RelWithDebInfo:
/// -O2 -g -DNDEBUG -fopenmp -march=native"), which the run's context records.
const char* flags();

/// The static schedule's block of thread t of `threads` over n elements: [lo, hi). The same
/// partition as `schedule(static)` in libgomp and libomp, so that pages first-touched by a
/// `parallel for` are read by the thread that placed them.
void static_block(std::size_t n, unsigned t, unsigned threads, std::size_t& lo, std::size_t& hi);

// ---- one thread's piece: the inner loops, shared by the team-wide kernels below and by the
// placement experiment, which runs exactly these on every variant's memory ----------------------

void triad_piece(double* __restrict a, const double* __restrict b, const double* __restrict c,
                 const double* __restrict d, std::size_t len, stores s);
/// STREAM's triad a = b + q * c, regular stores (tiers: only the placement under it varies).
void scaled_triad_piece(double* __restrict a, const double* __restrict b, const double* __restrict c, double q,
                        std::size_t len);
/// Four vector accumulators (the widest the build has) and a scalar tail; in a fixed order.
double sum_piece(const double* __restrict a, std::size_t len);

// ---- team-wide kernels ---------------------------------------------------------------------

/// a = b + c * d.
void triad(double* a, const double* b, const double* c, const double* d, std::size_t n, std::size_t sweeps, stores s);
/// STREAM: c = a; d = q * a; c = a + b; d = b + q * a.
void copy(double* c, const double* a, std::size_t n, std::size_t sweeps, stores s);
void scale(double* d, const double* a, double q, std::size_t n, std::size_t sweeps, stores s);
void add(double* c, const double* a, const double* b, std::size_t n, std::size_t sweeps, stores s);
void triad3(double* d, const double* a, const double* b, double q, std::size_t n, std::size_t sweeps, stores s);

/// sum(a) with `#pragma omp parallel for simd reduction(+:s)`: what most experts write.
double sum_simd(const double* a, std::size_t n, std::size_t sweeps);
/// sum(a) with each thread's block in sum_piece (four vector accumulators): the fastest sum.
double sum_unrolled(const double* a, std::size_t n, std::size_t sweeps);
/// sum(a) as a time-step loop inside one parallel region has it: the region opened once for all
/// the sweeps, each sweep an orphaned `omp for` reduction that gives thread t its static block
/// (sum_piece). No fork per sweep, but the two barriers a result shared by the team needs: the
/// `single` that resets it and the reduction's own. The expert's structure when the caller's
/// loop, not the sum, owns the region; a ccnuma call always opens its own (vector.md).
double sum_one_region(const double* a, std::size_t n, std::size_t sweeps);

}  // namespace bench::expert
