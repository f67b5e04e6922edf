// ccnuma::seg_array on the host: the segment layout (sizes, padding, alignment, no shared pages),
// the thread that builds and destroys each segment, flat-iterator arithmetic across segment
// boundaries, std::sort, the segmented iterator traits, copy
// and move, and exception safety with types that throw (run under ASan/UBSan too). Pages on
// the owners' nodes are checked in tests/vm/seg_array_vm_test.cpp.

#include <ccnuma/error.hpp>
#include <ccnuma/seg_array.hpp>

#include "../support/fragile.hpp"
#include "../support/quiet_diagnostics.hpp"
#include "../support/static_owners.hpp"

#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <limits>
#include <list>
#include <memory>
#include <numeric>
#include <ranges>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

using array_t = ccnuma::seg_array<long>;
static_assert(std::random_access_iterator<array_t::iterator>);
static_assert(std::random_access_iterator<array_t::const_iterator>);
static_assert(std::random_access_iterator<array_t::segment_iterator>);
static_assert(std::ranges::random_access_range<array_t>);
static_assert(std::ranges::sized_range<const array_t>);
static_assert(std::is_same_v<array_t::local_iterator, long*>);
static_assert(std::is_convertible_v<array_t::iterator, array_t::const_iterator>);
static_assert(!std::is_convertible_v<array_t::const_iterator, array_t::iterator>);
static_assert(ccnuma::is_segmented_v<array_t::iterator> && ccnuma::is_segmented_v<array_t::const_iterator>);
static_assert(!ccnuma::is_segmented_v<long*> && !ccnuma::is_segmented_v<std::vector<long>::iterator>);
static_assert(std::is_same_v<ccnuma::segmented_iterator_traits<array_t::iterator>::is_segmented_iterator, std::true_type>);
static_assert(std::is_same_v<ccnuma::segmented_iterator_traits<int*>::is_segmented_iterator, std::false_type>);

long value_at(std::size_t i) { return static_cast<long>((i * 7919) % 10007) - 5000; }

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The segment of element i when n elements are split like schedule(static) splits them.
std::size_t segment_of(std::size_t i, std::size_t n, std::size_t segments) {
    for (std::size_t s = 0, first = 0; s < segments; ++s) {
        first += n / segments + (s < n % segments ? 1 : 0);
        if (i < first) return s;
    }
    return segments;
}

// ---- layout ------------------------------------------------------------------------------

class Layout : public ::testing::TestWithParam<std::tuple<std::size_t, ccnuma::padding, std::size_t>> {};

TEST_P(Layout, SegmentsFollowTheStaticScheduleAndThePadding) {
    const auto [segments, padding, n] = GetParam();
    const array_t a(n, value_at, ccnuma::seg::count(segments), padding);
    ASSERT_EQ(a.size(), n);
    ASSERT_EQ(a.segment_count(), segments);
    EXPECT_EQ(a.segment_padding(), padding);

    const std::size_t unit = padding == ccnuma::pad::none         ? alignof(long)
                             : padding == ccnuma::pad::cache_line ? ccnuma::false_sharing_range
                                                                  : page;
    const std::size_t largest = n / segments + (n % segments != 0 ? 1 : 0);
    EXPECT_EQ(a.segment_stride(), (largest * sizeof(long) + unit - 1) / unit * unit);

    std::size_t next = 0;
    for (std::size_t s = 0; s < segments; ++s) {
        SCOPED_TRACE("segment " + std::to_string(s));
        // schedule(static): the first n % segments segments have one element more.
        EXPECT_EQ(a.segment_size(s), n / segments + (s < n % segments ? 1 : 0));
        EXPECT_EQ(a.end(s) - a.begin(s), static_cast<std::ptrdiff_t>(a.segment_size(s)));
        EXPECT_EQ(a.segment(s).data(), a.begin(s));
        if (n == 0) continue;
        EXPECT_EQ(address(a.begin(s)) - address(a.begin(0)), s * a.segment_stride()) << "uniform stride";
        EXPECT_EQ(address(a.begin(s)) % unit, 0u) << "starts on the padding boundary";
        for (std::size_t k = 0; k < a.segment_size(s); ++k) ASSERT_EQ(a.begin(s)[k], value_at(next + k));
        if (s + 1 < segments && a.segment_size(s) != 0) {
            EXPECT_LE(address(a.end(s)), address(a.begin(s + 1)));
            // Page padding: no page holds elements of two segments.
            if (padding == ccnuma::pad::page) {
                EXPECT_LT((address(a.end(s)) - 1) / page, address(a.begin(s + 1)) / page);
            }
        }
        next += a.segment_size(s);
    }
    EXPECT_EQ(next, n);
}

TEST_P(Layout, FlatIteratorArithmeticAcrossSegmentBoundaries) {
    const auto [segments, padding, n] = GetParam();
    array_t a(n, value_at, ccnuma::seg::count(segments), padding);
    const auto b = a.begin(), e = a.end();
    ASSERT_EQ(e - b, static_cast<std::ptrdiff_t>(n));
    ASSERT_EQ(std::distance(b, e), static_cast<std::ptrdiff_t>(n));
    // Every position against every few others: +, -, [], comparisons, and back.
    const std::size_t step = n > 500 ? n / 97 : 1;
    for (std::size_t i = 0; i <= n; i += step) {
        const auto it = b + static_cast<std::ptrdiff_t>(i);
        ASSERT_EQ(it - b, static_cast<std::ptrdiff_t>(i));
        ASSERT_EQ(e - it, static_cast<std::ptrdiff_t>(n - i));
        if (i < n) {
            ASSERT_EQ(*it, value_at(i)) << i;
            ASSERT_EQ(b[static_cast<std::ptrdiff_t>(i)], value_at(i));
            ASSERT_EQ(a[i], value_at(i));
            ASSERT_EQ(&*it, &a[i]);
        }
        for (std::size_t j = 0; j <= n; j += step + 3) {
            const auto jt = b + static_cast<std::ptrdiff_t>(j);
            ASSERT_EQ(jt - it, static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i));
            ASSERT_EQ(it + (static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i)), jt);
            ASSERT_EQ(jt - (static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i)), it);
            ASSERT_EQ(i < j, it < jt);
            ASSERT_EQ(i == j, it == jt);
            ASSERT_EQ(i <= j, it <= jt);
        }
    }
    // ++ and -- one by one through every boundary, both ways.
    std::size_t i = 0;
    for (auto it = b; it != e; ++it, ++i) ASSERT_EQ(*it, value_at(i));
    ASSERT_EQ(i, n);
    for (auto it = e; it != b;) {
        --it;
        --i;
        ASSERT_EQ(*it, value_at(i));
    }
    std::vector<long> backwards(std::make_reverse_iterator(e), std::make_reverse_iterator(b));
    std::vector<long> expected(n);
    for (std::size_t k = 0; k < n; ++k) expected[n - 1 - k] = value_at(k);
    EXPECT_EQ(backwards, expected);
    // Postfix forms and compound assignment in both directions.
    if (n >= 2) {
        auto it = b;
        EXPECT_EQ(*it++, value_at(0));
        EXPECT_EQ(*it--, value_at(1));
        EXPECT_EQ(it, b);
        it += static_cast<std::ptrdiff_t>(n - 1);
        EXPECT_EQ(*it, value_at(n - 1));
        it -= static_cast<std::ptrdiff_t>(n - 1);
        EXPECT_EQ(it, b);
    }
    // const_iterator: converts, compares and reads the same.
    const array_t& c = a;
    array_t::const_iterator cb = b;
    EXPECT_EQ(cb, c.begin());
    EXPECT_EQ(c.end() - cb, static_cast<std::ptrdiff_t>(n));
    EXPECT_TRUE(b == c.begin() && c.cbegin() == b);
}

TEST_P(Layout, StdSortAndOtherAlgorithmsOverTheFlatIterator) {
    const auto [segments, padding, n] = GetParam();
    array_t a(n, value_at, ccnuma::seg::count(segments), padding);
    std::vector<long> ref(a.begin(), a.end());
    std::sort(a.begin(), a.end());
    std::sort(ref.begin(), ref.end());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), ref.begin(), ref.end()));
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
    std::ranges::sort(a, std::greater<>{});
    EXPECT_TRUE(std::ranges::is_sorted(a, std::greater<>{}));
    std::ranges::reverse(a);
    EXPECT_TRUE(std::ranges::equal(a, ref));
    if (n > 2) {
        std::rotate(a.begin(), a.begin() + 1, a.end());
        EXPECT_EQ(a[n - 1], ref[0]);
        const auto mid = a.begin() + static_cast<std::ptrdiff_t>(n / 2);
        std::nth_element(a.begin(), mid, a.end());
        EXPECT_EQ(*mid, ref[n / 2]);
        std::stable_sort(a.begin(), a.end());
        EXPECT_TRUE(std::ranges::equal(a, ref));
        EXPECT_EQ(*std::lower_bound(a.begin(), a.end(), ref[n / 3]), ref[n / 3]);
    }
}

TEST_P(Layout, TraitsDecomposeAndComposeEveryPosition) {
    const auto [segments, padding, n] = GetParam();
    array_t a(n, value_at, ccnuma::seg::count(segments), padding);
    using tr = ccnuma::segmented_iterator_traits<array_t::iterator>;
    std::size_t i = 0;
    for (auto it = a.begin(); it != a.end(); ++it, ++i) {
        const auto s = tr::segment(it);
        const long* p = tr::local(it);
        ASSERT_EQ(p, &*it);
        ASSERT_GE(p, tr::begin(s));
        ASSERT_LT(p, tr::end(s)) << "a position is never the end of its segment";
        ASSERT_EQ(tr::begin(s), a.begin(s.index()));
        ASSERT_EQ(tr::end(s), a.end(s.index()));
        ASSERT_EQ(tr::compose(s, tr::local(it)), it);
    }
    // The end of a segment composes to the start of the next non-empty one, or to end().
    for (auto s = a.segment_begin(); s != a.segment_end(); ++s) {
        const auto after = tr::compose(s, tr::end(s));
        const auto expected = a.begin() + static_cast<std::ptrdiff_t>(std::accumulate(
                                              a.segment_begin(), s + 1, std::size_t{0},
                                              [](std::size_t k, std::span<long> seg) { return k + seg.size(); }));
        EXPECT_EQ(after, expected) << "segment " << s.index();
    }
    EXPECT_EQ(tr::segment(a.end()), a.segment_end()) << "the end lies in the segment after the last";
    // Segment iterator: spans over the segments, in order, covering everything.
    std::vector<long> joined;
    for (auto s = a.segment_begin(); s != a.segment_end(); ++s)
        for (long x : *s) joined.push_back(x);
    EXPECT_TRUE(std::ranges::equal(joined, a));
    EXPECT_EQ(a.segment_end() - a.segment_begin(), static_cast<std::ptrdiff_t>(segments));
    EXPECT_EQ((*(a.segment_begin() + static_cast<std::ptrdiff_t>(segments - 1))).size(), a.segment_size(segments - 1));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Layout,
    ::testing::Combine(::testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}),
                       ::testing::Values(ccnuma::pad::none, ccnuma::pad::cache_line, ccnuma::pad::page),
                       ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{10007},
                                         std::size_t{400009})),
    [](const auto& param_info) {
        const auto pad = std::get<1>(param_info.param);
        return std::to_string(std::get<0>(param_info.param)) + "segs_" +
               (pad == ccnuma::pad::none ? "none" : pad == ccnuma::pad::cache_line ? "line" : "page") + "_n" +
               std::to_string(std::get<2>(param_info.param));
    });

TEST(SegArray, SegmentCountsAndTheirTeams) {
    const array_t by_thread(100);
    EXPECT_EQ(by_thread.segment_count(), static_cast<std::size_t>(omp_get_max_threads()));
    EXPECT_EQ(by_thread.schedule().threads, static_cast<unsigned>(omp_get_max_threads()));

    const array_t three(100, ccnuma::seg::per_thread, ccnuma::pad::page, ccnuma::first_touch{}.threads(3));
    EXPECT_EQ(three.segment_count(), 3u);
    EXPECT_EQ(three.policy().sched.threads, 3u) << "the policy records the team it placed with";

    std::size_t nodes = 0;
    for (const auto& node : ccnuma::topology::current().numa_nodes()) nodes += node.cpus.empty() ? 0 : 1;
    const array_t by_node(100, ccnuma::seg::per_node);
    EXPECT_EQ(by_node.segment_count(), std::max<std::size_t>(nodes, 1));
    EXPECT_EQ(by_node.schedule().threads, by_node.segment_count()) << "one thread per node owns the segments";

    const array_t counted(100, ccnuma::seg::count(5), ccnuma::pad::none, ccnuma::first_touch{}.threads(2));
    EXPECT_EQ(counted.segment_count(), 5u);
    EXPECT_EQ(counted.schedule().threads, 2u);
    try {
        array_t none(10, ccnuma::seg::count(0));
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "ccnuma::seg_array of 10 elements: 0 segments (expected at least 1)");
    }
}

TEST(SegArray, PaddingKinds) {
    // pad::huge_page: 2 MiB boundaries, and the policy asks for huge pages.
    const array_t huge(1000, ccnuma::seg::count(3), ccnuma::pad::huge_page);
    EXPECT_EQ(huge.segment_stride(), std::size_t{2} << 20);
    EXPECT_EQ(huge.policy().page, ccnuma::page_kind::huge);
    for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(address(huge.begin(s)) % (std::size_t{2} << 20), 0u);
    // pad::page follows the policy's page size.
    const array_t huge_policy(1000, ccnuma::seg::count(2), ccnuma::pad::page,
                              ccnuma::first_touch{}.pages(ccnuma::page_kind::huge));
    EXPECT_EQ(huge_policy.segment_stride(), std::size_t{2} << 20);
    // A byte count is rounded up to a multiple of the alignment.
    const ccnuma::seg_array<double> bytes(1000, ccnuma::seg::count(4), ccnuma::pad::bytes(100));
    EXPECT_EQ(bytes.segment_stride(), (250 * sizeof(double) + 103) / 104 * 104);
    EXPECT_EQ(address(bytes.begin(1)) - address(bytes.begin(0)), bytes.segment_stride());
    // pad::none: packed at the stride of the largest segment.
    const ccnuma::seg_array<double> none(10, ccnuma::seg::count(3), ccnuma::pad::none);
    EXPECT_EQ(none.segment_stride(), 4 * sizeof(double));
    EXPECT_EQ(none.end(0), none.begin(1));
}

TEST(SegArray, OverAlignedElements) {
    struct alignas(64) line {
        double v = 1.0;
    };
    for (auto padding : {ccnuma::pad::none, ccnuma::pad::bytes(8), ccnuma::pad::cache_line}) {
        const ccnuma::seg_array<line> a(37, ccnuma::seg::count(4), padding);
        for (std::size_t s = 0; s < 4; ++s) EXPECT_EQ(address(a.begin(s)) % 64, 0u);
        EXPECT_EQ(a.back().v, 1.0);
    }
}

TEST(SegArray, EveryConstructorAndAccess) {
    const array_t empty;
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(empty.begin(), empty.end());
    EXPECT_EQ(empty.segment_count(), 0u);
    EXPECT_EQ(empty.placement().pages.total, 0u);

    const ccnuma::seg_array<int> sevens(1001, 7, ccnuma::seg::count(3));
    EXPECT_EQ(std::count(sevens.begin(), sevens.end(), 7), 1001);
    const ccnuma::seg_array<double> zeros(99, ccnuma::seg::count(2));
    EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](double x) { return x == 0.0; }));

    const std::vector<int> source{5, 3, 9, 1, 4};
    const ccnuma::seg_array<int> from_range(source.begin(), source.end(), ccnuma::seg::count(2), ccnuma::pad::none);
    EXPECT_TRUE(std::ranges::equal(from_range, source));
    const std::list<int> linked{4, 8, 15, 16, 23, 42};
    const ccnuma::seg_array<int> from_list(linked.begin(), linked.end(), ccnuma::seg::count(4));
    EXPECT_TRUE(std::ranges::equal(from_list, linked));
    const ccnuma::seg_array<int> listed{1, 2, 3};
    EXPECT_TRUE(std::ranges::equal(listed, std::vector<int>{1, 2, 3}));
    EXPECT_EQ(listed.front(), 1);
    EXPECT_EQ(listed.back(), 3);

    EXPECT_EQ(from_range.at(4), 4);
    try {
        (void)from_range.at(5);
        FAIL() << "no exception";
    } catch (const std::out_of_range& e) {
        EXPECT_STREQ(e.what(), "ccnuma::seg_array::at: index 5 is out of range for size 5 (valid: 0..4)");
    }
    EXPECT_THROW((void)empty.at(0), std::out_of_range);

    // Other policies, the run-time variant included.
    const ccnuma::seg_array<int, ccnuma::blocked> blocked(5000, 1, ccnuma::seg::count(3));
    const ccnuma::seg_array<int, ccnuma::interleave> spread(5000, 2, ccnuma::seg::count(3));
    const ccnuma::seg_array<int, ccnuma::policy> chosen(5000, 3, ccnuma::seg::count(3), ccnuma::pad::page,
                                                        ccnuma::policy{ccnuma::blocked{}});
    EXPECT_EQ(std::accumulate(blocked.begin(), blocked.end(), 0) + std::accumulate(spread.begin(), spread.end(), 0) +
                  std::accumulate(chosen.begin(), chosen.end(), 0),
              6 * 5000);
    EXPECT_EQ(std::get<ccnuma::blocked>(chosen.policy()).sched.threads, chosen.schedule().threads);
}

TEST(SegArray, CopyAndMove) {
    const array_t a(20011, value_at, ccnuma::seg::count(7), ccnuma::pad::cache_line);
    array_t copy(a);
    EXPECT_TRUE(std::ranges::equal(copy, a));
    EXPECT_NE(copy.begin(0), a.begin(0));
    EXPECT_EQ(copy.segment_stride(), a.segment_stride());
    EXPECT_EQ(copy.segment_count(), 7u);
    EXPECT_EQ(copy.segment_padding(), ccnuma::pad::cache_line);

    // Moving keeps the elements and the iterators.
    const auto it = copy.begin() + 12345;
    const long* storage = copy.begin(0);
    array_t moved(std::move(copy));
    EXPECT_EQ(moved.begin(0), storage);
    EXPECT_EQ(*it, value_at(12345));
    EXPECT_EQ(it - moved.begin(), 12345);
    EXPECT_TRUE(copy.empty());  // NOLINT: moved-from is empty, by contract

    array_t small(3);
    small = a;
    EXPECT_TRUE(std::ranges::equal(small, a));
    small = std::move(moved);
    EXPECT_EQ(small.begin(0), storage);
    swap(small, moved);
    EXPECT_EQ(moved.begin(0), storage);
    EXPECT_EQ(small.size(), 0u);
}

TEST(SegArray, PlacementReportOnThisMachine) {
    const ccnuma::seg_array<double> a(std::size_t{1} << 20, 1.0, ccnuma::seg::count(3));
    const auto report = a.placement();
    EXPECT_EQ(report.pages.total, 3 * a.segment_stride() / page);
    EXPECT_EQ(report.pages.not_present, 0u);
    // This host has one node: every page is on it, and so local to every owner.
    EXPECT_EQ(report.pages.pages.at(0), report.pages.total);
    EXPECT_EQ(report.locality, 1.0);
}

// ---- owners ------------------------------------------------------------------------------

// Records the thread that constructed and the one that destroyed each element.
std::vector<int> destroyed_by;

struct traced {
    std::size_t index = 0;
    int built_by = -1;
    traced() = default;
    explicit traced(std::size_t i) : index(i), built_by(omp_get_thread_num()) {}
    traced(const traced& o) : index(o.index), built_by(omp_get_thread_num()) {}
    ~traced() {
        if (index < destroyed_by.size()) destroyed_by[index] = omp_get_thread_num();
    }
};

TEST(SegArray, EachSegmentIsBuiltAndDestroyedByItsOwnerThread) {
    for (unsigned threads : {1u, 2u, 3u, 4u})
        for (std::size_t segments : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}})
            for (std::size_t chunk : {std::size_t{0}, std::size_t{2}}) {
                SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(segments) + " segments, chunk " +
                             std::to_string(chunk));
                const std::size_t n = 1009;
                const auto owner = test_support::static_owners(segments, threads, chunk);
                destroyed_by.assign(n, -1);
                {
                    ccnuma::seg_array<traced> a(n, [](std::size_t i) { return traced(i); }, ccnuma::seg::count(segments),
                                                ccnuma::pad::none, ccnuma::first_touch{}.threads(threads).chunk(chunk));
                    std::size_t wrong = 0;
                    for (std::size_t s = 0; s < segments; ++s)
                        for (const auto& x : a.segment(s)) wrong += x.built_by != owner[s];
                    EXPECT_EQ(wrong, 0u) << "built by another thread";
                    // A copy is made by the owners too.
                    const auto copy = a;
                    wrong = 0;
                    for (std::size_t s = 0; s < segments; ++s)
                        for (const auto& x : copy.segment(s)) wrong += x.built_by != owner[s];
                    EXPECT_EQ(wrong, 0u) << "copied by another thread";
                    destroyed_by.assign(n, -1);
                }
                // The copy, then the original, are destroyed: the log holds the original's.
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < n; ++i) wrong += destroyed_by[i] != owner[segment_of(i, n, segments)];
                EXPECT_EQ(wrong, 0u) << "destroyed by another thread";
            }
}

// ---- exception safety: the Nth construction throws ---------------------------------------

using test_support::countdown;
using test_support::fragile;
using test_support::live;

using SegArrayExceptionSafety = test_support::exception_safety_test;

TEST_P(SegArrayExceptionSafety, ThrowingConstructorLeavesNothingAlive) {
    const std::size_t n = 1000;
    for (std::size_t segments : {std::size_t{1}, std::size_t{3}, std::size_t{7}})
        for (auto padding : {ccnuma::pad::none, ccnuma::pad::page})
            for (long k : {0L, 1L, 499L, 999L}) {
                SCOPED_TRACE(std::to_string(segments) + " segments, throw at " + std::to_string(k));
                countdown = k;
                EXPECT_THROW(ccnuma::seg_array<fragile>(n, ccnuma::seg::count(segments), padding, team()),
                             std::runtime_error);
                EXPECT_EQ(live.load(), 0);
            }
    countdown = -1;
    const fragile prototype;
    for (long k : {0L, 500L, 999L}) {
        countdown = k;
        EXPECT_THROW(ccnuma::seg_array<fragile>(n, prototype, ccnuma::seg::count(5), ccnuma::pad::cache_line, team()),
                     std::runtime_error);
        EXPECT_EQ(live.load(), 1) << "copies, throw at " << k;
    }
    countdown = -1;
    EXPECT_THROW(ccnuma::seg_array<std::vector<double>>(n,
                                                        [](std::size_t i) {
                                                            if (i == n / 3) throw std::invalid_argument("generator");
                                                            return std::vector<double>(64, 1.0);
                                                        },
                                                        ccnuma::seg::count(4), ccnuma::pad::page, team()),
                 std::invalid_argument);
}

TEST_P(SegArrayExceptionSafety, ThrowingCopyLeavesTheOriginal) {
    ccnuma::seg_array<fragile> a(800, ccnuma::seg::count(6), ccnuma::pad::none, team());
    ASSERT_EQ(live.load(), 800);
    countdown = 400;
    EXPECT_THROW(ccnuma::seg_array<fragile>{a}, std::runtime_error);
    EXPECT_EQ(live.load(), 800);
    countdown = 10;
    ccnuma::seg_array<fragile> target(5, ccnuma::seg::count(2), ccnuma::pad::none, team());
    EXPECT_THROW(target = a, std::runtime_error);
    EXPECT_EQ(target.size(), 5u) << "strong guarantee";
    EXPECT_EQ(live.load(), 805);
}

INSTANTIATE_TEST_SUITE_P(Threads, SegArrayExceptionSafety, ::testing::Values(1u, 2u, 4u),
                         [](const auto& param_info) { return std::to_string(param_info.param) + "threads"; });

// Issue 17, item 2: pad::bytes(SIZE_MAX) rounded up to alignof(T) wrapped to 0 and divided by it.
TEST(Issue17, PaddingBeyondTheAddressSpaceIsAnErrorNotSigfpe) {
    for (std::size_t bytes : {std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max() - 3,
                              std::numeric_limits<std::size_t>::max() / 2}) {
        try {
            ccnuma::seg_array<double> s(100, ccnuma::seg::count(3), ccnuma::pad::bytes(bytes));
            ADD_FAILURE() << "pad::bytes(" << bytes << ") was accepted";
        } catch (const ccnuma::error& e) {
            const std::string m = e.what();
            EXPECT_EQ(m.rfind("ccnuma: seg_array of 100 elements in 3 segments: pad::bytes(" + std::to_string(bytes) +
                                  ") does not fit the address space (valid: pad::bytes(0) to pad::bytes(",
                              0),
                      0u)
                << m;
        }
    }
    // A large but representable padding is too much memory, not a crash: more than the nodes
    // hold, refused before anything is mapped (issue 26: ccnuma::error, no longer std::bad_alloc).
    try {
        ccnuma::seg_array<double> s(100, ccnuma::seg::count(3), ccnuma::pad::bytes(std::size_t{1} << 60));
        ADD_FAILURE() << "accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::infeasible)) << e.what();
    }
    ccnuma::seg_array<double> ok(100, ccnuma::seg::count(3), ccnuma::pad::bytes(4096));
    EXPECT_EQ(ok.size(), 100u);
}

// Issue 17, item 3: the segment team is checked like every other team.
TEST(Issue17, SegmentTeamBeyondTheMachineIsAnError) {
    try {
        ccnuma::seg_array<double> s(100, ccnuma::seg::per_thread, ccnuma::pad::page, ccnuma::first_touch{}.threads(100000));
        ADD_FAILURE() << "accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("ccnuma::seg_array: a team of 100000 threads"), std::string::npos) << e.what();
    }
}

}  // namespace

namespace {

// Issue 32, item 2: with more than 2^52 page-padded segments, `max / count - unit` wrapped, the
// stride times the count wrapped to 4 KiB, and the constructor wrote past the block (ASan:
// heap-buffer-overflow in touch_padding). count(SIZE_MAX) was refused as "16 EiB more than the
// nodes hold". Like std::vector, a layout that cannot exist is a std::length_error.
TEST(SegArray, Issue32_2_SegmentCountBeyondTheIndexIsLengthError) {
    for (std::size_t count : {(std::size_t{1} << 52) + 1, std::numeric_limits<std::size_t>::max(),
                              std::size_t{std::numeric_limits<unsigned>::max()} + 1}) {
        try {
            ccnuma::seg_array<double> a(10, 1.0, ccnuma::seg::count(count));
            ADD_FAILURE() << "seg::count(" << count << ") was accepted";
        } catch (const std::length_error& e) {
            EXPECT_EQ(std::string(e.what()),
                      "ccnuma::seg_array of 10 elements: " + std::to_string(count) +
                          " segments are more than a segment index can count (valid: seg::count(1) to seg::count(" +
                          std::to_string(std::numeric_limits<unsigned>::max()) + "))");
        }
    }
}

TEST(SegArray, Issue32_2_StrideTimesSegmentsBeyondTheAddressSpaceIsLengthError) {
    // 16 segments of 2^60 bytes each: each stride fits, the block does not.
    const std::size_t n = (std::size_t{1} << 61) - 1;
    try {
        ccnuma::seg_array<double> a(n, ccnuma::seg::count(16));
        ADD_FAILURE() << "accepted";
    } catch (const std::length_error& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("ccnuma::seg_array: " + std::to_string(n) + " elements of 8 bytes in 16 segments padded to ", 0),
                  0u)
            << m;
        EXPECT_NE(m.find(" bytes exceed the address space"), std::string::npos) << m;
    }
    ccnuma::seg_array<double> ok(10, 1.0, ccnuma::seg::count(3));
    EXPECT_EQ(ok.segment_count(), 3u);
    EXPECT_EQ(ok[9], 1.0);
}

}  // namespace
