// ccnuma::partition (partition.hpp): boundaries and their checks, the balanced split by offsets
// and its guarantee, the partition through offsets, and a partition driving placement, the
// containers' loops and the reports (one node here: the pages are checked in
// tests/vm/partition_vm_test.cpp).

#include <ccnuma/allocator.hpp>
#include <ccnuma/algorithm.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/partition.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/vector.hpp>

#include <gtest/gtest.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const ccnuma::error& e) {
        return e.what();
    }
    return "no error";
}

#define EXPECT_ERROR(call, text) EXPECT_NE(error_of([&] { (void)(call); }).find(text), std::string::npos) << error_of([&] { (void)(call); })

std::vector<std::size_t> row_ptr_of(const std::vector<std::size_t>& per_row) {
    std::vector<std::size_t> r{0};
    for (std::size_t n : per_row) r.push_back(r.back() + n);
    return r;
}

// Nonzeros of each part of `rows` over `row_ptr`.
std::vector<std::size_t> shares(const ccnuma::partition& rows, const std::vector<std::size_t>& row_ptr) {
    std::vector<std::size_t> s;
    for (unsigned t = 0; t < rows.parts(); ++t) s.push_back(row_ptr[rows.range(t).second] - row_ptr[rows.range(t).first]);
    return s;
}

// The guarantee of balanced(): every part within the largest row of the ideal share.
void expect_balanced(const std::vector<std::size_t>& per_row, unsigned parts) {
    const auto row_ptr = row_ptr_of(per_row);
    const auto rows = ccnuma::partition::balanced(row_ptr, parts);
    ASSERT_EQ(rows.parts(), parts);
    ASSERT_EQ(rows.elements(), per_row.size());
    const double ideal = static_cast<double>(row_ptr.back()) / parts;
    const auto largest_row = static_cast<double>(*std::max_element(per_row.begin(), per_row.end()));
    for (std::size_t s : shares(rows, row_ptr)) {
        EXPECT_LE(static_cast<double>(s), ideal + largest_row) << ccnuma::to_string(rows);
        EXPECT_GE(static_cast<double>(s), ideal - largest_row) << ccnuma::to_string(rows);
    }
}

TEST(Partition, ExplicitBoundariesGiveContiguousParts) {
    const ccnuma::partition p({0, 3, 3, 10});
    EXPECT_FALSE(p.empty());
    EXPECT_EQ(p.parts(), 3u);
    EXPECT_EQ(p.elements(), 10u);
    EXPECT_EQ(p.range(1), (std::pair<std::size_t, std::size_t>{3, 3}));
    // The empty part owns nothing: element 3 is part 2's.
    const unsigned owners[] = {0, 0, 0, 2, 2, 2, 2, 2, 2, 2};
    for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(p.owner(i), owners[i]) << i;
    EXPECT_EQ(p.largest_share(), 7u);
    EXPECT_EQ(p.smallest_share(), 0u);
    EXPECT_EQ(ccnuma::to_string(p), "partition(0,3,3,10)");
    EXPECT_EQ(p, ccnuma::partition({0, 3, 3, 10}));
    EXPECT_NE(p, ccnuma::partition({0, 3, 4, 10}));
    EXPECT_TRUE(ccnuma::partition{}.empty());
    EXPECT_EQ(ccnuma::to_string(ccnuma::partition{}), "partition()");
}

TEST(Partition, BadBoundariesAreRefusedWithWhatIsWrong) {
    EXPECT_ERROR(ccnuma::partition({0, 5, 4, 9}), "boundary 2 (4) is below boundary 1 (5)");
    EXPECT_ERROR(ccnuma::partition({1, 5}), "the first boundary is 1 (expected 0");
    EXPECT_ERROR(ccnuma::partition({0}), "1 boundaries (expected parts + 1 boundaries");
    EXPECT_ERROR(ccnuma::partition(std::vector<std::size_t>{}), "0 boundaries");
    EXPECT_ERROR(ccnuma::partition::equal(10, 0), "a team of 0 threads");
    EXPECT_ERROR(ccnuma::partition::equal(3, 4), "4 parts of 3 elements");
}

TEST(Partition, EqualIsTheStaticSchedulesSplit) {
    for (std::size_t n : {1u, 7u, 100u, 1001u})
        for (unsigned parts = 1; parts <= std::min<std::size_t>(n, 9); ++parts) {
            const auto p = ccnuma::partition::equal(n, parts);
            for (unsigned t = 0; t < parts; ++t) {
                std::size_t lo = n, hi = 0;
                ccnuma::detail::static_ranges(n, std::size_t{0}, t, parts, [&](std::size_t b, std::size_t e) {
                    lo = b;
                    hi = e;
                });
                EXPECT_EQ(p.range(t), (std::pair<std::size_t, std::size_t>{lo, hi})) << n << " " << parts << " " << t;
            }
        }
}

TEST(Partition, BalancedSplitsRowsByNonzerosWithinOneRowOfTheIdeal) {
    // The skew: the first quarter of the rows has 40 nonzeros each, the rest 4.
    std::vector<std::size_t> skewed(4000);
    for (std::size_t r = 0; r < skewed.size(); ++r) skewed[r] = r < 1000 ? 40 : 4;
    for (unsigned parts : {1u, 2u, 3u, 4u, 7u, 64u}) expect_balanced(skewed, parts);
    const auto rows = ccnuma::partition::balanced(row_ptr_of(skewed), 4);
    // 52,000 nonzeros: 13,000 each, which the first 325 rows hold.
    EXPECT_EQ(rows.range(0), (std::pair<std::size_t, std::size_t>{0, 325}));
    // Empty rows, and one row holding everything.
    std::vector<std::size_t> gaps(100, 0);
    for (std::size_t r = 0; r < 100; r += 9) gaps[r] = 10;
    expect_balanced(gaps, 4);
    std::vector<std::size_t> one(50, 0);
    one[20] = 1000;
    const auto all_in_one = ccnuma::partition::balanced(row_ptr_of(one), 4);
    const auto s = shares(all_in_one, row_ptr_of(one));
    EXPECT_EQ(std::count(s.begin(), s.end(), 1000u), 1) << ccnuma::to_string(all_in_one);
    EXPECT_EQ(std::accumulate(s.begin(), s.end(), std::size_t{0}), 1000u);
    // A single row: one part.
    EXPECT_EQ(ccnuma::partition::balanced(row_ptr_of({5}), 1).range(0), (std::pair<std::size_t, std::size_t>{0, 1}));
    // No nonzeros at all: every boundary at row 0 is as good as any; the parts still cover the rows.
    const auto empty = ccnuma::partition::balanced(row_ptr_of(std::vector<std::size_t>(8, 0)), 4);
    EXPECT_EQ(empty.elements(), 8u);
}

TEST(Partition, BalancedTakesTheOffsetTypesCsrCodesUse) {
    const std::vector<int> row_ptr{0, 40, 80, 84, 88, 92, 96, 100, 104};
    const auto rows = ccnuma::partition::balanced(row_ptr, 2);
    EXPECT_EQ(rows.range(0), (std::pair<std::size_t, std::size_t>{0, 1}));  // 40 of the 104, nearest 52
    const std::vector<long> one_based{1, 41, 81, 85, 89};
    const auto r1 = ccnuma::partition::balanced(one_based, 2);
    EXPECT_EQ(r1.through(one_based), ccnuma::partition({0, 40, 88}));
    EXPECT_ERROR(ccnuma::partition::balanced(std::vector<int>{0, -1, 3}, 1), "offset 1 is negative (-1)");
    EXPECT_ERROR(ccnuma::partition::balanced(std::vector<std::size_t>{0, 5, 3}, 1), "offset 2 (3) is below offset 1 (5)");
    EXPECT_ERROR(ccnuma::partition::balanced(std::vector<std::size_t>{0, 5}, 0), "a team of 0 threads");
    EXPECT_ERROR(ccnuma::partition::balanced(std::vector<std::size_t>{0, 5, 6}, 3), "3 parts of 2 rows");
    EXPECT_ERROR(ccnuma::partition::balanced(std::vector<std::size_t>{}, 1), "no offsets");
}

TEST(Partition, ThroughGivesTheNonzerosOfEachThreadsRows) {
    const auto row_ptr = row_ptr_of({3, 0, 5, 2, 7, 1});
    const ccnuma::partition rows({0, 2, 4, 6});
    const auto nnz = rows.through(row_ptr);
    EXPECT_EQ(nnz, ccnuma::partition({0, 3, 10, 18}));
    for (std::size_t r = 0; r < 6; ++r)
        for (std::size_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) EXPECT_EQ(nnz.owner(k), rows.owner(r)) << r << " " << k;
    EXPECT_ERROR(rows.through(std::vector<std::size_t>{0, 1, 2}), "3 offsets for a partition of 6 elements");
    EXPECT_ERROR(ccnuma::partition{}.through(row_ptr), "an empty partition");
}

// The containers' loops follow the partition: each element is built, computed and destroyed by
// the thread whose part holds it, whatever the runtime's static split would say.
TEST(Partition, VectorsBuildAndComputeInThePartitionsThreads) {
    const ccnuma::partition p({0, 10, 11, 500, 1000});
    ccnuma::vector<int> built_by(1000, [](std::size_t) { return omp_get_thread_num(); }, ccnuma::first_touch{}.partition(p));
    for (std::size_t i = 0; i < built_by.size(); ++i) ASSERT_EQ(built_by[i], static_cast<int>(p.owner(i))) << i;
    EXPECT_EQ(built_by.schedule().partition, p);

    const auto pol = ccnuma::first_touch{}.partition(p);
    ccnuma::vector<double> b(1000, pol), c(1000, pol), d(1000, pol);
    for (std::size_t i = 0; i < 1000; ++i) b[i] = static_cast<double>(i), c[i] = 2, d[i] = 0.5;
    ccnuma::vector<double> a(1000, pol);
    a = b + c * d;
    for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(a[i], static_cast<double>(i) + 1.0) << i;
    EXPECT_EQ(ccnuma::sum(a), 499500.0 + 1000.0);
    EXPECT_EQ(ccnuma::par::reduce(a.begin(), a.end(), 0.0), 499500.0 + 1000.0);
    // The partition covers 1000 elements: a resize to 1200 is refused, not run on another split,
    // and the vector stays as it was.
    EXPECT_ERROR(a.resize(1200), "covers 1000 elements, the range 1200");
    EXPECT_EQ(a.size(), 1000u);
    EXPECT_EQ(a[999], 1000.0);
}

TEST(Partition, APartitionMustMatchItsRangeAndItsTeam) {
    const ccnuma::partition p({0, 50, 100});
    EXPECT_ERROR(ccnuma::vector<double>(99, 1.0, ccnuma::first_touch{}.partition(p)),
                 "partition(0,50,100) covers 100 elements, the range 99");
    EXPECT_ERROR(ccnuma::vector<double>(100, 1.0, ccnuma::first_touch{}.partition(p).chunk(4)), "with chunk 4");
    EXPECT_ERROR(ccnuma::vector<double>(100, 1.0, ccnuma::first_touch{}.partition(p).threads(3)),
                 "a partition of 2 parts for a team of 3 threads");
    EXPECT_EQ(ccnuma::to_string(ccnuma::policy{ccnuma::blocked{}.partition(p)}), "blocked(partition(0,50,100))");
    // The allocator: the partition covers the allocation's elements.
    ccnuma::allocator<double, ccnuma::first_touch> alloc(ccnuma::first_touch{}.partition(p));
    double* q = alloc.allocate(100);
    alloc.deallocate(q, 100);
    EXPECT_ERROR(alloc.allocate(1000), "covers 100 elements, the range 1000");
}

TEST(Partition, SegArraysRefuseAPartitionOfElements) {
    EXPECT_ERROR(ccnuma::seg_array<double>(100, 0.0, ccnuma::seg::count(2), ccnuma::pad::none,
                                           ccnuma::first_touch{}.partition(ccnuma::partition({0, 50, 100}))),
                 "seg_array splits by its segments");
}

// Locality is over the placed pages: the pages never written are counted apart, not as remote.
TEST(Partition, ReportsCountPagesNotPlacedApart) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t pages = 64, n = pages * page / sizeof(double);
    void* m = ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    auto* d = static_cast<double*>(m);
    const auto untouched = ccnuma::report_placement(d, n, sizeof(double));
    EXPECT_EQ(untouched.placed, 0u);
    EXPECT_EQ(untouched.not_placed, pages);
    EXPECT_EQ(untouched.locality, 0.0);
    EXPECT_NE(untouched.to_string().find("no page placed yet (64 not placed)"), std::string::npos) << untouched.to_string();
    for (std::size_t i = 0; i < n / 2; ++i) d[i] = 1.0;  // the first 32 pages, from this thread
    const auto half = ccnuma::report_placement(d, n, sizeof(double), ccnuma::partition({0, n}));
    EXPECT_EQ(half.placed, pages / 2);
    EXPECT_EQ(half.not_placed, pages / 2);
    EXPECT_EQ(half.locality, 1.0) << "one node, one owner: every placed page is local";
    EXPECT_NE(half.to_string().find("32 pages not placed yet (locality is over the 32 placed)"), std::string::npos)
        << half.to_string();
    EXPECT_ERROR(ccnuma::report_placement(d, n, sizeof(double), ccnuma::partition({0, 10})),
                 "covers 10 elements, the range " + std::to_string(n));
    ::munmap(m, pages * page);
}

}  // namespace
