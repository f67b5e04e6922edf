#pragma once
// likwid-bench as a peer in the same run: its kernels on the same N and thread count,
// interleaved with ccnuma's variants by the harness.

#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
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

/// What a likwid-bench call ran, by its own output: the vector length ("Size (Byte)" over the
/// arrays' bytes, likwid-bench's rounding of n) and the hardware threads its threads ran on.
struct ran {
    std::size_t n = 0;
    /// The "running on hwthread" of its "Group:" lines by global thread number ("0,1"); empty
    /// where it printed none. likwid-bench -W N: places thread t on the t-th CPU of its mask, whatever
    /// binding ccnuma's own rows ran under.
    std::string hwthreads;
};

/// A harness variant that runs `likwid-bench -t kernel` on `n` elements per array and
/// `threads` threads, batch iterations, and returns the time likwid-bench measured itself.
/// `arrays` is the kernel's number of arrays (likwid-bench's -W size is all of them together);
/// `what_ran` receives what the last call ran (struct ran).
///
/// Each call runs in a process group of its own, killed with everything in it when `timeout`
/// seconds pass (0: 30 s plus 10 times what the call's bytes take at 1 GB/s) or when the peer
/// exits leaving a child that holds its output. Its output is validated: "Time", "Iterations",
/// "Iterations per thread" and "Size (Byte)" must be finite numbers above 0 with nothing else on
/// their lines but "sec" after the time, the counts whole; "Iterations" `threads` times
/// "Iterations per thread" (the row's thread count is what ran); "Time" no longer than the whole
/// call; "Size (Byte)" the size asked for (same_size; else the error names both sizes), and the
/// bandwidth they give at most 10 times the machine's plausible bandwidth (the L1 ceiling of
/// `threads` threads, see peers.cpp). A likwid-bench that fails (a non-zero exit, a signal),
/// here or in likwid_kernels' `likwid-bench -a`, is that failure with the end of its output.
/// Each failure throws std::runtime_error, one line naming the peer and the field.
variant likwid(const std::string& kernel, std::size_t n, unsigned threads, unsigned arrays, ran* what_ran,
               double timeout = 0);

/// The size of likwid-bench's -W argument for `bytes`: likwid-bench 5.2 reads the number into a
/// 32-bit int before its unit multiplies it (strUtil.c, bstr_to_doubleSize), so from 2 GiB it
/// refused the size and from 4 GiB it wrapped (-W N:5120000000B:2 ran on 825,032,704 bytes).
/// Up to INT_MAX bytes "<bytes>B"; beyond, "<k>kB" with k = bytes / 1000 rounded (likwid's kB is
/// 1000 bytes), then "<m>MB". Throws std::runtime_error where even MB would not fit.
inline std::string likwid_size(double bytes) {
    constexpr double int_max = 2147483647.0;
    if (bytes <= int_max) return std::to_string(static_cast<unsigned long long>(bytes)) + "B";
    if (std::round(bytes / 1e3) <= int_max) return std::to_string(static_cast<unsigned long long>(std::round(bytes / 1e3))) + "kB";
    if (std::round(bytes / 1e6) <= int_max) return std::to_string(static_cast<unsigned long long>(std::round(bytes / 1e6))) + "MB";
    char line[128];
    std::snprintf(line, sizeof line, "--peers: %.4g bytes is more than likwid-bench can be asked for (2^31 - 1 MB)", bytes);
    throw std::runtime_error(line);
}

/// Whether likwid-bench's reported "Size (Byte)" is the size asked for: within 1%, or within
/// the rounding of each thread's vectors to a multiple of 256 elements (more than any kernel's
/// stride and unroll), whichever is larger.
inline bool same_size(double reported, double requested, unsigned arrays, unsigned threads) {
    const double rounding = 8.0 * arrays * 256.0 * std::max(1u, threads);
    return std::abs(reported - requested) <= std::max(0.01 * requested, rounding);
}

}  // namespace bench::peers
