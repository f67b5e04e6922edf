#pragma once
// The one summation kernel of ccnuma::sum (and dot, norm2, sum of any expression),
// ccnuma::reduce and ccnuma::par::reduce over contiguous arithmetic ranges.
//
// A floating-point sum written as one loop is one dependent chain: the compiler may neither
// vectorize nor reassociate it without -ffast-math, so it runs one add per add latency (about
// 4 cycles), a tenth of what the core can do. `omp simd reduction` leaves the order, and so
// the bits, to the compiler and the ISA. Here element j of a range goes to accumulator
// j % lanes, a fixed array of lanes partial sums combined in a fixed tree at the end: the
// reassociation is written out, so the compiler vectorizes the adds without any permission
// (packed SSE2 at -O2, 8 ymm or 4 zmm accumulators with -march=native) and a sum of values
// depends only on the range, never on the ISA, the alignment or the compiler's choices. A sum
// of products (dot) is the exception between compilers: GCC contracts a product and its add
// into one FMA (its default, -ffp-contract=fast, where the target has FMA), Clang 14 rounds
// twice, so their bits differ. Within one build they do not move with the blocks' start: the
// head's elements are their lanes' first, where an FMA into the identity rounds as the product
// alone does, and GCC contracts the tail as it does the blocks. That holds for the compilers'
// default contraction; Clang under -ffp-contract=fast would contract the blocks but not its
// form of the tail, and a compiler that defines __clang__ but contracts across statements
// (Intel's icpx) takes Clang's form.

#include <ccnuma/detail/line.hpp>

#include <cstddef>
#include <functional>
#include <type_traits>

namespace ccnuma::detail {

/// The number of partial sums: 256 bytes of them, enough independent adds to cover the add
/// latency on two ports at any vector width up to 512 bits (4 zmm, 8 ymm; 16 xmm in an SSE2
/// build). Depends on the type alone, so every build sums in the same order.
template <class T>
inline constexpr std::size_t sum_lanes = sizeof(T) >= 256 / 8 ? 8 : 256 / sizeof(T);

/// The identity the accumulators start from: -0.0 for floating point (-0.0 + x is x for every
/// x, +0.0 and -0.0 included, where +0.0 + -0.0 would turn a sum of negative zeros positive).
template <class T>
constexpr T sum_identity() noexcept {
    if constexpr (std::is_floating_point_v<T>) return -T{};
    else return T{};
}

/// Types the kernel sums: builtin arithmetic other than bool, whose + is associative for
/// integers (exact, modulo the type) and reassociable by the rules of std::reduce for
/// floating point.
template <class T>
concept lane_summable = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

/// Whether reduce(first, last, T init, Op) over elements of type V is a plain sum the kernel
/// may compute: init and elements of one arithmetic type, and op std::plus<> or std::plus<T>.
/// A mixed init (an int init over doubles rounds at every step) or any other op keeps
/// std::reduce's semantics.
template <class T, class V, class Op>
concept plain_sum = lane_summable<T> && std::is_same_v<std::remove_cv_t<V>, T> &&
                    (std::is_same_v<Op, std::plus<>> || std::is_same_v<Op, std::plus<T>>);

/// at(0) + ... + at(n - 1), element j into partial sum j % sum_lanes<T>, then the partial sums
/// pairwise (lane k with lane k + w for w = lanes/2, lanes/4, ..., 1). `at` by value: a copy
/// local to this function, whose pointers the compiler keeps in registers. Returns
/// sum_identity<T>() for n == 0. The whole blocks start at element `start` modulo a block
/// (to_line's count for the range's first address; 0 where that is past n): that changes where
/// the loads fall, never a bit of the result. A count past a block comes from an operand
/// narrower than T (int8_t elements in a sum of doubles: up to 63 to a line, 32 lanes); modulo
/// the block, that operand's loads still start on a block's width.
template <lane_summable T, class At>
T lane_sum(std::size_t n, At at, std::size_t start = 0) noexcept(noexcept(at(std::size_t{}))) {
    constexpr std::size_t lanes = sum_lanes<T>;
    start %= lanes;
    if (start > n) start = 0;
    // Every loop over the lanes is unrolled and indexed by constants only, so that the partial
    // sums can stay in registers throughout: one index not known at compile time (a tail loop
    // over acc[k]) puts the whole array in memory, which cost Clang 14 a fifth of its speed in
    // the main loop (issue 35).
    // acc[k] sums the elements j with (j - start) % lanes == k, which is lane (start + k) % lanes.
    // The elements before `start` are the first of their lanes, so they start those partial
    // sums (a lane's first add is to the identity, which changes no bit): every lane adds its
    // elements in the same order whatever `start` is. They go to a separate array, by a loop of
    // its own, and acc is copied from it whole: acc[k] chosen per lane at run time made Clang 14
    // keep the partial sums in 16 xmm registers instead of 4 zmm, in the main loop too.
    T head[lanes];
#pragma GCC unroll 64
    for (std::size_t k = 0; k < lanes; ++k) head[k] = sum_identity<T>();
    for (std::size_t j = 0; j < start; ++j) head[lanes - start + j] = at(j);
    T acc[lanes];
#pragma GCC unroll 64
    for (std::size_t k = 0; k < lanes; ++k) acc[k] = head[k];
    // The loop counts blocks down, so that both compilers keep the pointers alone and compare
    // them with their end: GCC 12 kept a block counter beside them under `i + lanes <= n` (one
    // instruction more per 256 bytes), and Clang 14 an index and two copies of it. That cost 16%
    // from memory and 8% in the L2 on one Zen 5 core (issue 35: 28.3 against 33.7 GB/s over
    // 512 MB, 196 against 214 over 512 KB, medians of 11 and 15 rounds). The tail must start
    // from the loop's own i: from a separately computed n - n % lanes, Clang 14 no longer
    // vectorizes the loop into whole registers.
    std::size_t i = start;
    for (std::size_t blocks = (n - start) / lanes; blocks != 0; --blocks, i += lanes) {
        // The block's values first, then the adds: Clang vectorizes an expression's block
        // (x * y) only in this form. Unrolled, so that the partial sums live in registers at
        // -O2 too (GCC otherwise vectorizes a loop over them in memory there).
        T x[lanes];
#pragma GCC unroll 64
        for (std::size_t k = 0; k < lanes; ++k) x[k] = at(i + k);
#pragma GCC unroll 64
        for (std::size_t k = 0; k < lanes; ++k) acc[k] = static_cast<T>(acc[k] + x[k]);
    }
    if (i < n) {
        // The tail as one more block, in its own lanes so that element j's lane is
        // (j - start) % lanes whatever n is.
#if defined(__clang__)
        // A lane with no element adds the identity, which changes no bit. Clang contracts a
        // product and an add only within one expression (-ffp-contract=on, its default), never
        // across at()'s return, so an element rounds alike here and in the blocks. The form
        // below (GCC's) made Clang 14 keep the partial sums in 16 xmm registers in the main
        // loop: a sum over 512 KB ran at 108 GB/s instead of 200 (issue 35).
        T x[lanes];
#pragma GCC unroll 64
        for (std::size_t k = 0; k < lanes; ++k) x[k] = i + k < n ? at(i + k) : sum_identity<T>();
#pragma GCC unroll 64
        for (std::size_t k = 0; k < lanes; ++k) acc[k] = static_cast<T>(acc[k] + x[k]);
#else
        // Each element is added as the main loop adds it, acc[k] + at(i + k) in one statement.
        // GCC contracts a product and the add that uses it into an FMA across statements
        // (-ffp-contract=fast, its default where FMA instructions exist), so it does so here as
        // in the blocks, and an element rounds the same whether `start` puts it in a block or in
        // the tail. A select between at(i + k) and the identity, added after, kept the product
        // from the add: a dot's bits moved with its operands' address (issue 35,
        // tests/unit/vector_native_test.cpp).
#pragma GCC unroll 64
        for (std::size_t k = 0; k < lanes; ++k)
            if (i + k < n) acc[k] = static_cast<T>(acc[k] + at(i + k));
#endif
    }
    // acc holds the lanes rotated by `start`, and the tree needs no rotation back: each level
    // adds lane k to lane k + w (mod 2w), a rotation maps those pairs onto the same pairs, and
    // a + b is b + a to the bit, so each level's sums are the unrotated ones, rotated, and the
    // last one is the same number. (Two NaNs of different payloads are the exception: x86's add
    // keeps its first operand's, so which of them a NaN sum carries may move with `start`.)
#pragma GCC unroll 8
    for (std::size_t w = lanes / 2; w > 0; w /= 2)
#pragma GCC unroll 64
        for (std::size_t k = 0; k < w; ++k) acc[k] = static_cast<T>(acc[k] + acc[k + w]);
    return acc[0];
}

/// lane_sum over the contiguous elements p[0, n), its blocks from p's next cache line.
template <lane_summable T>
T lane_sum(const T* p, std::size_t n) noexcept {
    return lane_sum<T>(n, [p](std::size_t i) noexcept { return p[i]; }, detail::to_line(p));
}

}  // namespace ccnuma::detail
