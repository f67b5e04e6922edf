// vector.hpp's reductions built for this CPU (-march=native where the build allows it,
// tests/CMakeLists.txt): there GCC contracts a product and the add that sums it into one FMA,
// which the portable build (SSE2, no FMA) never does, so only here can a sum's bits move with
// which of its elements the blocks' main loop takes (issue 35). A sum of any expression starts
// its blocks on a cache line of its first array (detail/lane_sum.hpp, line_start): the same
// values from any address must give the same bits.

#include <ccnuma/detail/lane_sum.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

/// Values of every mantissa and a range of exponents, so that a product rounded on its own and
/// one rounded inside an FMA differ in most sums (regular values agree too often).
template <class T>
std::vector<T> values(std::size_t n, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-8, 8);
    std::vector<T> v(n);
    for (auto& x : v) {
        const double m = mantissa(gen);  // before the exponent: an argument list's order is the compiler's
        x = static_cast<T>(std::ldexp(m, exponent(gen)));
    }
    return v;
}

template <class T>
bool same_bits(T a, T b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Every reduction of products over x, y and z copied to each offset into a cache line (all
/// three at the same offset, as three std::vectors from malloc are): the same bits from each.
template <class T>
void from_any_address(std::size_t n) {
    const auto xv = values<T>(n, 1), yv = values<T>(n, 2), zv = values<T>(n, 3);
    constexpr std::size_t line = 64 / sizeof(T);
    std::vector<T> xs(n + line), ys(n + line), zs(n + line);
    struct results {
        T dot, norm2, sum_product, sum_negated, sum_triple, sum_fma, sum_scaled;
    };
    std::optional<results> first;
    for (std::size_t off = 0; off < line; ++off) {
        std::copy(xv.begin(), xv.end(), xs.begin() + static_cast<std::ptrdiff_t>(off));
        std::copy(yv.begin(), yv.end(), ys.begin() + static_cast<std::ptrdiff_t>(off));
        std::copy(zv.begin(), zv.end(), zs.begin() + static_cast<std::ptrdiff_t>(off));
        const auto x = ccnuma::view(xs.data() + off, n), y = ccnuma::view(ys.data() + off, n), z = ccnuma::view(zs.data() + off, n);
        const results got{ccnuma::dot(x, y),          ccnuma::norm2(x),           ccnuma::sum(x * y),
                          ccnuma::sum(-(x * y)),      ccnuma::sum(x * y * z),     ccnuma::sum(x * y + z),
                          ccnuma::sum(T(3) * (x * y))};
        if (!first) {
            first = got;
            // Not a number that happens to agree: the dot is the dot, to a rounding per element.
            long double ref = 0;
            for (std::size_t i = 0; i < n; ++i) ref += static_cast<long double>(xv[i]) * yv[i];
            EXPECT_NEAR(static_cast<double>(got.dot), static_cast<double>(ref), std::abs(static_cast<double>(ref)) * (sizeof(T) == 4 ? 1e-4 : 1e-12));
        }
        const std::string where = "n " + std::to_string(n) + ", offset " + std::to_string(off) + " elements";
        EXPECT_TRUE(same_bits(first->dot, got.dot)) << where << ": dot " << first->dot << " then " << got.dot;
        EXPECT_TRUE(same_bits(first->norm2, got.norm2)) << where << ": norm2";
        EXPECT_TRUE(same_bits(first->sum_product, got.sum_product)) << where << ": sum(x * y)";
        EXPECT_TRUE(same_bits(first->sum_negated, got.sum_negated)) << where << ": sum(-(x * y))";
        EXPECT_TRUE(same_bits(first->sum_triple, got.sum_triple)) << where << ": sum(x * y * z)";
        EXPECT_TRUE(same_bits(first->sum_fma, got.sum_fma)) << where << ": sum(x * y + z)";
        EXPECT_TRUE(same_bits(first->sum_scaled, got.sum_scaled)) << where << ": sum(3 * (x * y))";
    }
}

}  // namespace

// The build this test is meant for: FMA instructions where this CPU has them (the test is
// built only with -march=native, tests/CMakeLists.txt).
TEST(VectorNative, BuiltForThisCpu) {
#if defined(__x86_64__)
    __builtin_cpu_init();
#ifdef __FMA__
    SUCCEED() << "built with FMA";
#else
    EXPECT_FALSE(__builtin_cpu_supports("fma")) << "this CPU has FMA, but -march=native did not turn it on";
#endif
#endif
}

// The kernel itself, over products: every start below a block and every n up to three blocks
// give the bits of start 0, each element read once. The head, the blocks and the tail all round
// a product as the others do (the tail's form is the compiler's: lane_sum.hpp).
template <class T>
void lane_sum_of_products_from_every_start() {
    constexpr std::size_t lanes = ccnuma::detail::sum_lanes<T>;
    const auto x = values<T>(3 * lanes, 4), y = values<T>(3 * lanes, 5);
    for (std::size_t n = 0; n <= 3 * lanes; ++n) {
        std::vector<unsigned> reads(n);
        const auto at = [&](std::size_t i) {
            ++reads[i];
            return x[i] * y[i];
        };
        const T first = ccnuma::detail::lane_sum<T>(n, at, 0);
        for (std::size_t start = 1; start < 2 * lanes; ++start) {
            std::fill(reads.begin(), reads.end(), 0u);
            const T got = ccnuma::detail::lane_sum<T>(n, at, start);
            EXPECT_TRUE(same_bits(first, got)) << "n " << n << ", start " << start << ": " << first << " then " << got;
            EXPECT_EQ(std::count(reads.begin(), reads.end(), 1u), static_cast<std::ptrdiff_t>(n)) << "n " << n << ", start " << start;
        }
    }
}

TEST(VectorNative, LaneSumOfProductsGivesTheSameBitsFromEveryStart) {
    lane_sum_of_products_from_every_start<double>();
    lane_sum_of_products_from_every_start<float>();
}

// Where a sum of an expression starts its blocks: on a line of its first array operand, a scalar
// before it or not; elements of a type that does not divide a line leave the start at 0.
TEST(VectorNative, ExpressionsStartOnALineOfTheirFirstArray) {
    std::vector<double> xs(64), ys(64);
    std::vector<float> fs(64);
    for (std::size_t off = 0; off < 8; ++off) {
        const auto x = ccnuma::view(xs.data() + off, 32), y = ccnuma::view(ys.data() + off + 1, 32);
        const auto f = ccnuma::view(fs.data() + off, 32);
        for (std::size_t lo : {std::size_t{0}, std::size_t{3}, std::size_t{17}}) {
            const std::size_t want = ccnuma::detail::to_line(xs.data() + off + lo);
            EXPECT_EQ(ccnuma::detail::node_of(x).eval().line_start(lo), want) << off << " " << lo;
            EXPECT_EQ(ccnuma::detail::node_of(x * y).eval().line_start(lo), want) << off << " " << lo;
            EXPECT_EQ(ccnuma::detail::node_of(2.0 * (x * y)).eval().line_start(lo), want) << off << " " << lo;
            EXPECT_EQ(ccnuma::detail::node_of(-(x + y)).eval().line_start(lo), want) << off << " " << lo;
            EXPECT_EQ(ccnuma::detail::node_of(y * x).eval().line_start(lo), ccnuma::detail::to_line(ys.data() + off + 1 + lo));
            // A float operand first in a double expression: its own line, counted in elements.
            EXPECT_EQ(ccnuma::detail::node_of(f * x).eval().line_start(lo), ccnuma::detail::to_line(fs.data() + off + lo));
        }
        EXPECT_LT(ccnuma::detail::to_line(xs.data() + off), 8u);
    }
    struct three {
        char c[3];
    };
    std::vector<three> odd(8);
    EXPECT_EQ(ccnuma::detail::to_line(odd.data() + 1), 0u) << "3-byte elements never fill a line exactly";
    // 16-byte elements aligned to 8 (std::complex<double>'s shape), 8 bytes into 16: no whole
    // number of them reaches a line (the address alone is asked; nothing is read through it).
    struct two {
        double re, im;
    };
    alignas(64) static double storage[32];
    EXPECT_EQ(ccnuma::detail::to_line(reinterpret_cast<const two*>(storage + 1)), 0u);
    EXPECT_EQ(ccnuma::detail::to_line(reinterpret_cast<const two*>(storage + 2)), 3u);
}

TEST(VectorNative, ReductionsOfProductsGiveTheSameBitsFromAnyAddress) {
    // Sizes below, at and past a block (32 doubles, 64 floats), with the default team.
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{31}, std::size_t{100}, std::size_t{1001}, std::size_t{20011}}) {
        from_any_address<double>(n);
        from_any_address<float>(n);
    }
}
