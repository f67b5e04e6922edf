#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/error.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <new>
#include <stdexcept>
#include <string>

namespace {

TEST(Error, IsASystemErrorWithTheExactMessage) {
    try {
        ccnuma::detail::throw_error(ccnuma::errc::infeasible, "mbind of 1.5 GiB to node 3 failed");
    } catch (const std::system_error& e) {
        EXPECT_STREQ(e.what(), "ccnuma: mbind of 1.5 GiB to node 3 failed");
        EXPECT_EQ(e.code(), ccnuma::errc::infeasible);
        EXPECT_EQ(&e.code().category(), &ccnuma::error_category());
        EXPECT_STREQ(e.code().category().name(), "ccnuma");
        return;
    }
    FAIL();
}

TEST(Error, SystemErrorsCarryStrerror) {
    try {
        ccnuma::detail::throw_system_error(EINVAL, "sched_setaffinity of PU 7");
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(std::string(e.what()), "ccnuma: sched_setaffinity of PU 7: Invalid argument");
        EXPECT_EQ(e.code(), ccnuma::errc::system);
        return;
    }
    FAIL();
}

// Issue 16: the containers' std:: exceptions come from out-of-line helpers with one format,
// "<qualified operation>: <reason>".
TEST(Error, ContainerHelpersThrowWhatStdVectorWould) {
    try {
        ccnuma::detail::throw_index_out_of_range("ccnuma::vector::at", 5, 5);
        FAIL() << "no exception";
    } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "ccnuma::vector::at: index 5 is out of range for size 5 (valid: 0..4)");
    }
    try {
        ccnuma::detail::throw_index_out_of_range("ccnuma::seg_array::at", 0, 0);
        FAIL() << "no exception";
    } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "ccnuma::seg_array::at: index 0 is out of range for size 0 (it is empty)");
    }
    using ccnuma::detail::std_error;
    EXPECT_THROW(ccnuma::detail::throw_std_error(std_error::length_error, "ccnuma::vector", "too long"), std::length_error);
    EXPECT_THROW(ccnuma::detail::throw_std_error(std_error::out_of_range, {"ccnuma::per_thread", "local"}, "thread 9"),
                 std::out_of_range);
    try {
        ccnuma::detail::throw_std_error(std_error::invalid_argument, {"ccnuma::seg_array", "seg_array"}, "0 segments",
                                        "expected at least 1");
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "ccnuma::seg_array::seg_array: 0 segments (expected at least 1)");
    }
    EXPECT_THROW(ccnuma::detail::throw_bad_array_new_length(), std::bad_array_new_length);
}

// Issue 25: ccnuma::error's message is formatted and prefixed in error.cpp from its parts.
TEST(Error, StructuredMessagesGetTheOneFormat) {
    try {
        ccnuma::detail::throw_error(ccnuma::errc::invalid_argument, "ccnuma::seg_array", "a team of 9 threads",
                                    "valid: threads(1) to threads(8)");
        FAIL() << "no exception";
    } catch (const ccnuma::error& e) {
        EXPECT_STREQ(e.what(), "ccnuma: ccnuma::seg_array: a team of 9 threads (valid: threads(1) to threads(8))");
        EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
    }
}

TEST(Error, CopiesShareTheMessage) {
    const ccnuma::error a(ccnuma::errc::topology, "x");
    const ccnuma::error b = a;
    EXPECT_STREQ(a.what(), b.what());
}

TEST(Quote, EscapesAndShortens) {
    using ccnuma::detail::quote;
    EXPECT_EQ(quote("4,scater"), "\"4,scater\"");
    EXPECT_EQ(quote(std::string("a\0b", 3)), "\"a\\x00b\"");
    EXPECT_EQ(quote("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(quote(std::string(100, 'x'), 4), "\"xxxx...\" (100 characters)");
}

}  // namespace
