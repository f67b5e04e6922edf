// Placement on the host (one node): sizes, alignment, errors and diagnostics. Where pages land
// on several nodes is tested inside ccnuma-vm (tests/vm/placement_vm_test.cpp).

#include <ccnuma/error.hpp>
#include <ccnuma/placement.hpp>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <string>

namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

TEST(Policy, NamesItselfForMessages) {
    EXPECT_EQ(ccnuma::to_string(ccnuma::first_touch{}), "first_touch");
    EXPECT_EQ(ccnuma::to_string(ccnuma::first_touch{}.chunk(4).page_size(ccnuma::pages::huge)), "first_touch(chunk=4,huge)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::blocked{}.threads(8)), "blocked(threads=8)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::interleave{}), "interleave(all)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::interleave{}.nodes({0, 2, 3})), "interleave(0,2-3)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::on_node(1)), "on_node(1)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::preferred(0, ccnuma::pages::huge)), "preferred(0,huge)");
    EXPECT_EQ(ccnuma::page_kind(ccnuma::on_node(1, ccnuma::pages::huge)), ccnuma::pages::huge);
    EXPECT_EQ(ccnuma::interleave{}.nodes({1}), ccnuma::interleave{}.nodes({1}));
    EXPECT_NE(ccnuma::interleave{}.nodes({1}), ccnuma::interleave{}.nodes({0}));
}

TEST(Allocate, EveryPolicyAndSizeGivesUsableAlignedMemory) {
    const ccnuma::policy policies[] = {ccnuma::first_touch{}, ccnuma::blocked{}, ccnuma::interleave{}, ccnuma::on_node(0),
                                       ccnuma::preferred(0), ccnuma::first_touch{}.page_size(ccnuma::pages::huge)};
    for (const auto& pol : policies) {
        for (std::size_t bytes : {std::size_t{0}, std::size_t{8}, page - 1, page, 3 * page + 100, std::size_t{5} << 20}) {
            SCOPED_TRACE(ccnuma::to_string(pol) + " " + std::to_string(bytes));
            void* p = ccnuma::allocate(bytes, pol, 8, 64);
            ASSERT_NE(p, nullptr);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
            if (bytes >= page) {
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % page, 0u);
            }
            if (bytes >= page && ccnuma::page_kind(pol) == ccnuma::pages::huge) {
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (std::size_t{2} << 20), 0u);
            }
            std::memset(p, 0x5a, bytes);
            if (bytes) {
                EXPECT_EQ(static_cast<unsigned char*>(p)[bytes - 1], 0x5a);
            }
            ccnuma::deallocate(p, bytes, pol, 64);
        }
    }
}

TEST(Allocate, FirstTouchKeepsContentOfPlacedMemory) {
    // place() on memory that is already written must not change it ("non-destructive").
    const std::size_t bytes = 64 * page;
    void* p = ccnuma::allocate(bytes, ccnuma::on_node(0), 1);
    std::memset(p, 7, bytes);
    ccnuma::place(p, bytes, ccnuma::first_touch{}, 1);
    for (std::size_t i = 0; i < bytes; i += 509) ASSERT_EQ(static_cast<unsigned char*>(p)[i], 7);
    ccnuma::deallocate(p, bytes, ccnuma::on_node(0));
}

TEST(Allocate, TooLargeForTheMachineIsBadAllocAndLeaksNothing) {
    EXPECT_THROW(ccnuma::allocate(std::size_t{1} << 50, ccnuma::first_touch{}), std::bad_alloc);
    EXPECT_THROW(ccnuma::allocate(std::size_t{1} << 50, ccnuma::interleave{}), std::bad_alloc);
    EXPECT_THROW(ccnuma::allocate(~std::size_t{0} - 100, ccnuma::blocked{}.page_size(ccnuma::pages::huge)), std::bad_alloc);
}

TEST(Allocate, NodesOutsideTheAllowedSetAreNamed) {
    for (const ccnuma::policy& pol : {ccnuma::policy(ccnuma::on_node(7)), ccnuma::policy(ccnuma::preferred(7)),
                                      ccnuma::policy(ccnuma::interleave{}.nodes({0, 7}))}) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        try {
            ccnuma::allocate(1 << 20, pol);
            ADD_FAILURE() << "no error";
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::invalid_argument));
            EXPECT_NE(std::string(e.what()).find("placement " + ccnuma::to_string(pol) + " of 1.0 MiB: node 7 is not in the allowed set {"),
                      std::string::npos)
                << e.what();
        }
    }
    // Small blocks are checked too, although the heap places them.
    EXPECT_THROW(ccnuma::allocate(16, ccnuma::on_node(7)), ccnuma::error);
}

TEST(Allocate, BadAlignmentAndUnalignedPlaceAreErrors) {
    EXPECT_THROW(ccnuma::allocate(100, ccnuma::first_touch{}, 1, 48), ccnuma::error);
    EXPECT_THROW(ccnuma::allocate(100, ccnuma::first_touch{}, 1, 2 * page), ccnuma::error);
    void* p = ccnuma::allocate(4 * page, ccnuma::first_touch{});
    EXPECT_THROW(ccnuma::place(static_cast<char*>(p) + 8, page, ccnuma::first_touch{}), ccnuma::error);
    ccnuma::deallocate(p, 4 * page, ccnuma::first_touch{});
}

// Issue 17, item 3: a team beyond what the process can start overflowed libgomp's stack (rc 139)
// or exited the process ("Thread creation failed"); now it is one ccnuma::error.
TEST(Issue17, ThreadCountsBeyondTheMachineAreAnErrorNamingTheOperation) {
    for (unsigned threads : {100000u, 50000u}) {
        try {
            void* p = ccnuma::allocate(1 << 20, ccnuma::first_touch{}.threads(threads), 8);
            ccnuma::deallocate(p, 1 << 20, ccnuma::first_touch{});
            ADD_FAILURE() << threads << " threads were accepted";
        } catch (const ccnuma::error& e) {
            const std::string m = e.what();
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
            EXPECT_NE(m.find("placement first_touch(threads=" + std::to_string(threads) + ") of 1.0 MiB"), std::string::npos) << m;
            EXPECT_NE(m.find("a team of " + std::to_string(threads) + " threads"), std::string::npos) << m;
            EXPECT_NE(m.find("(valid: threads(1) to threads("), std::string::npos) << m;
        }
    }
    EXPECT_THROW(ccnuma::allocate(1 << 20, ccnuma::blocked{}.threads(100000), 8), ccnuma::error);
    // The largest team allowed still runs.
    void* p = ccnuma::allocate(1 << 20, ccnuma::first_touch{}.threads(4), 8);
    ccnuma::deallocate(p, 1 << 20, ccnuma::first_touch{});
}

// Issue 17, items 4 and 5: place() accepted a range past the end of the address space silently,
// and segfaulted on a null or unmapped range with first_touch.
TEST(Issue17, PlaceChecksItsRange) {
    auto message = [](auto&& call) {
        try {
            call();
        } catch (const ccnuma::error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    void* m = ccnuma::allocate(4 * page, ccnuma::first_touch{});
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    EXPECT_NE(message([&] { ccnuma::place(m, max, ccnuma::interleave{}); }).find("runs past the end of the address space"),
              std::string::npos);
    EXPECT_NE(message([&] { ccnuma::place(m, max, ccnuma::first_touch{}); }).find("runs past the end"), std::string::npos);
    EXPECT_NE(message([] { ccnuma::place(nullptr, 4096, ccnuma::first_touch{}); }).find("the address is null"),
              std::string::npos);
    EXPECT_NE(message([] { ccnuma::place(nullptr, 4096, ccnuma::interleave{}); }).find("the address is null"),
              std::string::npos);
    // Past the end of the block: the rest is unmapped (or someone else's read-only mapping).
    EXPECT_NE(message([&] { ccnuma::place(m, 1 << 30, ccnuma::first_touch{}); }).find("not (entirely) mapped"),
              std::string::npos);
    ccnuma::place(m, 4 * page, ccnuma::first_touch{});  // the block itself is fine
    ccnuma::deallocate(m, 4 * page, ccnuma::first_touch{});

    void* hole = ::mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(hole, MAP_FAILED);
    ::munmap(hole, 4 * page);
    const std::string unmapped = message([&] { ccnuma::place(hole, 4 * page, ccnuma::first_touch{}); });
    EXPECT_NE(unmapped.find("ccnuma: place first_touch of 16 KiB at "), std::string::npos) << unmapped;
    EXPECT_NE(unmapped.find("not (entirely) mapped writable memory"), std::string::npos) << unmapped;
    EXPECT_NE(message([&] { ccnuma::place(hole, 4 * page, ccnuma::interleave{}); }).find("not (entirely) mapped memory"),
              std::string::npos);

    void* readonly = ::mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(readonly, MAP_FAILED);
    EXPECT_NE(message([&] { ccnuma::place(readonly, 4 * page, ccnuma::first_touch{}); }).find("mapped writable"),
              std::string::npos);
    ::munmap(readonly, 4 * page);
}

TEST(Diagnostics, AChunkSmallerThanAPageIsReported) {
    std::string seen;
    ccnuma::set_diagnostic_handler([&](std::string_view m) { seen = m; });
    // 4 threads over 2 pages of doubles: each chunk is half a page (the lecture's DMVM case).
    void* p = ccnuma::allocate(2 * page, ccnuma::first_touch{}.threads(4), sizeof(double));
    ccnuma::deallocate(p, 2 * page, ccnuma::first_touch{});
    EXPECT_NE(seen.find("first_touch(threads=4) of 8.0 KiB over 4 threads: a thread's chunk (2.0 KiB) is smaller than a page"),
              std::string::npos)
        << seen;
    seen.clear();
    p = ccnuma::allocate(64 * page, ccnuma::first_touch{}.threads(4), sizeof(double));
    ccnuma::deallocate(p, 64 * page, ccnuma::first_touch{});
    EXPECT_TRUE(seen.empty()) << seen;
    ccnuma::set_diagnostic_handler({});
}

}  // namespace
