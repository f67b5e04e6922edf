#pragma once
// likwid-bench as a peer in the same run: its triad kernels on the same N and thread count,
// interleaved with ccnuma's variants by the harness.

#include "harness.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace bench::peers {

/// The likwid-bench triad kernels this CPU runs (triad_avx, triad_avx512, triad_mem_avx,
/// triad_mem_avx512, as its flags allow). Throws std::runtime_error with how to install likwid
/// when likwid-bench is not on PATH.
std::vector<std::string> likwid_kernels();

/// A harness variant that runs `likwid-bench -t kernel` on `n` elements per array and
/// `threads` threads, batch iterations, and returns the time likwid-bench measured itself.
/// `actual_n` receives the vector length likwid-bench rounded n to.
variant likwid(const std::string& kernel, std::size_t n, unsigned threads, std::size_t* actual_n);

}  // namespace bench::peers
