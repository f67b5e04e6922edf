#pragma once
// Where a vector loop should start: on a cache line, so that none of its loads or stores spans
// two. The one home of that decision for ccnuma's loops: lane_sum's blocks (sums, dot, norm2,
// par::reduce) and the elementwise loops of assignments (detail/parallel.hpp).

#include <cstddef>
#include <cstdint>

namespace ccnuma::detail {

/// The bytes a vector access should start on: a cache line, the widest vector (AVX-512) too.
inline constexpr std::size_t line_bytes = 64;

/// How many elements from p to the next cache line (0 where p is on one, or the type's size does
/// not divide a line, or p is not a whole number of elements from a line: a std::complex<double>
/// 8 bytes into 16 never reaches one). A vector loop that starts there never spans two lines:
/// summing an array from 8, 16 or 32 bytes into a line read 0.68 of the speed from the line on
/// 2 threads, 0.83 on 1, and a triad into views 8 to 32 bytes in 0.59 to 0.82 on 2 threads in
/// the L2 and L3, 0.87 on 1 from memory (bench/offset_spread, issue 35). glibc's malloc starts
/// a large std::vector 16 bytes into its mapping.
template <class T>
std::size_t to_line(const T* p) noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    // A size that divides 64 is a power of two, so a % sizeof(T) == 0 puts p a whole number of
    // elements from the line.
    if (line_bytes % sizeof(T) != 0 || a % sizeof(T) != 0) return 0;
    return (line_bytes - a % line_bytes) % line_bytes / sizeof(T);
}

}  // namespace ccnuma::detail
