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

// Issue 25: numactl's set rules live once (detail::parse_set), for nodes and CPUs alike.
TEST(Issue25, CpuAndNodeSetsShareNumactlRules) {
    const std::vector<unsigned> allowed{4, 5, 6, 7};
    EXPECT_EQ(ccnuma::parse_cpu_set("all", allowed), allowed);
    EXPECT_EQ(ccnuma::parse_cpu_set("+1,3", allowed), (std::vector<unsigned>{5, 7}));
    EXPECT_EQ(ccnuma::parse_cpu_set("!5", allowed), (std::vector<unsigned>{4, 6, 7}));
    EXPECT_EQ(ccnuma::parse_cpu_set("!+0-1", allowed), (std::vector<unsigned>{6, 7}));
    EXPECT_EQ(ccnuma::parse_cpu_set("6,4", allowed), (std::vector<unsigned>{4, 6}));
    for (const char* text : {"all", "+1,3", "!5", "!+0-1", "6,4"})
        EXPECT_EQ(ccnuma::parse_cpu_set(text, allowed), ccnuma::parse_node_set(text, allowed)) << text;
    const auto message = [&](const char* text) {
        try {
            (void)ccnuma::parse_cpu_set(text, allowed);
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument) << text;
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("3"), "ccnuma: CPU set \"3\": CPU 3 is not in the allowed set {4-7}");
    EXPECT_EQ(message("+4"), "ccnuma: CPU set \"+4\": relative CPU +4 does not exist: the allowed set {4-7} has 4 "
                             "CPU(s), +0 to +3");
    EXPECT_EQ(message("!all"), "ccnuma: bad CPU set \"!all\": unexpected character \"a\" at position 1 (expected all, "
                               "a list such as 0-2,4, +0-1 for the first two allowed CPUs, or ! before a list for all "
                               "other CPUs)");
    EXPECT_EQ(message("!4-7"), "ccnuma: CPU set \"!4-7\": no CPU is left (the allowed set is {4-7})");
}

}  // namespace
