// Store modes: names, the threshold of `automatic` and the one decision whether a write streams.
// That the containers' writes are right under every mode is vector_test's (run twice: once with
// CCNUMA_STREAMING_THRESHOLD=1, so that every automatic write there streams).

#include <ccnuma/algorithm.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/segments.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace {

using ccnuma::stores;

TEST(Stores, NamesRoundTrip) {
    for (stores s : {stores::regular, stores::streaming, stores::automatic})
        EXPECT_EQ(ccnuma::parse_stores(ccnuma::to_string(s)), s);
    EXPECT_EQ(ccnuma::to_string(stores::streaming), "streaming");
}

TEST(Stores, BadNameSaysWhatIsValid) {
    try {
        (void)ccnuma::parse_stores("nontemporal");
        FAIL() << "no exception";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
        EXPECT_STREQ(e.what(), "ccnuma: bad store mode \"nontemporal\" (expected regular, streaming or automatic)");
    }
}

TEST(Stores, ThresholdIsTheLastLevelCachesOfTheWholeSnapshot) {
    // Two packages with one 16 MiB L3 each (hwloc's synthetic default) and per-core L2s: the L3s
    // count, all of them.
    const auto two = ccnuma::topology::load({"pack:2 l3:1 l2:2 core:1 pu:1", "", false});
    EXPECT_EQ(ccnuma::detail::streaming_threshold(two, nullptr), 2u * (16u << 20));
    const auto sized = ccnuma::topology::load({"pack:4 l3:1(size=1MB) core:2 pu:1", "", false});
    EXPECT_EQ(ccnuma::detail::streaming_threshold(sized, ""), 4u * 1000000u);
    // No caches known: 0, which keeps automatic on regular stores.
    const auto bare = ccnuma::topology::load({"pack:2 core:2 pu:1", "", false});
    EXPECT_EQ(ccnuma::detail::streaming_threshold(bare, nullptr), 0u);
}

TEST(Stores, ThresholdFromTheEnvironmentWinsAndIsChecked) {
    const auto two = ccnuma::topology::load({"pack:2 l3:1 core:1 pu:1", "", false});
    EXPECT_EQ(ccnuma::detail::streaming_threshold(two, "4096"), 4096u);
    for (const char* bad : {"4k", "-1", "x", "1 ", "99999999999999999999999"}) {
        try {
            (void)ccnuma::detail::streaming_threshold(two, bad);
            ADD_FAILURE() << bad << ": no exception";
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument) << bad;
            EXPECT_NE(std::string(e.what()).find("bad CCNUMA_STREAMING_THRESHOLD="), std::string::npos) << e.what();
        }
    }
}

TEST(Stores, TheDecision) {
    const std::size_t t = ccnuma::streaming_threshold();
    EXPECT_FALSE(ccnuma::streams(stores::regular, 1u << 30, false, true));
    EXPECT_TRUE(ccnuma::streams(stores::streaming, 8, false, true));
    EXPECT_TRUE(ccnuma::streams(stores::streaming, 8, true, true)) << "asked for, even in place";
    for (stores s : {stores::regular, stores::streaming, stores::automatic})
        EXPECT_FALSE(ccnuma::streams(s, 1u << 30, false, false)) << "an element type without streaming stores";
    EXPECT_FALSE(ccnuma::streams(stores::automatic, t, false, true)) << "not above the threshold";
    EXPECT_EQ(ccnuma::streams(stores::automatic, t + 1, false, true), t != 0);
    EXPECT_FALSE(ccnuma::streams(stores::automatic, t + 1, true, true)) << "the destination is an operand";
}

// What `automatic` compares with the threshold is the bytes a write moves, its output and its
// operands, each array once: a triad a = b + c * d of n doubles moves 32 n bytes, a fill 8 n. Whether the arrays
// fit in the caches together decides whether the result can stay there (bench/store_reuse).
TEST(Stores, AutomaticWeighsTheBytesAWriteMoves) {
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    EXPECT_EQ(ccnuma::detail::moved_bytes<double>(1000, 0), 8000u);
    EXPECT_EQ(ccnuma::detail::moved_bytes<double>(1000, 24000), 32000u);
    EXPECT_EQ(ccnuma::detail::moved_bytes<double>(most / 4, 0), most) << "saturates, never wraps";
    EXPECT_EQ(ccnuma::detail::moved_bytes<char>(10, most - 5), most);

    const std::size_t n = 1000;
    ccnuma::vector<double> b(n, 1.0), c(n, 2.0), d(n, 3.0);
    ccnuma::vector<float> f(n, 1.0f);
    using ccnuma::detail::node_of;
    using ccnuma::detail::operand_bytes;
    EXPECT_EQ(operand_bytes(node_of(b + c * d)), 3 * 8 * n) << "the triad's three operands";
    EXPECT_EQ(operand_bytes(node_of(2.0 * b)), 8 * n) << "a scalar reads nothing";
    EXPECT_EQ(operand_bytes(node_of(b * b)), 8 * n) << "an array once, however often the expression names it";
    EXPECT_EQ(operand_bytes(node_of(b + c * b + sqrt(c))), 2 * 8 * n);
    EXPECT_EQ(operand_bytes(node_of(f)), 4 * n);
    // Views that overlap count what they cover together: b[0, 600) and b[400, 1000) cover b.
    const ccnuma::vector_view<const double> head(b.data(), 600), tail(b.data() + 400, 600);
    EXPECT_EQ(operand_bytes(node_of(head + tail)), 8 * n);
    const ccnuma::vector_view<const double> first(b.data(), 300), last(b.data() + 700, 300);
    EXPECT_EQ(operand_bytes(node_of(first + last)), 2 * 8 * 300) << "disjoint views of one array";

    std::vector<double> out(n), in(n);
    std::vector<float> in2(n);
    const auto fill = ccnuma::detail::choice_for<double*>(stores::automatic, out.data(), out.data() + n);
    const auto copy = ccnuma::detail::choice_for<double*, const double*>(stores::automatic, in.data(), in.data() + n);
    const auto two = ccnuma::detail::choice_for<double*, const double*, const float*>(stores::automatic, in.data(), in.data() + n);
    EXPECT_EQ(fill.bytes, 8 * n);
    EXPECT_EQ(copy.bytes, 16 * n);
    EXPECT_EQ(two.bytes, 20 * n);
    EXPECT_EQ(two.mode, stores::automatic);
    // A binary transform of one input with itself reads it once; of two arrays, both.
    std::vector<double> other(n);
    const auto same = ccnuma::detail::choice_for<double*>(stores::automatic, in.cbegin(), in.cend(), in.data());
    const auto both = ccnuma::detail::choice_for<double*>(stores::automatic, in.cbegin(), in.cend(), other.cbegin());
    const auto shifted = ccnuma::detail::choice_for<double*>(stores::automatic, in.data(), in.data() + n - 1, in.data() + 1);
    EXPECT_EQ(same.bytes, 16 * n);
    EXPECT_EQ(both.bytes, 24 * n);
    // A shifted second input of the same array, as a stencil's transform(b, b_end - 1, b + 1,
    // ...) reads it: the two cover n elements together, each counted once, as two overlapping
    // views of an expression do (above).
    EXPECT_EQ(shifted.bytes, 8 * (n - 1) + 8 * n);
    const auto apart = ccnuma::detail::choice_for<double*>(stores::automatic, in.data(), in.data() + 300, in.data() + 700);
    EXPECT_EQ(apart.bytes, 3 * 8 * 300) << "disjoint parts of one array";
    // The same over seg_array's iterators (padded segments: positions, not addresses); two
    // seg_arrays, or a seg_array and a std::vector, are two arrays.
    const ccnuma::seg_array<double> s(n, 1.0, ccnuma::seg::count(3)), t(n, 1.0, ccnuma::seg::count(3));
    const auto seg_same = ccnuma::detail::choice_for<double*>(stores::automatic, s.begin(), s.end(), s.begin());
    const auto seg_shifted = ccnuma::detail::choice_for<double*>(stores::automatic, s.begin(), s.end() - 1, s.begin() + 1);
    const auto seg_two = ccnuma::detail::choice_for<double*>(stores::automatic, s.begin(), s.end(), t.begin());
    const auto seg_and_vector = ccnuma::detail::choice_for<double*>(stores::automatic, s.begin(), s.end(), in.cbegin());
    EXPECT_EQ(seg_same.bytes, 16 * n);
    EXPECT_EQ(seg_shifted.bytes, 8 * (n - 1) + 8 * n);
    EXPECT_EQ(seg_two.bytes, 24 * n);
    EXPECT_EQ(seg_and_vector.bytes, 24 * n);
    // segments(v) has a layout of its own over v's memory: beside v's iterator, or beside a
    // second segments(v), the same first element is still the same memory, read once.
    ccnuma::vector<double> v(n, 1.0);
    auto segs = ccnuma::segments(v), segs2 = ccnuma::segments(v);
    const auto view_and_vector = ccnuma::detail::choice_for<double*>(stores::automatic, segs.begin(), segs.end(), v.begin());
    const auto two_views = ccnuma::detail::choice_for<double*>(stores::automatic, segs.begin(), segs.end(), segs2.begin());
    EXPECT_EQ(view_and_vector.bytes, 16 * n);
    EXPECT_EQ(two_views.bytes, 16 * n);
    const auto empty = ccnuma::detail::choice_for<double*>(stores::automatic, ccnuma::segmented_iterator<const double>{},
                                                           ccnuma::segmented_iterator<const double>{}, ccnuma::segmented_iterator<const double>{});
    EXPECT_EQ(empty.bytes, 0u);
}

}  // namespace
