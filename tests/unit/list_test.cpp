// The list syntax of taskset and numactl ("0-3,8"): format_list and parse_list. (Moved here
// from topology_test.cpp with the declarations, which left topology.hpp for list.hpp.)

#include <ccnuma/error.hpp>
#include <ccnuma/list.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

// Issue 17 (found while fuzzing the CPU list parser): repeated ranges were expanded before the
// duplicates went, so CCNUMA_CPUSET="0-1048575,0-1048575,..." took gigabytes. They are merged first.
TEST(Issue17, RepeatedRangesInAListCostNoMoreThanOne) {
    std::string text = "0-1048575";
    for (int i = 0; i < 2000; ++i) text += ",0-1048575";
    const auto all = ccnuma::parse_list(text, "CCNUMA_CPUSET");
    ASSERT_EQ(all.size(), 1048576u);
    EXPECT_EQ(all.front(), 0u);
    EXPECT_EQ(all.back(), 1048575u);
    EXPECT_EQ(ccnuma::parse_list("8-9,0-3,2-5,7", "test"), (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 7, 8, 9}));
    EXPECT_EQ(ccnuma::parse_list("4,3,2", "test"), (std::vector<unsigned>{2, 3, 4}));
}

TEST(Lists, FormatAndParseRoundTrip) {
    EXPECT_EQ(ccnuma::format_list(std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(ccnuma::format_list(std::vector<unsigned>{}), "");
    EXPECT_EQ(ccnuma::parse_list("0-3,8,10-11", "test"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(ccnuma::parse_list("5,1,1", "test"), (std::vector<unsigned>{1, 5}));
    EXPECT_THROW((void)ccnuma::parse_list("", "test"), ccnuma::error);
}

}  // namespace
