// The hierarchical algorithms against std:: on the same data: every algorithm, sequential and
// par::, for segment counts 1, 2, 3 and 7, paddings none, cache line and page, and sizes 0, 1, a
// prime and a large prime; subranges that start and end inside segments; ranges with other
// segmentations, plain iterators, non-random-access iterators and output iterators; the
// thread that runs each segment under par::; exceptions from function objects; par::fill, copy
// and transform under every store mode (stores.hpp), at every offset in a 64-byte line.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/detail/slots.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/segments.hpp>

#include "../support/quiet_diagnostics.hpp"
#include "../support/static_owners.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <list>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

// memset through a pointer the compiler cannot see through: GCC's -flifetime-dse (on by default)
// may drop plain stores to storage that a constructor is about to begin an object in, and the
// test below would then build over whatever bytes were there, not over 0xFF.
void fill_ones(void* p, std::size_t n) { std::memset(p, 0xFF, n); }
void (*volatile fill)(void*, std::size_t) = fill_ones;

// The partial results of a reduction start empty whatever the memory held before: the slots
// inside the object (up to 4 KiB, 32 of 128 bytes) are built over bytes of 0xFF, and a slot left
// engaged or a double left unzeroed would enter the sum. Beyond, on the heap, they start empty too.
TEST(Slots, StartEmptyOverAnyBytes) {
    using partial = ccnuma::padded<std::optional<double>>;
    using slots = ccnuma::detail::slots<partial>;
    constexpr std::size_t inside = 4096 / sizeof(partial);
    for (std::size_t n : {std::size_t{1}, std::size_t{8}, inside, inside + 1, std::size_t{300}}) {
        alignas(slots) unsigned char raw[sizeof(slots)];
        fill(raw, sizeof raw);
        auto* s = ::new (static_cast<void*>(raw)) slots(n);
        EXPECT_EQ(s->size(), n);
        for (const auto& p : *s) EXPECT_FALSE(p.value.has_value()) << "n = " << n;
        s->~slots();
    }
    using plain = ccnuma::detail::slots<double>;
    alignas(plain) unsigned char raw[sizeof(plain)];
    fill(raw, sizeof raw);
    auto* d = ::new (static_cast<void*>(raw)) plain(16);
    for (double x : *d) EXPECT_EQ(x, 0.0);
    d->~plain();
}

using array_t = ccnuma::seg_array<long long>;

long long value_at(std::size_t i) { return static_cast<long long>((i * 7919) % 10007) - 5000; }
long long small_at(std::size_t i) { return static_cast<long long>(i % 13); }

std::string pad_name(const ccnuma::padding& p) {
    return p == ccnuma::pad::none ? "none" : p == ccnuma::pad::cache_line ? "line" : "page";
}

class Algorithms : public ::testing::TestWithParam<std::tuple<std::size_t, ccnuma::padding, std::size_t>> {
protected:
    std::size_t segments = std::get<0>(GetParam());
    ccnuma::padding padding = std::get<1>(GetParam());
    std::size_t n = std::get<2>(GetParam());
    // Another segmentation of the same size: other count, other padding.
    std::size_t other_segments = segments % 7 + 2;
    ccnuma::padding other_padding = padding == ccnuma::pad::page ? ccnuma::pad::none : ccnuma::pad::page;

    array_t make(long long (*gen)(std::size_t)) const { return {n, gen, ccnuma::seg::count(segments), padding}; }
    array_t make_other(long long (*gen)(std::size_t)) const {
        return {n, gen, ccnuma::seg::count(other_segments), other_padding};
    }
    static std::vector<long long> flat(const array_t& a) { return {a.begin(), a.end()}; }
};

TEST_P(Algorithms, ForEachFillTransformCopy) {
    array_t a = make(value_at);
    const auto ref = flat(a);

    // for_each visits in order and returns the function object.
    struct collect {
        std::vector<long long> seen;
        void operator()(long long x) { seen.push_back(x); }
    };
    EXPECT_EQ(ccnuma::for_each(a.begin(), a.end(), collect{}).seen, ref);
    ccnuma::for_each(a.begin(), a.end(), [](long long& x) { x = 3 * x + 1; });
    ccnuma::par::for_each(a.begin(), a.end(), [](long long& x) { x -= 1; });
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 3 * ref[i]) << i;

    // Unary transform, in place and into another segmentation and into a std::vector.
    ccnuma::transform(a.begin(), a.end(), a.begin(), [](long long x) { return x / 3; });
    EXPECT_TRUE(std::ranges::equal(a, ref));
    array_t out = make_other(small_at);
    EXPECT_EQ(ccnuma::transform(a.begin(), a.end(), out.begin(), std::negate<>{}), out.end());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], -ref[i]);
    EXPECT_EQ(ccnuma::par::transform(a.begin(), a.end(), out.begin(), [](long long x) { return 2 * x; }), out.end());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * ref[i]);
    std::vector<long long> plain(n);
    EXPECT_EQ(ccnuma::par::transform(a.begin(), a.end(), plain.begin(), [](long long x) { return x + 1; }), plain.end());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(plain[i], ref[i] + 1);
    // A noexcept operation runs each piece as a simd loop where the output is the input element
    // for element or apart from it; a shifted overlap keeps the sequential order, in which
    // out[i + 1] = op(in[i]) reads what the step before wrote.
    ccnuma::par::transform(a.begin(), a.end(), a.begin(), [](long long x) noexcept { return x + 5; });
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], ref[i] + 5) << i;
    ccnuma::par::transform(a.begin(), a.end(), out.begin(), [](long long x) noexcept { return x - 5; });
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], ref[i]) << i;
    if (n >= 2) {
        std::vector<long long> chain(n, 0);
        chain[0] = 1;
        ccnuma::transform(chain.begin(), chain.end() - 1, chain.begin() + 1, [](long long x) noexcept { return x + 1; });
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(chain[i], static_cast<long long>(i) + 1) << "shifted overlap, " << i;
        ccnuma::transform(chain.begin() + 1, chain.end(), chain.begin(), [](long long x) noexcept { return -x; });
        for (std::size_t i = 0; i + 1 < n; ++i) ASSERT_EQ(chain[i], -static_cast<long long>(i) - 2) << "shifted back, " << i;
    }
    ccnuma::transform(a.begin(), a.end(), a.begin(), [](long long x) noexcept { return x - 5; });
    ASSERT_TRUE(std::ranges::equal(a, ref));

    // fill.
    ccnuma::fill(out.begin(), out.end(), 7LL);
    EXPECT_EQ(std::count(out.begin(), out.end(), 7LL), static_cast<std::ptrdiff_t>(n));
    ccnuma::par::fill(out.begin(), out.end(), -2LL);
    EXPECT_EQ(std::count(out.begin(), out.end(), -2LL), static_cast<std::ptrdiff_t>(n));

    // copy: seg_array to seg_array of another segmentation, to a std::vector, to a
    // back_inserter, from a std::vector into a seg_array.
    EXPECT_EQ(ccnuma::copy(a.begin(), a.end(), out.begin()), out.end());
    EXPECT_TRUE(std::ranges::equal(out, ref));
    ccnuma::fill(out.begin(), out.end(), 0LL);
    EXPECT_EQ(ccnuma::par::copy(a.begin(), a.end(), out.begin()), out.end());
    EXPECT_TRUE(std::ranges::equal(out, ref));
    std::vector<long long> copied(n);
    EXPECT_EQ(ccnuma::copy(a.begin(), a.end(), copied.begin()), copied.end());
    EXPECT_EQ(copied, ref);
    std::list<long long> appended;
    ccnuma::copy(a.begin(), a.end(), std::back_inserter(appended));
    EXPECT_TRUE(std::ranges::equal(appended, ref));
    ccnuma::par::copy(a.begin(), a.end(), std::back_inserter(appended));  // not random access: sequential
    EXPECT_EQ(appended.size(), 2 * n);
    ccnuma::fill(out.begin(), out.end(), 0LL);
    EXPECT_EQ(ccnuma::par::copy(ref.begin(), ref.end(), out.begin()), out.end());
    EXPECT_TRUE(std::ranges::equal(out, ref));
}

TEST_P(Algorithms, BinaryTransformWithEqualAndOtherSegmentations) {
    const array_t a = make(value_at), same = make(small_at), other = make_other(small_at);
    const auto ra = flat(a), rb = flat(same);
    std::vector<long long> expected(n);
    std::transform(ra.begin(), ra.end(), rb.begin(), expected.begin(), std::multiplies<>{});

    array_t out = make(small_at), out_other = make_other(value_at);
    auto check = [&](const auto& result, const char* what) {
        EXPECT_TRUE(std::ranges::equal(result, expected)) << what;
    };
    ccnuma::transform(a.begin(), a.end(), same.begin(), out.begin(), std::multiplies<>{});
    check(out, "same segmentation");
    ccnuma::transform(a.begin(), a.end(), other.begin(), out_other.begin(), std::multiplies<>{});
    check(out_other, "other segmentations");
    ccnuma::fill(out_other.begin(), out_other.end(), 0LL);
    ccnuma::par::transform(a.begin(), a.end(), other.begin(), out_other.begin(), std::multiplies<>{});
    check(out_other, "par, other segmentations");
    ccnuma::fill(out.begin(), out.end(), 0LL);
    ccnuma::par::transform(a.begin(), a.end(), same.begin(), out.begin(), std::multiplies<>{});
    check(out, "par, same segmentation");

    std::vector<long long> plain_out(n);
    ccnuma::transform(a.begin(), a.end(), rb.begin(), plain_out.begin(), std::multiplies<>{});
    check(plain_out, "plain second input and output");
    ccnuma::transform(ra.begin(), ra.end(), other.begin(), out.begin(), std::multiplies<>{});
    check(out, "plain first input, segmented second and output");
    const std::list<long long> linked(rb.begin(), rb.end());
    ccnuma::transform(a.begin(), a.end(), linked.begin(), out.begin(), std::multiplies<>{});
    check(out, "a list as the second input");
    std::vector<long long> appended;
    ccnuma::transform(a.begin(), a.end(), same.begin(), std::back_inserter(appended), std::multiplies<>{});
    check(appended, "a back_inserter as the output");
    ccnuma::fill(out.begin(), out.end(), 0LL);
    ccnuma::par::transform(ra.begin(), ra.end(), rb.begin(), out.begin(), std::multiplies<>{});
    check(out, "par, plain inputs into a seg_array");
}

TEST_P(Algorithms, Reductions) {
    const array_t a = make(value_at), b = make(small_at), other = make_other(small_at);
    const auto ra = flat(a), rb = flat(b);
    EXPECT_EQ(ccnuma::reduce(a.begin(), a.end()), std::reduce(ra.begin(), ra.end()));
    EXPECT_EQ(ccnuma::reduce(a.begin(), a.end(), 17LL), std::reduce(ra.begin(), ra.end(), 17LL));
    EXPECT_EQ(ccnuma::par::reduce(a.begin(), a.end()), std::reduce(ra.begin(), ra.end()));
    EXPECT_EQ(ccnuma::par::reduce(a.begin(), a.end(), 17LL), std::reduce(ra.begin(), ra.end(), 17LL));
    auto bitor_ = [](long long x, long long y) { return x | (y & 0xff); };
    EXPECT_EQ(ccnuma::accumulate(a.begin(), a.end(), 0LL, bitor_), std::accumulate(ra.begin(), ra.end(), 0LL, bitor_));
    EXPECT_EQ(ccnuma::accumulate(a.begin(), a.end(), 5LL), std::accumulate(ra.begin(), ra.end(), 5LL));
    EXPECT_EQ(ccnuma::par::accumulate(a.begin(), a.end(), 5LL), std::accumulate(ra.begin(), ra.end(), 5LL));
    auto maximum = [](long long x, long long y) { return std::max(x, y); };
    EXPECT_EQ(ccnuma::par::reduce(a.begin(), a.end(), -1000000LL, maximum),
              std::reduce(ra.begin(), ra.end(), -1000000LL, maximum));

    const long long dot = std::inner_product(ra.begin(), ra.end(), rb.begin(), 3LL);
    EXPECT_EQ(ccnuma::inner_product(a.begin(), a.end(), b.begin(), 3LL), dot);
    EXPECT_EQ(ccnuma::inner_product(a.begin(), a.end(), other.begin(), 3LL), dot);
    EXPECT_EQ(ccnuma::inner_product(a.begin(), a.end(), rb.begin(), 3LL), dot);
    EXPECT_EQ(ccnuma::par::inner_product(a.begin(), a.end(), other.begin(), 3LL), dot);
    EXPECT_EQ(ccnuma::par::inner_product(ra.begin(), ra.end(), other.begin(), 3LL), dot);
    const std::list<long long> linked(rb.begin(), rb.end());
    EXPECT_EQ(ccnuma::inner_product(a.begin(), a.end(), linked.begin(), 3LL), dot);
    auto minus = std::minus<>{};
    EXPECT_EQ(ccnuma::inner_product(a.begin(), a.end(), b.begin(), 0LL, std::plus<>{}, minus),
              std::inner_product(ra.begin(), ra.end(), rb.begin(), 0LL, std::plus<>{}, minus));

    // Floating point: accumulate is the same left fold as the flat loop, bit for bit.
    const ccnuma::seg_array<double> x(n, [](std::size_t i) { return 1.0 / static_cast<double>(i + 1); },
                                      ccnuma::seg::count(segments), padding);
    const std::vector<double> rx(x.begin(), x.end());
    const double hierarchical = ccnuma::accumulate(x.begin(), x.end(), 0.0);
    const double flat_loop = std::accumulate(rx.begin(), rx.end(), 0.0);
    EXPECT_EQ(std::memcmp(&hierarchical, &flat_loop, sizeof(double)), 0);
    EXPECT_NEAR(ccnuma::par::reduce(x.begin(), x.end(), 0.0), flat_loop, 1e-12 * std::max(1.0, flat_loop));
    // par:: combines the segments in order: the same bits every time, whatever the team does.
    EXPECT_EQ(ccnuma::par::reduce(x.begin(), x.end(), 0.0), ccnuma::par::reduce(x.begin(), x.end(), 0.0));
}

TEST_P(Algorithms, Searches) {
    const array_t a = make(value_at), b = make(small_at), other = make_other(small_at);
    const auto ra = flat(a), rb = flat(b);
    for (long long threshold : {-6000LL, 4990LL, 5006LL, 6000LL}) {
        auto above = [threshold](long long x) { return x > threshold; };
        const auto count = std::count_if(ra.begin(), ra.end(), above);
        EXPECT_EQ(ccnuma::count_if(a.begin(), a.end(), above), count);
        EXPECT_EQ(ccnuma::par::count_if(a.begin(), a.end(), above), count);
        const auto at = std::find_if(ra.begin(), ra.end(), above) - ra.begin();
        EXPECT_EQ(ccnuma::find_if(a.begin(), a.end(), above) - a.begin(), at) << threshold;
        EXPECT_EQ(ccnuma::par::find_if(a.begin(), a.end(), above) - a.begin(), at) << threshold;
    }
    // The last element only: the search crosses every segment.
    if (n > 0) {
        const long long last = ra.back();
        const auto at = std::find(ra.begin(), ra.end(), last) - ra.begin();
        EXPECT_EQ(ccnuma::par::find_if(a.begin(), a.end(), [last](long long x) { return x == last; }) - a.begin(), at);
    }

    EXPECT_TRUE(ccnuma::equal(b.begin(), b.end(), other.begin()));
    EXPECT_TRUE(ccnuma::par::equal(b.begin(), b.end(), other.begin()));
    EXPECT_TRUE(ccnuma::equal(b.begin(), b.end(), rb.begin()));
    EXPECT_TRUE(ccnuma::par::equal(rb.begin(), rb.end(), other.begin()));
    const std::list<long long> linked(rb.begin(), rb.end());
    EXPECT_TRUE(ccnuma::equal(b.begin(), b.end(), linked.begin()));
    // A difference at the first, middle and last element.
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
        if (n == 0) break;
        auto changed = make_other(small_at);
        changed[at] += 1;
        EXPECT_FALSE(ccnuma::equal(b.begin(), b.end(), changed.begin())) << at;
        EXPECT_FALSE(ccnuma::par::equal(b.begin(), b.end(), changed.begin())) << at;
        EXPECT_TRUE(ccnuma::equal(b.begin(), b.end(), changed.begin(), [](long long x, long long y) {
            return x == y || x + 1 == y;
        }));
    }

    // min and max: the first of equal extremes (small_at repeats every value).
    EXPECT_EQ(ccnuma::min_element(b.begin(), b.end()) - b.begin(), std::min_element(rb.begin(), rb.end()) - rb.begin());
    EXPECT_EQ(ccnuma::max_element(b.begin(), b.end()) - b.begin(), std::max_element(rb.begin(), rb.end()) - rb.begin());
    EXPECT_EQ(ccnuma::par::min_element(b.begin(), b.end()) - b.begin(),
              std::min_element(rb.begin(), rb.end()) - rb.begin());
    EXPECT_EQ(ccnuma::par::max_element(b.begin(), b.end()) - b.begin(),
              std::max_element(rb.begin(), rb.end()) - rb.begin());
    EXPECT_EQ(ccnuma::par::min_element(a.begin(), a.end()) - a.begin(),
              std::min_element(ra.begin(), ra.end()) - ra.begin());
    auto by_last_digit = [](long long x, long long y) { return (x % 10 + 10) % 10 < (y % 10 + 10) % 10; };
    EXPECT_EQ(ccnuma::max_element(a.begin(), a.end(), by_last_digit) - a.begin(),
              std::max_element(ra.begin(), ra.end(), by_last_digit) - ra.begin());
    EXPECT_EQ(ccnuma::par::max_element(a.begin(), a.end(), by_last_digit) - a.begin(),
              std::max_element(ra.begin(), ra.end(), by_last_digit) - ra.begin());
}

TEST_P(Algorithms, SubrangesStartingAndEndingInsideSegments) {
    array_t a = make(value_at);
    const array_t other = make_other(small_at);
    const auto ra = flat(a), ro = flat(other);
    const std::size_t step = n > 100000 ? n / 3 + 1 : n > 100 ? n / 7 + 1 : 1;
    for (std::size_t i = 0; i <= n; i += step)
        for (std::size_t j = i; j <= n; j += step) {
            SCOPED_TRACE("[" + std::to_string(i) + ", " + std::to_string(j) + ")");
            const auto f = a.begin() + static_cast<std::ptrdiff_t>(i), l = a.begin() + static_cast<std::ptrdiff_t>(j);
            const auto rf = ra.begin() + static_cast<std::ptrdiff_t>(i), rl = ra.begin() + static_cast<std::ptrdiff_t>(j);
            const auto o = other.begin() + static_cast<std::ptrdiff_t>(i);
            const auto ro_f = ro.begin() + static_cast<std::ptrdiff_t>(i);
            ASSERT_EQ(ccnuma::accumulate(f, l, 0LL), std::accumulate(rf, rl, 0LL));
            ASSERT_EQ(ccnuma::par::reduce(f, l, 0LL), std::reduce(rf, rl, 0LL));
            ASSERT_EQ(ccnuma::inner_product(f, l, o, 0LL), std::inner_product(rf, rl, ro_f, 0LL));
            ASSERT_EQ(ccnuma::par::inner_product(f, l, o, 0LL), std::inner_product(rf, rl, ro_f, 0LL));
            auto odd = [](long long x) { return x % 2 != 0; };
            ASSERT_EQ(ccnuma::par::count_if(f, l, odd), std::count_if(rf, rl, odd));
            ASSERT_EQ(ccnuma::par::find_if(f, l, odd) - a.begin(), std::find_if(rf, rl, odd) - ra.begin());
            ASSERT_EQ(ccnuma::min_element(f, l) - a.begin(), std::min_element(rf, rl) - ra.begin());
            ASSERT_EQ(ccnuma::par::max_element(f, l) - a.begin(), std::max_element(rf, rl) - ra.begin());
            ASSERT_TRUE(ccnuma::par::equal(f, l, rf));
        }
    // Writes to a subrange leave the rest alone.
    if (n > 4) {
        ccnuma::par::fill(a.begin() + 1, a.end() - 1, 0LL);
        EXPECT_EQ(a[0], ra[0]);
        EXPECT_EQ(a[n - 1], ra[n - 1]);
        EXPECT_EQ(std::count(a.begin(), a.end(), 0LL), static_cast<std::ptrdiff_t>(n - 2));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Algorithms,
    ::testing::Combine(::testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}),
                       ::testing::Values(ccnuma::pad::none, ccnuma::pad::cache_line, ccnuma::pad::page),
                       ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{10007}, std::size_t{1000003})),
    [](const auto& param_info) {
        return std::to_string(std::get<0>(param_info.param)) + "segs_" + pad_name(std::get<1>(param_info.param)) + "_n" +
               std::to_string(std::get<2>(param_info.param));
    });

// ---- everything else goes to std:: -------------------------------------------------------

TEST(AlgorithmsOnPlainIterators, AreTheStdAlgorithms) {
    std::vector<int> v{4, 1, 3, 1, 5, 9, 2, 6};
    const std::list<int> l(v.begin(), v.end());
    EXPECT_EQ(ccnuma::reduce(v.begin(), v.end()), 31);
    EXPECT_EQ(ccnuma::par::reduce(v.begin(), v.end()), 31);
    EXPECT_EQ(ccnuma::accumulate(l.begin(), l.end(), 0), 31);
    EXPECT_EQ(ccnuma::par::accumulate(l.begin(), l.end(), 1), 32);
    EXPECT_EQ(*ccnuma::min_element(l.begin(), l.end()), 1);
    EXPECT_EQ(std::distance(l.begin(), ccnuma::par::max_element(l.begin(), l.end())), 5);
    EXPECT_EQ(ccnuma::par::count_if(v.data(), v.data() + v.size(), [](int x) { return x == 1; }), 2);
    EXPECT_EQ(*ccnuma::par::find_if(l.begin(), l.end(), [](int x) { return x > 4; }), 5);
    EXPECT_TRUE(ccnuma::par::equal(v.begin(), v.end(), l.begin()));
    EXPECT_EQ(ccnuma::inner_product(v.begin(), v.end(), l.begin(), 0), std::inner_product(v.begin(), v.end(), l.begin(), 0));
    std::vector<int> out;
    ccnuma::par::transform(l.begin(), l.end(), v.begin(), std::back_inserter(out), std::plus<>{});
    EXPECT_EQ(out, (std::vector<int>{8, 2, 6, 2, 10, 18, 4, 12}));
    ccnuma::par::fill(v.begin(), v.end(), 0);
    ccnuma::par::for_each(v.begin(), v.end(), [](int& x) { ++x; });
    EXPECT_EQ(ccnuma::par::copy(v.begin(), v.end(), out.begin()), out.begin() + 8);
    EXPECT_EQ(std::count(out.begin(), out.end(), 1), 8);
}

// ---- par:: runs segment s on the thread that owns it --------------------------------------

TEST(ParallelAlgorithms, EachSegmentRunsOnItsOwnerThread) {
    for (unsigned threads : {1u, 2u, 4u})
        for (std::size_t segments : {std::size_t{2}, std::size_t{3}, std::size_t{7}})
            for (std::size_t chunk : {std::size_t{0}, std::size_t{1}}) {
                SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(segments) + " segments, chunk " +
                             std::to_string(chunk));
                const auto policy = ccnuma::first_touch{}.threads(threads).chunk(chunk);
                const auto owner = test_support::static_owners(segments, threads, chunk);
                ccnuma::seg_array<int> ran_on(50021, -1, ccnuma::seg::count(segments), ccnuma::pad::none, policy);
                ccnuma::par::for_each(ran_on.begin(), ran_on.end(), [](int& t) { t = omp_get_thread_num(); });
                std::size_t wrong = 0;
                for (std::size_t s = 0; s < segments; ++s)
                    for (int t : ran_on.segment(s)) wrong += t != owner[s];
                EXPECT_EQ(wrong, 0u) << "par::for_each";

                // transform runs by the output's owners, whatever the input's segmentation.
                const ccnuma::seg_array<int> input(50021, 0, ccnuma::seg::count(segments + 1), ccnuma::pad::page, policy);
                ccnuma::fill(ran_on.begin(), ran_on.end(), -1);
                ccnuma::par::transform(input.begin(), input.end(), ran_on.begin(), [](int) { return omp_get_thread_num(); });
                wrong = 0;
                for (std::size_t s = 0; s < segments; ++s)
                    for (int t : ran_on.segment(s)) wrong += t != owner[s];
                EXPECT_EQ(wrong, 0u) << "par::transform";
            }
}

namespace {

/// What par_parts gave one segment: its part and the thread that ran it.
struct seen_part {
    std::size_t d0 = 0, d1 = 0;
    const double* b = nullptr;
    const double* e = nullptr;
    int thread = -1;
    bool visited = false;
    friend bool operator==(const seen_part&, const seen_part&) = default;
};

/// The parts of [i, j) of `a` by `walk` (the layout walk or the traits walk), per segment.
template <class Walk>
std::vector<seen_part> parts_of(const ccnuma::segmented_iterator<const double>& first, std::size_t n, std::size_t segments,
                                Walk walk) {
    std::vector<seen_part> seen(segments);
    walk(first, n, [&seen](const auto& p) {
        seen[p.segment] = {p.d0, p.d1, p.b, p.e, omp_get_thread_num(), true};
    });
    return seen;
}

/// Every subrange's parts, found by ccnuma's layout walk, are the traits walk's: the same
/// segments, positions, raw ranges and threads. The traits walk follows only the protocol
/// (segment, local, compose, index), so it is the reference for the arithmetic of the other.
void layout_walk_matches_traits_walk(ccnuma::segmented_iterator<const double> begin, std::size_t n, std::size_t segments) {
    const std::size_t step = n > 200 ? n / 11 + 1 : 1;
    for (std::size_t i = 0; i <= n; i += step)
        for (std::size_t j = i; j <= n; j += step) {
            SCOPED_TRACE("[" + std::to_string(i) + ", " + std::to_string(j) + ")");
            const auto first = begin + static_cast<std::ptrdiff_t>(i);
            const auto by_layout = parts_of(first, j - i, segments, [](const auto& f, std::size_t m, auto visit) {
                if (m != 0) ccnuma::detail::layout_parts(f, m, visit);
            });
            const auto by_traits = parts_of(first, j - i, segments, [](const auto& f, std::size_t m, auto visit) {
                if (m != 0) ccnuma::detail::traits_parts(f, m, visit);
            });
            ASSERT_EQ(by_layout, by_traits);
            std::size_t covered = 0;
            for (const auto& p : by_layout)
                if (p.visited) {
                    ASSERT_EQ(static_cast<std::size_t>(p.e - p.b), p.d1 - p.d0);
                    ASSERT_EQ(p.b, &*(first + static_cast<std::ptrdiff_t>(p.d0)));
                    covered += p.d1 - p.d0;
                }
            ASSERT_EQ(covered, j - i);
        }
}

}  // namespace

TEST(ParallelParts, LayoutWalkMatchesTheTraitsWalk) {
    for (unsigned threads : {1u, 2u, 3u})
        for (std::size_t chunk : {std::size_t{0}, std::size_t{1}})
            for (std::size_t segments : {std::size_t{1}, std::size_t{3}, std::size_t{7}})
                for (auto pad : {ccnuma::pad::none, ccnuma::pad::page})
                    for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{37}, std::size_t{10007}}) {
                        SCOPED_TRACE(std::to_string(threads) + " threads, chunk " + std::to_string(chunk) + ", " +
                                     std::to_string(segments) + " segments, n " + std::to_string(n));
                        const ccnuma::seg_array<double> a(n, 1.0, ccnuma::seg::count(segments), pad,
                                                          ccnuma::first_touch{}.threads(threads).chunk(chunk));
                        layout_walk_matches_traits_walk(a.begin(), n, segments);
                    }
    // A vector's chunks as segments: schedule(static, c) (many segments, dealt round robin) and
    // a partition (segments of any length, an empty one among them).
    std::vector<double> data(1000, 1.0);
    for (const ccnuma::schedule& s : {ccnuma::schedule{0, 3, {}}, ccnuma::schedule{64, 2, {}},
                                      ccnuma::schedule{0, 0, ccnuma::partition({0, 10, 10, 700, 1000})}}) {
        SCOPED_TRACE(ccnuma::to_string(s.partition) + ", chunk " + std::to_string(s.chunk));
        const auto view = ccnuma::segments(std::span<const double>(data), s);
        layout_walk_matches_traits_walk(view.begin(), data.size(), view.segment_count());
    }
}

TEST(ParallelAlgorithms, ExceptionsFromFunctionObjectsReachTheCaller) {
    const ccnuma::seg_array<int> a(10000, [](std::size_t i) { return static_cast<int>(i); }, ccnuma::seg::count(4),
                                   ccnuma::pad::page, ccnuma::first_touch{}.threads(4));
    auto bad = [](int x) {
        if (x == 7777) throw std::domain_error("bad element");
        return x;
    };
    std::vector<int> out(a.size());
    EXPECT_THROW(ccnuma::par::transform(a.begin(), a.end(), out.begin(), bad), std::domain_error);
    EXPECT_THROW(ccnuma::transform(a.begin(), a.end(), out.begin(), bad), std::domain_error);
    EXPECT_THROW(ccnuma::par::for_each(a.begin(), a.end(), [&](int x) { (void)bad(x); }), std::domain_error);
    EXPECT_THROW((void)ccnuma::par::reduce(a.begin(), a.end(), 0, [&](int x, int y) { return bad(x) + bad(y); }),
                 std::domain_error);
    EXPECT_THROW((void)ccnuma::par::count_if(a.begin(), a.end(), [&](int x) { return bad(x) > 0; }), std::domain_error);
}

// ---- store modes of par::fill, par::copy and par::transform ------------------------------

constexpr ccnuma::stores all_modes[] = {ccnuma::stores::regular, ccnuma::stores::streaming, ccnuma::stores::automatic};

template <class T>
T real_at(std::size_t i) {
    return static_cast<T>(static_cast<double>((i * 7919) % 10007) / 8.0 - 600.0);  // exact in float too
}

// Every mode writes what regular stores write: subranges starting at each element of a 64-byte
// line (the head before the first aligned vector, whole vectors, the tail), several
// segmentations (so pieces of every length), in place, into other segmentations and into a
// std::vector, and what lies outside the written range stays as it was.
template <class T>
void every_mode_writes_the_same() {
    using arr = ccnuma::seg_array<T>;
    for (const ccnuma::stores mode : all_modes)
        for (std::size_t segments : {std::size_t{1}, std::size_t{3}, std::size_t{7}})
            for (const ccnuma::padding pad : {ccnuma::pad::none, ccnuma::pad::cache_line, ccnuma::pad::page})
                for (std::size_t n : {std::size_t{0}, std::size_t{9}, std::size_t{1037}, std::size_t{100003}}) {
                    SCOPED_TRACE(std::string(ccnuma::to_string(mode)) + ", " + std::to_string(segments) + " segments, pad " +
                                 pad_name(pad) + ", n " + std::to_string(n));
                    const auto segs = ccnuma::seg::count(segments), other_segs = ccnuma::seg::count(segments + 2);
                    const arr b(n, real_at<T>, segs, pad), c(n, [](std::size_t i) { return real_at<T>(i + 5); }, other_segs,
                                                             ccnuma::pad::none);
                    const std::size_t lanes = 64 / sizeof(T);
                    for (std::size_t first = 0; first <= std::min(n, lanes); ++first) {
                        // Every head and tail length is covered at n = 1037 already; the large n
                        // (pieces long enough for whole streamed lines on every segmentation)
                        // needs an aligned start, one element past it, one short of the next line
                        // and the next line, not all of them (a quarter of the CI time otherwise).
                        if (n > 10000 && first > 1 && first + 1 < lanes) continue;
                        const std::size_t last = n - std::min(n - first, first % 3);  // tails of 0, 1 and 2
                        const auto f = static_cast<std::ptrdiff_t>(first), l = static_cast<std::ptrdiff_t>(last);
                        arr a(n, T(-1), segs, pad);
                        arr other(n, T(-1), other_segs, ccnuma::pad::page);
                        std::vector<T> plain(n, T(-1));
                        auto untouched_outside = [&](const auto& v, const char* what) {
                            for (std::size_t i = 0; i < n; ++i) {
                                if (i < first || i >= last) {
                                    ASSERT_EQ(v[i], T(-1)) << what << " wrote element " << i;
                                }
                            }
                        };

                        ccnuma::par::fill(mode, a.begin() + f, a.begin() + l, T(2.5));
                        untouched_outside(a, "fill");
                        for (std::size_t i = first; i < last; ++i) ASSERT_EQ(a[i], T(2.5)) << "fill " << i;

                        EXPECT_EQ(ccnuma::par::copy(mode, b.begin() + f, b.begin() + l, other.begin() + f), other.begin() + l);
                        untouched_outside(other, "copy");
                        for (std::size_t i = first; i < last; ++i) ASSERT_EQ(other[i], b[i]) << "copy " << i;

                        const auto twice = [](T x) { return T(2) * x; };
                        EXPECT_EQ(ccnuma::par::transform(mode, b.begin() + f, b.begin() + l, plain.begin() + f, twice),
                                  plain.begin() + l);
                        untouched_outside(plain, "transform into a std::vector");
                        for (std::size_t i = first; i < last; ++i) ASSERT_EQ(plain[i], T(2) * b[i]) << "transform " << i;

                        // In place, and with inputs of two other segmentations: b + c into a.
                        ccnuma::par::transform(mode, a.begin() + f, a.begin() + l, a.begin() + f, [](T x) { return x + T(1); });
                        for (std::size_t i = first; i < last; ++i) ASSERT_EQ(a[i], T(3.5)) << "in place " << i;
                        ccnuma::par::transform(mode, b.begin() + f, b.begin() + l, c.begin() + f, a.begin() + f, std::plus<>{});
                        untouched_outside(a, "binary transform");
                        for (std::size_t i = first; i < last; ++i) ASSERT_EQ(a[i], b[i] + c[i]) << "binary " << i;
                    }
                }
}

TEST(StoreModes, EveryModeWritesWhatRegularStoresWriteDouble) { every_mode_writes_the_same<double>(); }
TEST(StoreModes, EveryModeWritesWhatRegularStoresWriteFloat) { every_mode_writes_the_same<float>(); }

TEST(StoreModes, TypesWithoutStreamingStoresTakeTheRegularPath) {
    ccnuma::seg_array<long long> a(100003, 0LL, ccnuma::seg::count(3));
    const ccnuma::seg_array<long long> b(100003, value_at, ccnuma::seg::count(5));
    ccnuma::par::copy(ccnuma::stores::streaming, b.begin(), b.end(), a.begin());
    EXPECT_TRUE(std::ranges::equal(a, b));
    std::list<long long> appended;  // not random access: sequential, regular
    ccnuma::par::transform(ccnuma::stores::streaming, b.begin(), b.end(), std::back_inserter(appended), std::negate<>{});
    EXPECT_EQ(appended.size(), b.size());
    EXPECT_EQ(appended.front(), -b[0]);
}

// The decision of one piece: streaming streams; automatic never streams a piece that reads
// what it writes, and otherwise streams exactly when streams() says so for the call's bytes;
// regular never streams; an int output never streams.
TEST(StoreModes, AutomaticSkipsPiecesThatReadTheirOutput) {
    std::vector<double> in(64, 1.0), out(64, 0.0);
    double* o = out.data();
    auto at = [&](std::size_t i) { return in[i] * 2; };
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
    auto piece = [&](ccnuma::stores mode, bool aliases) {
        double* p = o;
        const bool streamed = ccnuma::detail::stream_piece({mode, huge}, p, 64, [&] { return aliases; }, at);
        EXPECT_EQ(p, streamed ? o + 64 : o) << "the output moves past a streamed piece only";
        return streamed;
    };
    EXPECT_TRUE(piece(ccnuma::stores::streaming, true));
    EXPECT_EQ(out[63], 2.0);
    EXPECT_FALSE(piece(ccnuma::stores::regular, false));
    EXPECT_FALSE(piece(ccnuma::stores::automatic, true));
    EXPECT_EQ(piece(ccnuma::stores::automatic, false), ccnuma::streams(ccnuma::stores::automatic, huge, false, true));
    EXPECT_EQ(piece(ccnuma::stores::automatic, false), ccnuma::streaming_threshold() != 0);
    std::vector<int> ints(64);
    auto ip = ints.begin();
    EXPECT_FALSE(ccnuma::detail::stream_piece({ccnuma::stores::streaming, huge}, ip, 64, [] { return false; },
                                              [](std::size_t) { return 1; }));
    EXPECT_EQ(ints[0], 0);

    // What counts as aliasing: overlapping raw ranges, and any input whose memory is not seen.
    EXPECT_TRUE(ccnuma::detail::may_alias(in.data(), in.data() + 10, 11));
    EXPECT_FALSE(ccnuma::detail::may_alias(in.data(), in.data() + 10, 10));
    EXPECT_FALSE(ccnuma::detail::may_alias(in.cbegin(), out.begin(), 64));
    EXPECT_TRUE(ccnuma::detail::may_alias(out.begin() + 63, out.data(), 64));
    const std::list<double> linked(4);
    EXPECT_TRUE(ccnuma::detail::may_alias(linked.begin(), o, 4));
}

TEST(StoreModes, StreamedPiecesRunOnTheOwnerOfTheirSegment) {
    for (unsigned threads : {1u, 2u, 3u}) {
        const auto policy = ccnuma::first_touch{}.threads(threads);
        const auto owner = test_support::static_owners(7, threads, 0);
        ccnuma::seg_array<double> ran_on(50021, -1.0, ccnuma::seg::count(7), ccnuma::pad::none, policy);
        const ccnuma::seg_array<double> input(50021, 0.0, ccnuma::seg::count(4), ccnuma::pad::page, policy);
        ccnuma::par::transform(ccnuma::stores::streaming, input.begin(), input.end(), ran_on.begin(),
                               [](double) { return static_cast<double>(omp_get_thread_num()); });
        std::size_t wrong = 0;
        for (std::size_t s = 0; s < 7; ++s)
            for (double t : ran_on.segment(s)) wrong += t != owner[s];
        EXPECT_EQ(wrong, 0u) << threads << " threads";
    }
}

TEST(StoreModes, ExceptionsFromAStreamedTransformReachTheCaller) {
    const ccnuma::seg_array<double> a(10000, [](std::size_t i) { return static_cast<double>(i); }, ccnuma::seg::count(4),
                                      ccnuma::pad::page, ccnuma::first_touch{}.threads(4));
    ccnuma::seg_array<double> out(10000, 0.0, ccnuma::seg::count(4), ccnuma::pad::page, ccnuma::first_touch{}.threads(4));
    auto bad = [](double x) {
        if (x == 7777) throw std::domain_error("bad element");
        return x;
    };
    EXPECT_THROW(ccnuma::par::transform(ccnuma::stores::streaming, a.begin(), a.end(), out.begin(), bad), std::domain_error);
    EXPECT_THROW(ccnuma::par::transform(ccnuma::stores::streaming, a.begin(), a.end(), a.begin(), out.begin(),
                                        [&](double x, double y) { return bad(x) + y; }),
                 std::domain_error);
}

}  // namespace

// reduce and par::reduce of a plain sum over contiguous pieces run detail::lane_sum: element j
// of a piece goes to partial sum j % sum_lanes, so every length and offset is its own tail.
TEST(Reduce, PlainSumEveryLengthAndOffset) {
    std::vector<double> x(160);
    std::vector<long long> ints(160);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<double>((i * 37) % 101) - 50.0;  // integer-valued: exact in any order
        ints[i] = static_cast<long long>(i * i) - 3000;
    }
    for (std::size_t off : {0U, 1U, 3U, 7U})
        for (std::size_t n = 0; n <= 70; ++n) {
            const auto b = x.begin() + static_cast<std::ptrdiff_t>(off), e = b + static_cast<std::ptrdiff_t>(n);
            const auto bi = ints.begin() + static_cast<std::ptrdiff_t>(off), ei = bi + static_cast<std::ptrdiff_t>(n);
            const double want = std::accumulate(b, e, 0.5);
            ASSERT_EQ(ccnuma::reduce(b, e, 0.5), want) << "offset " << off << " n " << n;
            ASSERT_EQ(ccnuma::reduce(b, e, 0.5, std::plus<double>{}), want);
            ASSERT_EQ(ccnuma::reduce(bi, ei), std::accumulate(bi, ei, 0LL));
            ASSERT_EQ(ccnuma::reduce(x.data() + off, x.data() + off + n, 0.5), want);
            // Segmented: pieces of every length, each from its segment's beginning.
            for (std::size_t segments : {1U, 3U, 8U}) {
                const ccnuma::seg_array<double> s(b, e, ccnuma::seg::count(segments));
                const ccnuma::seg_array<long long> si(bi, ei, ccnuma::seg::count(segments));
                ASSERT_EQ(ccnuma::reduce(s.begin(), s.end(), 0.5), want);
                ASSERT_EQ(ccnuma::par::reduce(s.begin(), s.end(), 0.5), want) << "segments " << segments << " n " << n;
                ASSERT_EQ(ccnuma::par::reduce(si.begin(), si.end()), std::accumulate(bi, ei, 0LL));
            }
        }
}

// The order itself, where rounding shows it: element j into partial sum j % sum_lanes, a lane
// without elements adding nothing, then the lanes pairwise. The reference is the documented
// order written as plain loops.
template <class T>
T lane_order_reference(const T* p, std::size_t n) {
    constexpr std::size_t lanes = ccnuma::detail::sum_lanes<T>;
    std::vector<T> acc(lanes, ccnuma::detail::sum_identity<T>());
    for (std::size_t j = 0; j < n; ++j) acc[j % lanes] = static_cast<T>(acc[j % lanes] + p[j]);
    for (std::size_t w = lanes / 2; w > 0; w /= 2)
        for (std::size_t k = 0; k < w; ++k) acc[k] = static_cast<T>(acc[k] + acc[k + w]);
    return acc[0];
}

template <class T>
void sums_in_lane_order() {
    std::vector<T> x(300);
    for (std::size_t i = 0; i < x.size(); ++i)  // magnitudes 1e-3 to 1e7 and both signs: every add rounds
        x[i] = static_cast<T>(std::ldexp((i % 3 == 0 ? -1.0 : 1.0) * (1.0 + static_cast<double>((i * 7919) % 1000) / 997.0),
                                         static_cast<int>((i * 13) % 34) - 10));
    x[5] = -T{};
    // The values again from a 256-byte boundary (a block of lane_sum's lanes), and one 64-byte
    // line past it: the bits must not depend on where a block starts in memory.
    constexpr std::size_t block = ccnuma::detail::sum_lanes<T> * sizeof(T), line = 64 / sizeof(T);
    static_assert(block == 256);
    struct alignas(256) values {
        T v[300];
    };
    const auto storage = std::make_unique<values>();
    const T* aligned = storage->v;
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % block, 0U);
    std::copy(x.begin(), x.end(), storage->v);
    for (const T* base : {static_cast<const T*>(x.data()), aligned}) {
        for (std::size_t off : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}, std::size_t{7},
                                line - 1, line, line + 3, block / sizeof(T)})
            for (std::size_t n = 0; n + off <= x.size(); n += n < 80 ? 1 : 29) {
                const T* b = base + off;
                const T want = lane_order_reference(b, n), got = ccnuma::detail::lane_sum(b, n);
                ASSERT_EQ(std::memcmp(&want, &got, sizeof(T)), 0) << "offset " << off << " n " << n << ": " << want << " " << got;
            }
    }
}

TEST(Reduce, PlainSumIsTheDocumentedLaneOrder) {
    sums_in_lane_order<double>();
    sums_in_lane_order<float>();
}

TEST(Reduce, PlainSumDeterministicAndSigned) {
    const std::size_t n = 100003;
    for (std::size_t segments : {1U, 2U, 5U}) {
        const ccnuma::seg_array<double> x(
            n, [](std::size_t i) { return std::sin(static_cast<double>(i)) * 1e10 + 1.0 / static_cast<double>(i + 1); },
            ccnuma::seg::count(segments));
        const std::vector<double> flat(x.begin(), x.end());
        const double seq = ccnuma::reduce(flat.begin(), flat.end(), 0.0), par = ccnuma::par::reduce(x.begin(), x.end(), 0.0);
        for (int k = 0; k < 5; ++k) {
            const double seq_again = ccnuma::reduce(flat.begin(), flat.end(), 0.0);
            const double par_again = ccnuma::par::reduce(x.begin(), x.end(), 0.0);
            EXPECT_EQ(std::memcmp(&seq, &seq_again, sizeof(double)), 0);
            EXPECT_EQ(std::memcmp(&par, &par_again, sizeof(double)), 0);
        }
        const double left = std::accumulate(flat.begin(), flat.end(), 0.0);
        EXPECT_NEAR(seq, left, 1e-9 * std::abs(left) + 1e3);
        EXPECT_NEAR(par, left, 1e-9 * std::abs(left) + 1e3);
    }
    // -0.0 is the sum's identity: negative zeros sum to a negative zero, as in std::reduce.
    const std::vector<double> zeros(50, -0.0);
    EXPECT_TRUE(std::signbit(ccnuma::reduce(zeros.begin(), zeros.end(), -0.0)));
    const ccnuma::seg_array<double> szeros(50, -0.0, ccnuma::seg::count(3));
    EXPECT_TRUE(std::signbit(ccnuma::par::reduce(szeros.begin(), szeros.end(), -0.0)));
    // An empty range is init itself.
    EXPECT_TRUE(std::signbit(ccnuma::reduce(zeros.begin(), zeros.begin(), -0.0)));
}

namespace {
struct money {
    long long cents = 0;
    friend money operator+(const money& a, const money& b) { return {a.cents + b.cents}; }
};
}  // namespace

// What is not a plain sum keeps std::reduce: a user type, another op, an init of another type.
TEST(Reduce, OtherThanPlainSumFallsBack) {
    std::vector<money> m(67);
    for (std::size_t i = 0; i < m.size(); ++i) m[i].cents = static_cast<long long>(i);
    EXPECT_EQ(ccnuma::reduce(m.begin(), m.end()).cents, 66 * 67 / 2);
    const ccnuma::seg_array<money> sm(m.begin(), m.end(), ccnuma::seg::count(4));
    EXPECT_EQ(ccnuma::par::reduce(sm.begin(), sm.end()).cents, 66 * 67 / 2);

    const std::vector<double> x{1.5, 2.5, 3.5};
    // An int init rounds every step, as std::reduce's op(int, double) does.
    EXPECT_EQ(ccnuma::reduce(x.begin(), x.end(), 0), std::reduce(x.begin(), x.end(), 0));
    EXPECT_EQ(ccnuma::reduce(x.begin(), x.end(), 1.0, std::multiplies<>{}), 1.5 * 2.5 * 3.5);
    const std::vector<int> small{100, 27, 1};
    EXPECT_EQ(ccnuma::reduce(small.begin(), small.end()), 128);
}
