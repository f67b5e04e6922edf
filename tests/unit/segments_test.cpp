// ccnuma::segments(v): a ccnuma::vector (or a span) seen as the segments of its static schedule,
// one per thread's chunk or one per chunk of schedule(static, c); and the algorithms of
// algorithm.hpp on it, sequential and par::, against std:: on the vector. (Moved here from
// seg_array_test.cpp and algorithm_test.cpp with segments(v), which left seg_array.hpp.)

#include <ccnuma/algorithm.hpp>
#include <ccnuma/segments.hpp>
#include <ccnuma/vector.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <numeric>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

long value_at(std::size_t i) { return static_cast<long>((i * 7919) % 10007) - 5000; }
long long small_at(std::size_t i) { return static_cast<long long>(i % 13); }

// ---- ccnuma::segments(v) -----------------------------------------------------------------

TEST(SegmentsOfVector, OneSegmentPerThreadsStaticChunk) {
    const std::size_t n = 100003;
    ccnuma::vector<long> v(n, value_at, ccnuma::first_touch{}.threads(3));
    auto view = ccnuma::segments(v);
    EXPECT_EQ(view.segment_count(), 3u);
    EXPECT_EQ(view.size(), n);
    EXPECT_TRUE(std::ranges::equal(view, v));
    std::size_t next = 0;
    for (auto s = view.segment_begin(); s != view.segment_end(); ++s) {
        EXPECT_EQ(s.begin(), v.data() + next) << "the chunks of a contiguous array";
        EXPECT_EQ(s.size(), n / 3 + (s.index() < n % 3 ? 1 : 0));
        next += s.size();
    }
    EXPECT_EQ(view.schedule(), (ccnuma::schedule{0, 3}));
    std::sort(view.begin(), view.end());
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));

    // schedule(static, c): a segment per chunk, dealt round-robin.
    const ccnuma::vector<long> chunked(1000, value_at, ccnuma::first_touch{}.threads(2).chunk(64));
    const auto cv = ccnuma::segments(chunked);
    EXPECT_EQ(cv.segment_count(), 16u);
    EXPECT_EQ((*(cv.segment_end() - 1)).size(), 1000u - 15 * 64);
    EXPECT_EQ(cv.schedule(), (ccnuma::schedule{1, 2}));
    EXPECT_TRUE(std::ranges::equal(cv, chunked));
    static_assert(std::is_same_v<decltype(cv.begin()), ccnuma::segmented_iterator<const long>>);

    // Moving the view keeps its iterators.
    auto it = view.begin() + 5;
    auto moved = std::move(view);
    EXPECT_EQ(*it, v[5]);
    EXPECT_EQ(moved.end() - it, static_cast<std::ptrdiff_t>(n - 5));

    std::vector<long> plain(10, 1);
    auto sv = ccnuma::segments(std::span<long>(plain), ccnuma::schedule{0, 4});
    EXPECT_EQ(sv.segment_count(), 4u);
    EXPECT_EQ(std::accumulate(sv.begin(), sv.end(), 0L), 10);
}

// ---- ccnuma::vector through ccnuma::segments(v) ----------------------------------------

TEST(AlgorithmsOnVectorSegments, MatchStdOnTheVector) {
    for (std::size_t chunk : {std::size_t{0}, std::size_t{100}}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        const std::size_t n = 100003;
        ccnuma::vector<long long> v(n, value_at, ccnuma::first_touch{}.threads(3).chunk(chunk));
        ccnuma::vector<long long> w(n, small_at, ccnuma::first_touch{}.threads(3).chunk(chunk));
        auto sv = ccnuma::segments(v);
        const auto sw = ccnuma::segments(std::as_const(w));
        EXPECT_EQ(ccnuma::par::reduce(sv.begin(), sv.end()), std::reduce(v.begin(), v.end()));
        EXPECT_EQ(ccnuma::par::inner_product(sv.begin(), sv.end(), sw.begin(), 0LL),
                  std::inner_product(v.begin(), v.end(), w.begin(), 0LL));
        EXPECT_EQ(ccnuma::par::min_element(sv.begin(), sv.end()) - sv.begin(), std::min_element(v.begin(), v.end()) - v.begin());
        ccnuma::par::transform(sw.begin(), sw.end(), sv.begin(), [](long long x) { return x * x; });
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], small_at(i) * small_at(i));
    }
}

}  // namespace
