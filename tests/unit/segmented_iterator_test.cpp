// ccnuma::segmented_iterator and ccnuma::segment_iterator (segmented_iterator.hpp) over
// detail::segment_layout, with padding between the segments as seg_array leaves it: every
// position, step, jump, distance and comparison, and std:: algorithms over the flat range,
// against a std::vector holding the same elements. The padding must never be read or written.

#include <ccnuma/segmented_iterator.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

namespace {

static_assert(std::random_access_iterator<ccnuma::segmented_iterator<int>>);
static_assert(std::random_access_iterator<ccnuma::segmented_iterator<const int>>);
static_assert(std::sentinel_for<ccnuma::segment_iterator<int>, ccnuma::segment_iterator<int>>);

constexpr int padding = -7777;

// n ints in `parts` segments of the static partition with chunk `chunk` (parts is the chunk
// count when chunk != 0), each segment in a slot of the widest segment plus `pad` ints, the
// padding filled with a sentinel. The element at flat index i holds i.
struct padded_segments {
    padded_segments(std::size_t n, std::size_t parts, std::size_t chunk, std::size_t pad) {
        layout.split(n, parts, chunk);
        // The oracle's partition, written out rather than taken from the library: schedule(static)
        // gives the first n % parts segments one element more; schedule(static, c) c each.
        for (std::size_t s = 0; s <= parts; ++s)
            offsets.push_back(chunk != 0 ? std::min(n, s * chunk)
                                         : s * (n / parts) + std::min(s, n % parts));
        std::size_t widest = 0;
        for (std::size_t s = 0; s < parts; ++s) widest = std::max(widest, offsets[s + 1] - offsets[s]);
        slot = widest + pad;
        storage.assign(parts * slot, padding);
        layout.base = storage.data();
        layout.stride = slot * sizeof(int);
        layout.packed = false;
        for (std::size_t s = 0; s < parts; ++s)
            for (std::size_t i = offsets[s]; i < offsets[s + 1]; ++i)
                storage[s * slot + (i - offsets[s])] = static_cast<int>(i);
    }
    ccnuma::segmented_iterator<int> at(std::size_t i) { return ccnuma::detail::segment_access::at<int>(layout, i); }
    ccnuma::segmented_iterator<int> begin() { return at(0); }
    ccnuma::segmented_iterator<int> end() { return at(layout.n); }
    // The padding still holds the sentinel everywhere.
    bool padding_intact() const {
        for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
            for (std::size_t k = offsets[s + 1] - offsets[s]; k < slot; ++k)
                if (storage[s * slot + k] != padding) return false;
        return true;
    }
    // The flat elements, in order, read through the raw slots.
    std::vector<int> flat() const {
        std::vector<int> v;
        for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
            for (std::size_t k = 0; k < offsets[s + 1] - offsets[s]; ++k) v.push_back(storage[s * slot + k]);
        return v;
    }

    ccnuma::detail::segment_layout<int> layout;
    std::vector<std::size_t> offsets;
    std::size_t slot = 0;
    std::vector<int> storage;
};

struct shape {
    std::size_t n, parts, chunk, pad;
    std::string name() const {
        return std::to_string(n) + " in " + std::to_string(parts) + " chunk " + std::to_string(chunk) + " pad " +
               std::to_string(pad);
    }
};

// Segments fewer, as many and more than the elements (empty ones), even and uneven, with and
// without padding, and one chunk per segment with a short last one.
std::vector<shape> shapes() {
    std::vector<shape> v;
    for (std::size_t n : {1u, 2u, 5u, 17u, 64u, 101u})
        for (std::size_t parts : {1u, 3u, 4u, 7u})
            for (std::size_t pad : {0u, 3u}) v.push_back({n, parts, 0, pad});
    for (std::size_t n : {1u, 5u, 17u, 64u, 101u})
        for (std::size_t chunk : {1u, 3u, 16u}) v.push_back({n, (n + chunk - 1) / chunk, chunk, 5});
    return v;
}

TEST(SegmentLayout, OffsetsAreTheStaticPartition) {
    for (const auto& sh : shapes()) {
        SCOPED_TRACE(sh.name());
        padded_segments a(sh.n, sh.parts, sh.chunk, sh.pad);
        for (std::size_t s = 0; s <= sh.parts; ++s) {
            EXPECT_EQ(a.layout.offset(s), a.offsets[s]) << "segment " << s;
            if (s < sh.parts) {
                EXPECT_EQ(a.layout.size(s), a.offsets[s + 1] - a.offsets[s]) << "segment " << s;
                EXPECT_EQ(a.layout.begin(s), a.storage.data() + s * a.slot) << "segment " << s;
            }
        }
        for (std::size_t i = 0; i < sh.n; ++i) {
            const std::size_t s = a.layout.segment_of(i);
            EXPECT_TRUE(a.offsets[s] <= i && i < a.offsets[s + 1]) << "element " << i << " in segment " << s;
        }
    }
}

TEST(SegmentedIterator, StepsAndJumpsAcrossSegmentBoundaries) {
    for (const auto& sh : shapes()) {
        SCOPED_TRACE(sh.name());
        padded_segments a(sh.n, sh.parts, sh.chunk, sh.pad);
        std::vector<int> oracle(sh.n);
        std::iota(oracle.begin(), oracle.end(), 0);
        const auto b = a.begin();
        const auto e = a.end();
        ASSERT_EQ(e - b, static_cast<std::ptrdiff_t>(sh.n));
        ASSERT_EQ(std::distance(b, e), static_cast<std::ptrdiff_t>(sh.n));
        // ++ and -- visit every element once, in order, skipping padding and empty segments.
        std::vector<int> forward;
        for (auto it = b; it != e; ++it) forward.push_back(*it);
        EXPECT_EQ(forward, oracle);
        std::vector<int> backward;
        for (auto it = e; it != b;) backward.push_back(*--it);
        std::reverse(backward.begin(), backward.end());
        EXPECT_EQ(backward, oracle);
        // Random access: from every position to every other one, forward and back.
        for (std::size_t i = 0; i <= sh.n; ++i) {
            const auto it = b + static_cast<std::ptrdiff_t>(i);
            ASSERT_TRUE(it == a.at(i)) << i;
            ASSERT_EQ(it - b, static_cast<std::ptrdiff_t>(i));
            ASSERT_EQ(e - it, static_cast<std::ptrdiff_t>(sh.n - i));
            if (i < sh.n) {
                ASSERT_EQ(*it, oracle[i]) << i;
                ASSERT_EQ(b[static_cast<std::ptrdiff_t>(i)], oracle[i]) << i;
            }
            for (std::size_t j = 0; j <= sh.n; j += 1 + sh.n / 13) {
                const auto d = static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i);
                auto moved = it;
                moved += d;
                ASSERT_TRUE(moved == a.at(j)) << i << " + " << d;
                ASSERT_EQ(moved - it, d) << i << " to " << j;
                ASSERT_TRUE(a.at(j) - d == it) << j << " - " << d;
                ASSERT_EQ(i < j, it < moved) << i << " < " << j;
                ASSERT_EQ(i == j, it == moved) << i << " == " << j;
                ASSERT_EQ(i >= j, it >= moved) << i << " >= " << j;
            }
        }
        EXPECT_TRUE(a.padding_intact());
    }
}

TEST(SegmentedIterator, StdAlgorithmsMatchAPlainVector) {
    for (const auto& sh : shapes()) {
        SCOPED_TRACE(sh.name());
        padded_segments a(sh.n, sh.parts, sh.chunk, sh.pad);
        std::vector<int> oracle(sh.n);
        std::iota(oracle.begin(), oracle.end(), 0);

        std::reverse(a.begin(), a.end());
        std::reverse(oracle.begin(), oracle.end());
        EXPECT_EQ(a.flat(), oracle);
        std::transform(a.begin(), a.end(), a.begin(), [](int x) { return (x * 37) % 11; });
        std::transform(oracle.begin(), oracle.end(), oracle.begin(), [](int x) { return (x * 37) % 11; });
        EXPECT_EQ(a.flat(), oracle);
        std::sort(a.begin(), a.end());
        std::sort(oracle.begin(), oracle.end());
        EXPECT_EQ(a.flat(), oracle);
        EXPECT_EQ(std::lower_bound(a.begin(), a.end(), 5) - a.begin(),
                  std::lower_bound(oracle.begin(), oracle.end(), 5) - oracle.begin());
        EXPECT_EQ(std::accumulate(a.begin(), a.end(), 0L), std::accumulate(oracle.begin(), oracle.end(), 0L));
        EXPECT_EQ(std::count(a.begin(), a.end(), 3), std::count(oracle.begin(), oracle.end(), 3));
        std::rotate(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(sh.n / 3), a.end());
        std::rotate(oracle.begin(), oracle.begin() + static_cast<std::ptrdiff_t>(sh.n / 3), oracle.end());
        EXPECT_EQ(std::vector<int>(a.begin(), a.end()), oracle);
        // Through the const iterator, converted from the mutable one.
        const ccnuma::segmented_iterator<const int> cb = a.begin(), ce = a.end();
        EXPECT_TRUE(std::equal(cb, ce, oracle.begin(), oracle.end()));
        EXPECT_EQ(std::max_element(cb, ce) - cb, std::max_element(oracle.begin(), oracle.end()) - oracle.begin());
        EXPECT_TRUE(a.padding_intact());
    }
}

TEST(SegmentIterator, RunsOverTheSegmentsAndComposesBack) {
    using tr = ccnuma::segmented_iterator_traits<ccnuma::segmented_iterator<int>>;
    for (const auto& sh : shapes()) {
        SCOPED_TRACE(sh.name());
        padded_segments a(sh.n, sh.parts, sh.chunk, sh.pad);
        const ccnuma::segment_iterator<int> first(&a.layout, 0), last(&a.layout, sh.parts);
        ASSERT_EQ(last - first, static_cast<std::ptrdiff_t>(sh.parts));
        std::size_t s = 0;
        for (auto it = first; it != last; ++it, ++s) {
            EXPECT_EQ(it.index(), s);
            EXPECT_EQ((*it).size(), a.offsets[s + 1] - a.offsets[s]);
            EXPECT_EQ(it.begin(), a.storage.data() + s * a.slot);
            EXPECT_EQ(first[static_cast<std::ptrdiff_t>(s)].data(), it.begin());
            EXPECT_TRUE((first < it) == (s > 0));
            // The flat position of every element of the segment, and back.
            for (std::size_t k = 0; k < it.size(); ++k) {
                const auto flat = tr::compose(it, it.begin() + k);
                ASSERT_TRUE(flat == a.at(a.offsets[s] + k)) << "segment " << s << " element " << k;
                ASSERT_EQ(tr::local(flat), it.begin() + k);
                ASSERT_EQ(tr::index(tr::segment(flat)), s);
            }
        }
    }
}

}  // namespace
