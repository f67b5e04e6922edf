#pragma once
// likwid-bench as a peer in the same run: its kernels on the same N and thread count,
// interleaved with ccnuma's variants by the harness.

#include "harness.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace bench::peers {

/// The likwid-bench kernels of one family that this CPU runs, every vector ISA it has (_avx,
/// _avx512, with and without _fma where the family has it) with regular and non-temporal
/// (_mem_) stores: family "triad" (a = b * c + d), "stream" (STREAM's triad a = b * s + c),
/// "copy" or "sum". The scalar and SSE kernels are left out where the CPU has AVX: they are
/// never the best. Throws std::runtime_error with how to install likwid when likwid-bench is
/// not on PATH. `timeout`: seconds `likwid-bench -a` may take (0: 30).
std::vector<std::string> likwid_kernels(const std::string& family, double timeout = 0);

/// Whether a likwid kernel stores around the caches (its name has _mem_).
bool streams(const std::string& kernel);

/// A harness variant that runs `likwid-bench -t kernel` on `n` elements per array and
/// `threads` threads, batch iterations, and returns the time likwid-bench measured itself.
/// `arrays` is the kernel's number of arrays (likwid-bench's -W size is all of them together);
/// `actual_n` receives the vector length likwid-bench rounded n to.
///
/// Each call runs in a process group of its own, killed with everything in it when `timeout`
/// seconds pass (0: 30 s plus 10 times what the call's bytes take at 1 GB/s) or when the peer
/// exits leaving a child that holds its output. Its output is validated: "Time", "Iterations
/// per thread" and "Size (Byte)" must be finite numbers above 0, and the bandwidth they give at
/// most 10 times the machine's plausible bandwidth (the L1 ceiling
/// of `threads` threads, see peers.cpp). Each failure throws std::runtime_error, one line
/// naming the peer and the field.
variant likwid(const std::string& kernel, std::size_t n, unsigned threads, unsigned arrays, std::size_t* actual_n,
               double timeout = 0);

}  // namespace bench::peers
