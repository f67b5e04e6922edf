// Placement on the host (one node): sizes, alignment, errors and diagnostics. Where pages land
// on several nodes is tested inside ccnuma-vm (tests/vm/placement_vm_test.cpp).

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/memory_policy.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/system.hpp>
#include <ccnuma/topology.hpp>

#include "../support/static_owners.hpp"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <utility>
#include <string>
#include <variant>
#include <vector>

namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

TEST(Policy, NamesItselfForMessages) {
    EXPECT_EQ(ccnuma::to_string(ccnuma::first_touch{}), "first_touch");
    EXPECT_EQ(ccnuma::to_string(ccnuma::first_touch{}.chunk(4).pages(ccnuma::page_kind::huge)), "first_touch(chunk=4,huge)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::blocked{}.threads(8)), "blocked(threads=8)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::interleave{}), "interleave(all)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::interleave{}.nodes({0, 2, 3})), "interleave(0,2-3)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::on_node(1)), "on_node(1)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::preferred(0, ccnuma::page_kind::huge)), "preferred(0,huge)");
    EXPECT_EQ(ccnuma::page_kind_of(ccnuma::on_node(1, ccnuma::page_kind::huge)), ccnuma::page_kind::huge);
    EXPECT_EQ(ccnuma::interleave{}.nodes({1}), ccnuma::interleave{}.nodes({1}));
    EXPECT_NE(ccnuma::interleave{}.nodes({1}), ccnuma::interleave{}.nodes({0}));
}

TEST(Issue26, TierPoliciesNameThemselves) {
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1})), "weighted_interleave(0:2,2:1)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}.nodes({0, 2}).weights(ccnuma::by_bandwidth)),
              "weighted_interleave(0,2,by_bandwidth)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}.nodes({0, 2})), "weighted_interleave(0,2)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}), "weighted_interleave(all)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}.weights({1, 2, 3})), "weighted_interleave(all:1,2,3)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}.nodes({0}).weights({3}).pages(ccnuma::page_kind::huge)),
              "weighted_interleave(0:3,huge)");
    // A count mismatch still shows every input, so its error names what was given.
    EXPECT_EQ(ccnuma::to_string(ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2})), "weighted_interleave(0:2,2:?)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth)), "first_touch(tiers=by_bandwidth)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth).chunk(4).pages(ccnuma::page_kind::huge)),
              "first_touch(tiers=by_bandwidth,chunk=4,huge)");
    EXPECT_EQ(ccnuma::to_string(ccnuma::fastest{}), "fastest");
    EXPECT_EQ(ccnuma::to_string(ccnuma::fastest{}.threads(2)), "fastest(threads=2)");
    EXPECT_EQ(ccnuma::page_kind_of(ccnuma::fastest{}.pages(ccnuma::page_kind::huge)), ccnuma::page_kind::huge);
    // The last setter of the weights decides.
    EXPECT_EQ(ccnuma::weighted_interleave{}.weights(ccnuma::by_bandwidth).weights({1}), ccnuma::weighted_interleave{}.weights({1}));
    EXPECT_NE(ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth), ccnuma::first_touch{});
}

// Issue 36: parse_policy reads what to_string writes, for every alternative of the variant and
// every setting to_string prints, so a policy pasted from one tool's output reads in another.
TEST(Issue36, ParsePolicyReadsBackEveryPolicyToStringWrites) {
    using ccnuma::by_bandwidth;
    constexpr auto huge = ccnuma::page_kind::huge;
    const std::vector<ccnuma::policy> policies = {
        ccnuma::first_touch{},
        ccnuma::first_touch{}.chunk(4).threads(2),
        ccnuma::first_touch{}.partition(ccnuma::partition({0, 40, 100})).pages(huge),
        ccnuma::first_touch{}.tiers(by_bandwidth).chunk(4).pages(huge),
        ccnuma::blocked{},
        ccnuma::blocked{}.threads(8).pages(huge),
        ccnuma::blocked{}.partition(ccnuma::partition::equal(1000, 3)),
        ccnuma::interleave{},
        ccnuma::interleave{}.nodes({0, 2, 3}),
        ccnuma::interleave{}.pages(huge),
        ccnuma::on_node(1),
        ccnuma::on_node(3, huge),
        ccnuma::preferred(0),
        ccnuma::preferred(2, huge),
        ccnuma::weighted_interleave{},
        ccnuma::weighted_interleave{}.nodes({0, 2}),
        ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1}),
        ccnuma::weighted_interleave{}.nodes({0, 2}).weights(by_bandwidth),
        ccnuma::weighted_interleave{}.weights({1, 2, 3}),
        ccnuma::weighted_interleave{}.weights(by_bandwidth).pages(huge),
        ccnuma::weighted_interleave{}.nodes({0}).weights({3}).pages(huge),
        ccnuma::fastest{},
        ccnuma::fastest{}.threads(2).chunk(64).pages(huge),
    };
    std::vector<bool> seen(std::variant_size_v<ccnuma::policy>);
    for (const auto& p : policies) {
        const std::string text = ccnuma::to_string(p);
        SCOPED_TRACE(text);
        const ccnuma::policy back = ccnuma::parse_policy(text);
        EXPECT_EQ(back, p);
        EXPECT_EQ(ccnuma::to_string(back), text);
        seen[p.index()] = true;
    }
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_TRUE(seen[i]) << "no round trip of alternative " << i;
}

TEST(Issue36, EachSetterHasAGetterOfItsName) {
    // The fields were node_set, weight_set, from_bandwidth and split_by_bandwidth beside setters
    // called nodes(), weights() and tiers(): now private, read back under the setters' names.
    using ccnuma::by_bandwidth;
    EXPECT_TRUE(ccnuma::interleave{}.nodes().empty());
    EXPECT_EQ(ccnuma::interleave{}.nodes({0, 2}).nodes(), (std::vector<unsigned>{0, 2}));
    const auto w = ccnuma::weighted_interleave{}.nodes({1, 3}).weights({2, 1});
    EXPECT_EQ(w.nodes(), (std::vector<unsigned>{1, 3}));
    EXPECT_EQ(w.weights(), (std::vector<unsigned>{2, 1}));
    EXPECT_FALSE(w.weights_by_bandwidth());
    // by_bandwidth replaces explicit weights, and explicit weights replace by_bandwidth.
    auto b = ccnuma::weighted_interleave{}.weights({2, 1}).weights(by_bandwidth);
    EXPECT_TRUE(b.weights_by_bandwidth());
    EXPECT_TRUE(b.weights().empty());
    b.weights({4});
    EXPECT_FALSE(b.weights_by_bandwidth());
    EXPECT_EQ(b.weights(), (std::vector<unsigned>{4}));
    EXPECT_FALSE(ccnuma::first_touch{}.tiers_by_bandwidth());
    EXPECT_TRUE(ccnuma::first_touch{}.tiers(by_bandwidth).tiers_by_bandwidth());
    EXPECT_NE(ccnuma::first_touch{}.tiers(by_bandwidth), ccnuma::first_touch{});  // == sees the private fields
    EXPECT_NE(ccnuma::interleave{}.nodes({0}), ccnuma::interleave{}.nodes({1}));
}

TEST(Issue36, ParsePolicyNamesWhatIsWrongAndTheForms) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "unknown policy"},
        {"scatter", "unknown policy \"scatter\""},
        {"on_node:4", "unknown policy \"on_node:4\""},
        {"on_node", "on_node takes one node"},
        {"on_node(1,2)", "on_node takes one node"},
        {"on_node(x)", "node \"x\" is not a number"},
        {"on_node(-1)", "node \"-1\" is not a number"},
        {"preferred(99999999999999999999)", "is not a number from 0 to 1048575"},
        {"interleave(0-", "do not end with ')'"},
        {"interleave()", "empty parentheses"},
        {"interleave(0,,2)", "an empty argument"},
        {"interleave(3-1)", "node list"},
        {"first_touch(chunk=)", "chunk \"\" is not a number"},
        {"first_touch(chunk=4", "do not end with ')'"},
        {"first_touch(tiers=fast)", "unknown argument \"tiers=fast\""},
        {"blocked(tiers=by_bandwidth)", "unknown argument \"tiers=by_bandwidth\""},
        {"first_touch(partition(0,50,20))", "partition"},
        {"first_touch(partition(0,1,2,3,4,5,6,7,8,...,20,21,22,23,24,25,26,27,28))", "shortened"},
        {"first_touch(partition(0,(1)))", "partition boundary"},
        {"fastest())", "closes nothing"},
        {"weighted_interleave(0:2,1)", "node \"1\" has no weight"},
        {"weighted_interleave(huge)", "needs nodes"},
    };
    for (const auto& [text, says] : cases) {
        SCOPED_TRACE(text);
        try {
            (void)ccnuma::parse_policy(text);
            ADD_FAILURE() << "parsed";
        } catch (const ccnuma::error& e) {
            const std::string m = e.what();
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
            EXPECT_EQ(m.rfind("ccnuma: parse_policy: ", 0), 0u) << m;
            EXPECT_NE(m.find(says), std::string::npos) << m;
            EXPECT_NE(m.find("as to_string writes them"), std::string::npos) << m;
        }
    }
}

TEST(Allocate, EveryPolicyAndSizeGivesUsableAlignedMemory) {
    const ccnuma::policy policies[] = {ccnuma::first_touch{}, ccnuma::blocked{}, ccnuma::interleave{}, ccnuma::on_node(0),
                                       ccnuma::preferred(0), ccnuma::first_touch{}.pages(ccnuma::page_kind::huge)};
    for (const auto& pol : policies) {
        for (std::size_t bytes : {std::size_t{0}, std::size_t{8}, page - 1, page, 3 * page + 100, std::size_t{5} << 20}) {
            SCOPED_TRACE(ccnuma::to_string(pol) + " " + std::to_string(bytes));
            void* p = ccnuma::allocate(bytes, pol, 8, 64);
            ASSERT_NE(p, nullptr);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
            if (bytes >= page) {
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % page, 0u);
            }
            if (bytes >= page && ccnuma::page_kind_of(pol) == ccnuma::page_kind::huge) {
                // The huge page the kernel tells, else (no THP) the base page: the placement unit.
                const std::size_t huge = ccnuma::support().huge_page_size;
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (huge ? huge : page), 0u);
            }
            std::memset(p, 0x5a, bytes);
            if (bytes) {
                EXPECT_EQ(static_cast<unsigned char*>(p)[bytes - 1], 0x5a);
            }
            ccnuma::deallocate(p, bytes, pol, 64);
        }
    }
}

// Issue 35: allocate_with_cookie puts the elements, not the block, on the placement unit, maps
// the cookie's page before them, and deallocate_with_cookie unmaps all of it.
TEST(Allocate, WithCookieTheElementsStartOnTheUnitAndEverythingIsFreed) {
    auto mapped_pages = [](const char* from, std::size_t bytes) {
        std::size_t count = 0;
        unsigned char in_core = 0;
        for (std::size_t off = 0; off < bytes; off += page)
            count += ::mincore(const_cast<char*>(from) + off, page, &in_core) == 0;  // ENOMEM: unmapped
        return count;
    };
    ccnuma::set_diagnostic_handler({});  // the one-page blocks are split over the team on purpose
    const ccnuma::policy policies[] = {ccnuma::first_touch{}, ccnuma::blocked{}, ccnuma::interleave{},
                                       ccnuma::first_touch{}.pages(ccnuma::page_kind::huge)};
    for (const auto& pol : policies) {
        const std::size_t huge = ccnuma::support().huge_page_size;
        const std::size_t unit = ccnuma::page_kind_of(pol) == ccnuma::page_kind::huge && huge ? huge : page;
        for (std::size_t cookie : {std::size_t{8}, std::size_t{16}, std::size_t{64}, page, page + 8}) {
            for (std::size_t elements : {page - 8, 3 * page + 8, std::size_t{5} << 20}) {
                const std::size_t bytes = cookie + elements;
                SCOPED_TRACE(ccnuma::to_string(pol) + " cookie " + std::to_string(cookie) + " bytes " +
                             std::to_string(bytes));
                auto* p = static_cast<char*>(ccnuma::allocate_with_cookie(cookie, bytes, pol, 8));
                ASSERT_NE(p, nullptr);
                const auto at = reinterpret_cast<std::uintptr_t>(p + cookie);
                EXPECT_EQ(at % unit, 0u);
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (cookie & -cookie), 0u);
                std::memset(p, 0x5a, bytes);
                // The cookie's whole pages and the elements' units, and nothing else, are mapped.
                const std::size_t pad = (cookie + page - 1) / page * page;
                const std::size_t len = pad + (elements + unit - 1) / unit * unit;
                char* start = p + cookie - pad;
                EXPECT_EQ(mapped_pages(start, len), len / page);
                ccnuma::deallocate_with_cookie(p, cookie, bytes, pol);
                EXPECT_EQ(mapped_pages(start, len), 0u);
            }
        }
    }
    // Below a page the heap serves, as allocate() does.
    void* small = ccnuma::allocate_with_cookie(8, 100, ccnuma::first_touch{}, 8, 64);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 64, 0u);
    std::memset(small, 1, 100);
    ccnuma::deallocate_with_cookie(small, 8, 100, ccnuma::first_touch{}, 64);
    try {
        (void)ccnuma::allocate_with_cookie(2 * page, page, ccnuma::first_touch{});
        ADD_FAILURE() << "accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::invalid_argument));
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("ccnuma: allocate_with_cookie of ", 0), 0u) << m;
        EXPECT_NE(m.find(": a cookie of " + std::to_string(2 * page) + " bytes does not fit in the block (valid: at most " +
                         std::to_string(page) + " bytes)"),
                  std::string::npos)
            << m;
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

// Issue 26: more than the nodes hold is ccnuma::error (infeasible), refused before anything is
// mapped; every case here is beyond node 0's MemTotal, which the kernel of this host tells.
TEST(Allocate, TooLargeForTheMachineIsInfeasibleAndLeaksNothing) {
    auto expect_infeasible = [](std::size_t bytes, const ccnuma::policy& pol) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        try {
            ccnuma::allocate(bytes, pol);
            ADD_FAILURE() << "accepted";
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::infeasible));
            const std::string m = e.what();
            EXPECT_EQ(m.rfind("ccnuma: placement " + ccnuma::to_string(pol) + " of ", 0), 0u) << m;
            EXPECT_NE(m.find(": more memory than the policy's nodes hold (node 0: "), std::string::npos) << m;
            EXPECT_NE(m.find("; valid: at most "), std::string::npos) << m;
        }
    };
    expect_infeasible(std::size_t{1} << 50, ccnuma::first_touch{});
    expect_infeasible(std::size_t{1} << 50, ccnuma::interleave{});
    expect_infeasible(~std::size_t{0} - 100, ccnuma::blocked{}.pages(ccnuma::page_kind::huge));
    expect_infeasible(std::size_t{1} << 50, ccnuma::weighted_interleave{}.nodes({0}).weights({1}));
    expect_infeasible(std::size_t{1} << 50, ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth));
    expect_infeasible(std::size_t{1} << 50, ccnuma::fastest{});
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

// Issue 32, item 10: chunk(SIZE_MAX) gives every element to thread 0; the warning spoke of a
// "chunk (0 B)" that no thread has. It now says which threads own nothing, and the chunk.
TEST(Diagnostics, Issue32_10_ThreadsWithoutAChunkAreNotAZeroByteChunk) {
    std::string seen;
    ccnuma::set_diagnostic_handler([&](std::string_view m) { seen = m; });
    const auto policy = ccnuma::first_touch{}.threads(4).chunk(std::numeric_limits<std::size_t>::max());
    void* p = ccnuma::allocate(64 * page, policy, sizeof(double));
    ccnuma::deallocate(p, 64 * page, policy);
    ccnuma::set_diagnostic_handler({});
    EXPECT_EQ(seen.find("(0 B)"), std::string::npos) << seen;
    EXPECT_NE(seen.find(" over 4 threads: 3 of them own no element (" + std::to_string(64 * page / sizeof(double)) +
                        " elements in chunks of " + std::to_string(std::numeric_limits<std::size_t>::max()) +
                        "), so every page lands on the nodes of the others; use a smaller chunk or fewer threads"),
              std::string::npos)
        << seen;
}

// --- issue 16: one source per fact, placement without hidden binding -------------------------

// The affinity mask of every thread of a team of `threads`, as CPU lists.
std::vector<std::vector<unsigned>> team_masks(int threads) {
    std::vector<std::vector<unsigned>> masks(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
        cpu_set_t set;
        CPU_ZERO(&set);
        auto& mine = masks[static_cast<std::size_t>(omp_get_thread_num())];
        if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0)
            for (unsigned c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &set)) mine.push_back(c);
    }
    return masks;
}

// The partition placement follows is detail/parallel.hpp's, and it is the runtime's own
// schedule(static): every element's owner, for sizes around the team size and chunked.
TEST(Issue16, ThePartitionIsTheRuntimesStaticSchedule) {
    for (unsigned threads : {1u, 2u, 3u, 4u, 7u}) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{64}, std::size_t{1001}}) {
            for (std::size_t chunk : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{100}}) {
                SCOPED_TRACE(std::to_string(n) + " over " + std::to_string(threads) + " chunk " + std::to_string(chunk));
                const auto runtime = test_support::static_owners(n, threads, chunk);
                std::vector<std::size_t> count(threads, 0);
                for (std::size_t i = 0; i < n; ++i) {
                    ASSERT_EQ(static_cast<int>(ccnuma::detail::static_owner(n, chunk, threads, i)), runtime[i]) << i;
                    ++count[static_cast<std::size_t>(runtime[i])];
                }
                for (unsigned t = 0; t < threads; ++t) {
                    EXPECT_EQ(ccnuma::detail::static_count(n, chunk, t, threads), count[t]) << "thread " << t;
                    std::size_t ranged = 0;
                    ccnuma::detail::static_ranges(n, chunk, t, threads,
                                                  [&](std::size_t lo, std::size_t hi) { ranged += hi - lo; });
                    EXPECT_EQ(ranged, count[t]) << "thread " << t;
                }
            }
        }
    }
    EXPECT_EQ(ccnuma::detail::requested_team_size(0), static_cast<unsigned>(omp_get_max_threads()));
    EXPECT_EQ(ccnuma::detail::requested_team_size(3), 3u);
}

// On this machine placement names exactly the nodes of the one snapshot, topology::current().
TEST(Issue16, PlacementNodesAreTopologyCurrentsOnThisMachine) {
    const auto& topo = ccnuma::topology::current();
    ASSERT_TRUE(topo.is_this_system()) << "ctest runs this without CCNUMA_TOPOLOGY";
    const auto nodes = topo.allowed_nodes();
    for (unsigned n : nodes) {
        void* p = ccnuma::allocate(1 << 20, ccnuma::on_node(n), 8);
        ccnuma::deallocate(p, 1 << 20, ccnuma::on_node(n));
    }
    const unsigned beyond = nodes.empty() ? 0 : nodes.back() + 1;
    try {
        (void)ccnuma::allocate(1 << 20, ccnuma::on_node(beyond));
        ADD_FAILURE() << "node " << beyond << " was accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("is not in the allowed set {" + ccnuma::format_list(nodes) + "}"),
                  std::string::npos)
            << e.what();
    }
}

// Run by ctest with CCNUMA_BIND set to a bad spec: the binding plan is the binding layer's
// business, so allocate neither reads it nor moves a thread; current_plan() reports the spec.
TEST(Issue16Environment, AllocateWithABadCcnumaBindDoesNotThrowNorBind) {
    const char* spec = std::getenv("CCNUMA_BIND");
    ASSERT_TRUE(spec != nullptr && *spec != '\0') << "run by ctest with CCNUMA_BIND=4,scater";
    EXPECT_THROW((void)ccnuma::current_plan(), ccnuma::error);
    const int threads = std::max(2, omp_get_max_threads());
    const auto before = team_masks(threads);
    for (const ccnuma::policy& pol : {ccnuma::policy(ccnuma::first_touch{}), ccnuma::policy(ccnuma::blocked{}),
                                      ccnuma::policy(ccnuma::first_touch{}.pages(ccnuma::page_kind::huge))}) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        void* p = nullptr;
        EXPECT_NO_THROW(p = ccnuma::allocate(std::size_t{4} << 20, pol, sizeof(double)));
        ccnuma::deallocate(p, std::size_t{4} << 20, pol);
    }
    EXPECT_EQ(team_masks(threads), before) << "an allocation moved the pool's threads";
}

// Run by ctest with HWLOC_SYNTHETIC (4 PUs numbered from 100000), HWLOC_THISSYSTEM=1 and
// CCNUMA_CPUSET naming them: a plan with PUs that no machine has (Linux counts at most 8192
// CPUs), so the test runs, and can fail, on a host of any size. An allocation does not bind, so
// it succeeds and moves nothing; binding the team surfaces the failure as ccnuma::error naming
// the thread and the PU, carried out of the parallel region.
TEST(Issue16Environment, ABindingFailureSurfacesAndPlacementDoesNotBind) {
    ASSERT_NE(std::getenv("HWLOC_SYNTHETIC"), nullptr) << "run by ctest with HWLOC_SYNTHETIC";
    const auto& topo = ccnuma::topology::current();
    ASSERT_TRUE(topo.is_this_system()) << topo.description();
    const unsigned cpus = static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_CONF));
    for (const auto& pu : topo.pus()) ASSERT_GE(pu.os_index, cpus) << "PU " << pu.os_index << " exists here";
    const unsigned threads = static_cast<unsigned>(topo.pus().size());
    ccnuma::set_nesting_info(std::to_string(threads) + ",compact");
    const auto before = team_masks(static_cast<int>(threads));
    void* p = nullptr;
    EXPECT_NO_THROW(p = ccnuma::allocate(std::size_t{4} << 20, ccnuma::first_touch{}, sizeof(double)));
    ccnuma::deallocate(p, std::size_t{4} << 20, ccnuma::first_touch{});
    EXPECT_EQ(team_masks(static_cast<int>(threads)), before) << "an allocation moved the pool's threads";

    std::exception_ptr error;
#pragma omp parallel num_threads(static_cast<int>(threads))
    {
        try {
            (void)ccnuma::bind_this_thread();
        } catch (...) {
#pragma omp critical
            if (!error) error = std::current_exception();
        }
    }
    ASSERT_TRUE(error) << "binding to PUs this machine lacks succeeded";
    try {
        std::rethrow_exception(error);
    } catch (const ccnuma::error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("bind_this_thread: binding thread ("), std::string::npos) << m;
        EXPECT_NE(m.find(") to PU "), std::string::npos) << m;
    }
}

// Run by ctest with CCNUMA_TOPOLOGY describing another machine (4 nodes): the snapshot is the
// described one, but pages are real, so placement names this kernel's nodes and says why.
TEST(Issue16Environment, UnderCcnumaTopologyPlacementNamesThisKernelsNodes) {
    const char* described = std::getenv("CCNUMA_TOPOLOGY");
    ASSERT_TRUE(described != nullptr && *described != '\0') << "run by ctest with CCNUMA_TOPOLOGY";
    const auto& topo = ccnuma::topology::current();
    ASSERT_FALSE(topo.is_this_system());
    // Every node: every kernel node the described machine has is usable; one the kernel lacks
    // is refused with the reason.
    for (const ccnuma::policy& pol : {ccnuma::policy(ccnuma::interleave{}), ccnuma::policy(ccnuma::first_touch{}),
                                      ccnuma::policy(ccnuma::blocked{}), ccnuma::policy(ccnuma::on_node(0))}) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        void* p = nullptr;
        EXPECT_NO_THROW(p = ccnuma::allocate(std::size_t{4} << 20, pol, sizeof(double)));
        ccnuma::deallocate(p, std::size_t{4} << 20, pol);
    }
    const unsigned last = topo.allowed_nodes().back();
    try {
        void* p = ccnuma::allocate(1 << 20, ccnuma::on_node(last));
        ccnuma::deallocate(p, 1 << 20, ccnuma::on_node(last));  // the kernel has that node too
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("describes another machine, but pages are placed on this one"),
                  std::string::npos)
            << e.what();
    }
}

// Issue 26: bad weights and nodes name the policy, the input and what is valid, before anything
// is mapped.
TEST(Issue26, BadWeightsAndNodesAreErrorsNamingTheRange) {
    struct bad {
        ccnuma::weighted_interleave pol;
        std::string says;
    };
    const bad cases[] = {
        {ccnuma::weighted_interleave{}.nodes({0}).weights({0}),
         ": weight 0 of node 0 is out of range (valid: 1 to 255, the kernel's range of a weighted-interleave weight)"},
        {ccnuma::weighted_interleave{}.nodes({0}).weights({256}), ": weight 256 of node 0 is out of range (valid: 1 to 255"},
        {ccnuma::weighted_interleave{}.nodes({0}).weights({~0u}), ": weight 4294967295 of node 0 is out of range"},
        {ccnuma::weighted_interleave{}.nodes({0}).weights({1, 2}), ": 2 weights for 1 nodes {0} (valid: one weight per node)"},
        {ccnuma::weighted_interleave{}.weights({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
         " nodes {0} (valid: one weight per node, and no nodes means every allowed node)"},
        {ccnuma::weighted_interleave{}.nodes({0, 0}).weights({1, 1}), ": node 0 is named twice (valid: each node once)"},
        {ccnuma::weighted_interleave{}.nodes({0, 7}).weights({1, 1}), ": node 7 is not in the allowed set {0}"},
        {ccnuma::weighted_interleave{}.nodes({7}).weights(ccnuma::by_bandwidth), ": node 7 is not in the allowed set {0}"},
        {ccnuma::weighted_interleave{}.nodes({7}), ": node 7 is not in the allowed set {0}"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(ccnuma::to_string(c.pol));
        for (std::size_t bytes : {std::size_t{100}, std::size_t{1} << 20}) {
            try {
                void* p = ccnuma::allocate(bytes, c.pol);
                ccnuma::deallocate(p, bytes, c.pol);
                ADD_FAILURE() << "accepted";
            } catch (const ccnuma::error& e) {
                EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::invalid_argument));
                const std::string m = e.what();
                EXPECT_EQ(m.rfind("ccnuma: placement " + ccnuma::to_string(c.pol) + " of ", 0), 0u) << m;
                EXPECT_NE(m.find(c.says), std::string::npos) << m;
            }
        }
    }
}

// On one node every tier policy places every page there, written by allocate: weighted
// interleave over {0} (explicit, by bandwidth from a one-node team, the kernel's), tiers on PUs
// with one local node (plain first touch), fastest within node 0's free memory.
TEST(Issue26, TierPoliciesPlaceEveryPageOnTheOneNode) {
    const ccnuma::policy policies[] = {
        ccnuma::weighted_interleave{}.nodes({0}).weights({3}),
        ccnuma::weighted_interleave{}.weights({2}),
        ccnuma::weighted_interleave{}.nodes({0}).weights(ccnuma::by_bandwidth),
        ccnuma::weighted_interleave{}.nodes({0}),
        ccnuma::weighted_interleave{}.nodes({0}).weights({1}).pages(ccnuma::page_kind::huge),
        ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth),
        ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth).chunk(1000).threads(3),
        ccnuma::fastest{},
        ccnuma::fastest{}.threads(2).pages(ccnuma::page_kind::huge),
    };
    const std::size_t bytes = (std::size_t{4} << 20) + 3 * page + 8;
    for (const auto& pol : policies) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        auto* p = static_cast<double*>(ccnuma::allocate(bytes, pol, sizeof(double)));
        const auto nodes = ccnuma::page_nodes(p, bytes);
        const bool kernel_weights = ccnuma::to_string(pol) == "weighted_interleave(0)";
        for (std::size_t i = 0; i < nodes.size(); ++i)
            ASSERT_EQ(nodes[i], kernel_weights ? ccnuma::page_not_present : 0) << "page " << i;
        if (kernel_weights) {
            // The kernel's own policy places as pages are first written.
            std::memset(p, 1, bytes);
            for (int n : ccnuma::page_nodes(p, bytes)) ASSERT_EQ(n, 0);
        }
        const auto r = ccnuma::report_placement(p, bytes / sizeof(double), sizeof(double));
        EXPECT_EQ(r.near, 1.0);
        EXPECT_EQ(r.spilled, 0u);
        ccnuma::deallocate(p, bytes, pol);
        // place() writes untouched pages of memory it did not map.
        void* q = ::mmap(nullptr, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(q, MAP_FAILED);
        ccnuma::place(q, 8 * page, pol, sizeof(double));
        if (!kernel_weights) {
            for (int n : ccnuma::page_nodes(q, 8 * page)) EXPECT_EQ(n, 0);
        }
        ::munmap(q, 8 * page);
    }
}

// The team's threads get their memory policy back: an allocation leaves no MPOL_BIND behind.
TEST(Issue26, TierPoliciesLeaveTheThreadsPolicyAsItWas) {
    const std::size_t bytes = 1 << 20;
    for (const ccnuma::policy& pol : {ccnuma::policy(ccnuma::weighted_interleave{}.nodes({0}).weights({2})),
                                      ccnuma::policy(ccnuma::fastest{})}) {
        void* p = ccnuma::allocate(bytes, pol);
        ccnuma::deallocate(p, bytes, pol);
        std::vector<ccnuma::memory_policy> seen(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel
        seen[static_cast<std::size_t>(omp_get_thread_num())] = ccnuma::current_memory_policy();
        for (const auto& m : seen) EXPECT_EQ(m, ccnuma::memory_policy::local()) << ccnuma::to_string(pol);
    }
}

}  // namespace

// Which huge-page frames each kind of policy opts out of THP, read back from the kernel's
// VmFlags (report_placement's huge_given_up), in any THP mode of a kernel with THP: a
// base-page interleave every frame of its range (the kernel interleaves a folio as one unit),
// on_node only the mapping's partial end frames, a huge-page interleave none. And the report
// says whether unadvised faults get folios here, from the live settings.
TEST(Placement, FramesOptedOutOfThpFollowThePolicy) {
    const std::size_t huge = ccnuma::support().huge_page_size;
    if (huge <= page) GTEST_SKIP() << "this kernel has no transparent huge pages (hpage_pmd_size): nothing is advised";
    const std::size_t bytes = 4 * huge + 3 * page;
    auto frames_of = [&](const void* p, std::size_t n) {
        const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + n;
        return ((hi + huge - 1) / huge - lo / huge);
    };
    {
        const ccnuma::interleave pol{};
        auto* p = static_cast<char*>(ccnuma::allocate(bytes, pol));
        std::memset(p, 1, bytes);
        const auto r = ccnuma::report_placement(p, bytes, 1);
        EXPECT_EQ(r.huge_given_up, frames_of(p, bytes)) << r.to_string();
        ccnuma::deallocate(p, bytes, pol);
    }
    {
        const ccnuma::on_node pol(ccnuma::topology::current().numa_nodes().front().os_index);
        auto* p = static_cast<char*>(ccnuma::allocate(bytes, pol));
        std::memset(p, 1, bytes);
        const auto r = ccnuma::report_placement(p, bytes, 1);
        EXPECT_LE(r.huge_given_up, 2u) << r.to_string();
        EXPECT_LT(r.huge_given_up, frames_of(p, bytes)) << r.to_string();
        ccnuma::deallocate(p, bytes, pol);
    }
    {
        const auto pol = ccnuma::interleave{}.pages(ccnuma::page_kind::huge);
        auto* p = static_cast<char*>(ccnuma::allocate(bytes, pol));
        std::memset(p, 1, bytes);
        const auto r = ccnuma::report_placement(p, bytes, 1);
        EXPECT_EQ(r.huge_given_up, 0u) << r.to_string();
        const auto s = ccnuma::kernel_settings::read();
        const bool unadvised = s.thp_enabled == "always" ||
                               std::any_of(s.thp_sizes.begin(), s.thp_sizes.end(), [&](const auto& x) {
                                   return x.second == "always" || (x.second == "inherit" && s.thp_enabled == "always");
                               });
        EXPECT_EQ(r.thp_unadvised, unadvised) << "THP " << s.thp_enabled;
        ccnuma::deallocate(p, bytes, pol);
    }
}
