// ccnuma-bench's likwid-bench peers (tools/ccnuma-bench/peers.hpp, issue 35 item 1): the -W size
// likwid-bench 5.2 can read without overflow, and the check that it ran on that size. The run
// with a likwid-bench that reports another size is Issue35_1 (ccnuma_bench_issue35.py).

#include "../../tools/ccnuma-bench/peers.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

TEST(LikwidSize, BelowTwoGibibytesInBytes) {
    EXPECT_EQ(bench::peers::likwid_size(32000), "32000B");
    EXPECT_EQ(bench::peers::likwid_size(2147483647.0), "2147483647B");
}

// The sizes: 1e8 doubles in 4 arrays (3.2 GB, refused before) and 1.6e8 (5.12 GB, which
// ran on 825,032,704 bytes before).
TEST(LikwidSize, LargerSizesInUnitsThatFitLikwidsInt) {
    EXPECT_EQ(bench::peers::likwid_size(2147483648.0), "2147484kB");
    EXPECT_EQ(bench::peers::likwid_size(3.2e9), "3200000kB");
    EXPECT_EQ(bench::peers::likwid_size(5.12e9), "5120000kB");
    EXPECT_EQ(bench::peers::likwid_size(3e12), "3000000MB");
    EXPECT_THROW((void)bench::peers::likwid_size(3e18), std::runtime_error);
}

TEST(LikwidSize, OnlyTheSizeAskedForIsAPeer) {
    using bench::peers::same_size;
    EXPECT_TRUE(same_size(5.12e9, 5.12e9, 4, 2));
    EXPECT_FALSE(same_size(825032704, 5.12e9, 4, 2)) << "the wrapped size of issue 35";
    EXPECT_TRUE(same_size(32768, 32000, 4, 1)) << "likwid rounds each thread's vectors to its stride";
    EXPECT_FALSE(same_size(64000, 32000, 4, 1));
    EXPECT_TRUE(same_size(3.2e9 + 999, 3.2e9, 4, 2)) << "kB rounding";
}

}  // namespace
