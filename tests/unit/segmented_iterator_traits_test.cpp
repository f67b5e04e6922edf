// The segmented-iterator protocol on an iterator that is not ccnuma's: blocks of a
// std::vector<std::vector<int>>, owned round-robin by the threads. Every algorithm of
// algorithm.hpp, sequential and par::, takes it through the traits alone, with the same result
// as std:: on the flat data, alone and together with a seg_array of another segmentation; par::
// runs each block on the thread that its owners() name.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/segmented_iterator_traits.hpp>

#include "../support/static_owners.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <compare>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace other {

/// n ints in blocks of `width`, the last one shorter; an empty block after the last ends the range.
struct blocks {
    std::vector<std::vector<int>> data;
    std::size_t width = 1;
    std::size_t n = 0;
    unsigned threads = 1;
    std::size_t hidden = 0;  // blocks that owners() leaves out of its count: a traits defect
    std::size_t skip = 0;    // added to index() from the second block on: a numbering defect

    blocks(std::size_t count, std::size_t block_width, unsigned team) : width(block_width), n(count), threads(team) {
        for (std::size_t i = 0; i < n; i += width) data.emplace_back(std::min(width, n - i), 0);
        data.emplace_back();
    }
    std::size_t block_count() const noexcept { return data.size() - 1; }
};

struct block_iterator {
    blocks* c = nullptr;
    std::size_t k = 0;
    block_iterator& operator++() noexcept {
        ++k;
        return *this;
    }
    friend bool operator==(const block_iterator&, const block_iterator&) = default;
};

/// A flat random-access iterator: an index into the blocks.
class iterator {
public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using reference = int&;
    using pointer = int*;

    iterator() = default;
    iterator(blocks* c, std::size_t i) noexcept : c_(c), i_(i) {}

    int& operator*() const noexcept { return c_->data[i_ / c_->width][i_ % c_->width]; }
    int& operator[](difference_type k) const noexcept { return *(*this + k); }
    iterator& operator++() noexcept { return *this += 1; }
    iterator operator++(int) noexcept {
        auto old = *this;
        ++*this;
        return old;
    }
    iterator& operator--() noexcept { return *this -= 1; }
    iterator operator--(int) noexcept {
        auto old = *this;
        --*this;
        return old;
    }
    iterator& operator+=(difference_type k) noexcept {
        i_ = static_cast<std::size_t>(static_cast<difference_type>(i_) + k);
        return *this;
    }
    iterator& operator-=(difference_type k) noexcept { return *this += -k; }
    friend iterator operator+(iterator it, difference_type k) noexcept { return it += k; }
    friend iterator operator+(difference_type k, iterator it) noexcept { return it += k; }
    friend iterator operator-(iterator it, difference_type k) noexcept { return it -= k; }
    friend difference_type operator-(const iterator& a, const iterator& b) noexcept {
        return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }
    friend std::strong_ordering operator<=>(const iterator& a, const iterator& b) noexcept { return a.i_ <=> b.i_; }

    blocks* container() const noexcept { return c_; }
    std::size_t index() const noexcept { return i_; }

private:
    blocks* c_ = nullptr;
    std::size_t i_ = 0;
};

iterator begin(blocks& b) { return {&b, 0}; }
iterator end(blocks& b) { return {&b, b.n}; }

}  // namespace other

template <>
struct ccnuma::segmented_iterator_traits<other::iterator> {
    static constexpr bool is_segmented = true;
    using iterator = other::iterator;
    using segment_iterator = other::block_iterator;
    using local_iterator = int*;

    static segment_iterator segment(const iterator& it) noexcept { return {it.container(), it.index() / it.container()->width}; }
    static local_iterator local(const iterator& it) noexcept {
        return begin(segment(it)) + it.index() % it.container()->width;
    }
    static local_iterator begin(const segment_iterator& s) noexcept { return s.c->data[s.k].data(); }
    static local_iterator end(const segment_iterator& s) noexcept { return begin(s) + s.c->data[s.k].size(); }
    static iterator compose(const segment_iterator& s, local_iterator l) noexcept {
        return {s.c, s.k * s.c->width + static_cast<std::size_t>(l - begin(s))};
    }
    static std::size_t index(const segment_iterator& s) noexcept { return s.k == 0 ? 0 : s.k + s.c->skip; }
    /// Block k on thread k % threads: schedule(static, 1).
    static ccnuma::segment_owners owners(const segment_iterator& s) noexcept {
        return {s.c->block_count() + s.c->skip - s.c->hidden, ccnuma::schedule{1, s.c->threads}};
    }
};

namespace {

static_assert(std::random_access_iterator<other::iterator>);
static_assert(ccnuma::segmented<other::iterator>);
static_assert(ccnuma::owned_segmented<other::iterator>);
static_assert(ccnuma::owned_segmented<ccnuma::seg_array<int>::iterator>);
// ccnuma's own traits and iterators cannot throw, so a par:: reduction of a nothrow fold over
// them runs without an exception wrapper in its region (algorithm.hpp, nothrow_walk).
static_assert(ccnuma::detail::nothrow_walk<ccnuma::seg_array<double>::const_iterator>());
static_assert(ccnuma::detail::nothrow_walk<ccnuma::seg_array<int>::iterator>());
static_assert(!ccnuma::segmented<int*>);

int value_at(std::size_t i) { return static_cast<int>((i * 7919) % 10007) - 5000; }

TEST(ForeignSegmentedIterator, EveryAlgorithmMatchesStd) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{10007}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        other::blocks b(n, 333, 3);
        ccnuma::par::transform(begin(b), end(b), begin(b), [](int) { return 0; });
        std::size_t i = 0;
        ccnuma::for_each(begin(b), end(b), [&i](int& x) { x = value_at(i++); });
        std::vector<int> ref(n);
        for (std::size_t k = 0; k < n; ++k) ref[k] = value_at(k);
        ASSERT_TRUE(std::equal(ref.begin(), ref.end(), begin(b)));

        EXPECT_EQ(ccnuma::reduce(begin(b), end(b), 0LL), std::reduce(ref.begin(), ref.end(), 0LL));
        EXPECT_EQ(ccnuma::par::reduce(begin(b), end(b), 0LL), std::reduce(ref.begin(), ref.end(), 0LL));
        EXPECT_EQ(ccnuma::par::accumulate(begin(b), end(b), 0LL), std::accumulate(ref.begin(), ref.end(), 0LL));
        auto neg = [](int x) { return x < 0; };
        EXPECT_EQ(ccnuma::count_if(begin(b), end(b), neg), std::count_if(ref.begin(), ref.end(), neg));
        EXPECT_EQ(ccnuma::par::count_if(begin(b), end(b), neg), std::count_if(ref.begin(), ref.end(), neg));
        auto big = [](int x) { return x > 4990; };
        const auto found = std::find_if(ref.begin(), ref.end(), big) - ref.begin();
        EXPECT_EQ(ccnuma::find_if(begin(b), end(b), big) - begin(b), found);
        EXPECT_EQ(ccnuma::par::find_if(begin(b), end(b), big) - begin(b), found);
        const auto lo = std::min_element(ref.begin(), ref.end()) - ref.begin();
        const auto hi = std::max_element(ref.begin(), ref.end()) - ref.begin();
        EXPECT_EQ(ccnuma::min_element(begin(b), end(b)) - begin(b), lo);
        EXPECT_EQ(ccnuma::max_element(begin(b), end(b)) - begin(b), hi);
        EXPECT_EQ(ccnuma::par::min_element(begin(b), end(b)) - begin(b), lo);
        EXPECT_EQ(ccnuma::par::max_element(begin(b), end(b)) - begin(b), hi);

        // Together with a seg_array of another segmentation: the pieces are cut where either
        // changes segment.
        ccnuma::seg_array<int> a(n, 0, ccnuma::seg::count(4), ccnuma::pad::none);
        EXPECT_EQ(ccnuma::copy(begin(b), end(b), a.begin()), a.end());
        EXPECT_TRUE(ccnuma::equal(a.begin(), a.end(), begin(b)));
        EXPECT_TRUE(ccnuma::par::equal(begin(b), end(b), a.begin()));
        EXPECT_EQ(ccnuma::par::inner_product(begin(b), end(b), a.begin(), 0LL),
                  std::inner_product(ref.begin(), ref.end(), ref.begin(), 0LL));
        ccnuma::par::transform(a.begin(), a.end(), begin(b), begin(b), std::plus<>{});
        for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(*(begin(b) + static_cast<std::ptrdiff_t>(k)), 2 * ref[k]) << k;
        ccnuma::par::fill(begin(b), end(b), 7);
        EXPECT_EQ(ccnuma::par::copy(begin(b), end(b), a.begin()), a.end());
        EXPECT_EQ(std::count(a.begin(), a.end(), 7), static_cast<std::ptrdiff_t>(n));
    }
}

TEST(ForeignSegmentedIterator, ParRunsEachBlockOnTheThreadItsOwnersName) {
    for (unsigned threads : {1u, 2u, 3u}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        other::blocks b(5000, 256, threads);
        const auto owner = test_support::static_owners(b.block_count(), threads, 1);
        ccnuma::par::for_each(begin(b), end(b), [](int& x) { x = omp_get_thread_num(); });
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < b.block_count(); ++k)
            for (int t : b.data[k]) wrong += t != owner[k];
        EXPECT_EQ(wrong, 0u);
        // A subrange that starts and ends inside blocks.
        ccnuma::par::fill(begin(b), end(b), -1);
        ccnuma::par::for_each(begin(b) + 300, end(b) - 300, [](int& x) { x = omp_get_thread_num(); });
        wrong = 0;
        for (std::size_t i = 0; i < b.n; ++i) {
            const int t = *(begin(b) + static_cast<std::ptrdiff_t>(i));
            wrong += (i < 300 || i >= b.n - 300) ? t != -1 : t != owner[i / b.width];
        }
        EXPECT_EQ(wrong, 0u);
    }
}

// par::fill over all of b must throw ccnuma::error naming each of `fragments`, before any
// thread writes: no element holds the fill's value afterwards.
void expect_fill_refused_unwritten(other::blocks& b, std::initializer_list<std::string_view> fragments) {
    constexpr int value = 7;
    try {
        ccnuma::par::fill(begin(b), end(b), value);
        ADD_FAILURE() << "par::fill ran over traits it should refuse";
    } catch (const ccnuma::error& e) {
        for (const std::string_view f : fragments) EXPECT_NE(std::string_view(e.what()).find(f), std::string_view::npos) << e.what();
    }
    std::size_t written = 0;
    for (const auto& block : b.data) written += static_cast<std::size_t>(std::count(block.begin(), block.end(), value));
    EXPECT_EQ(written, 0u);
}

// Traits whose owners() counts fewer segments than the range has would leave the last ones to
// no thread: par:: refuses them before any thread writes, where it once skipped them silently.
TEST(ForeignSegmentedIterator, OwnersThatMissASegmentAreRefused) {
    other::blocks b(5000, 256, 2);
    b.hidden = 1;
    expect_fill_refused_unwritten(b, {"ccnuma::par", "owners().segments"});
    // A subrange inside the counted blocks is fine.
    EXPECT_NO_THROW(ccnuma::par::fill(begin(b), begin(b) + 1000, 7));
    EXPECT_EQ(std::count(b.data[0].begin(), b.data[0].end(), 7), 256);
}

// Each thread steps to its segments with ++ and relies on index() counting them: traits that
// number them otherwise would have a thread do another thread's segment, or none. par:: refuses
// them before any thread writes, naming the first wrongly numbered segment.
TEST(ForeignSegmentedIterator, AnIndexThatIsNotTheSegmentsPlaceIsRefused) {
    other::blocks b(5000, 256, 2);
    b.skip = 3;
    expect_fill_refused_unwritten(b, {"segment 1 of the range whose index() is 4", "0, 1, 2, ... in order"});
    // The first block alone is numbered right.
    std::iota(b.data[0].begin(), b.data[0].end(), 1);
    EXPECT_EQ(ccnuma::par::reduce(begin(b), begin(b) + 256, 0L), 256L * 257 / 2);
}

}  // namespace
