#pragma once
/// @file
/// ccnuma's segmented iterators: ccnuma::segmented_iterator<V>, the flat random-access iterator
/// of a segmented range (seg_array, ccnuma::segments(v)), and ccnuma::segment_iterator<V>, which
/// runs over its segments. Both model the protocol of segmented_iterator_traits.hpp, ownership
/// included, so every algorithm of algorithm.hpp takes them.
///
///     ccnuma::seg_array<double> a(n);
///     ccnuma::segmented_iterator<double> it = a.begin() + 5;        // flat: std::sort works
///     for (auto s = a.segment_begin(); s != a.segment_end(); ++s)   // segments
///         for (double& x : *s) x = 0;                               // raw memory
///     using tr = ccnuma::segmented_iterator_traits<decltype(it)>;
///     std::size_t owner_segment = tr::index(tr::segment(it));
///
/// Segment s holds the elements [offset(s), offset(s + 1)) of the flat order, as the static
/// partition of detail/parallel.hpp (static_ranges) splits them.

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/schedule.hpp>
#include <ccnuma/segmented_iterator_traits.hpp>

#include <algorithm>
#include <compare>
#include <cstddef>
#include <iterator>
#include <span>
#include <type_traits>

namespace ccnuma {

namespace detail {

/// Where the segments of a segmented range are. Segment s holds the elements
/// [offset(s), offset(s + 1)) at begin(s): part s of the static partition of n elements into
/// `segments` parts (chunk 0: q + 1 elements for s < r and q after, as schedule(static) splits
/// them; chunk c: c each but the last, one chunk of schedule(static, c) a segment).
template <class T>
struct segment_layout {
    T* base = nullptr;
    std::size_t n = 0;
    std::size_t segments = 0;
    std::size_t chunk = 0;
    /// The parts' sizes, kept for segment_of (no division per element access): q = n / segments
    /// and r = n % segments for chunk 0, q = chunk and r = 0 otherwise.
    std::size_t q = 0;
    std::size_t r = 0;
    /// Bytes from one segment's start to the next. Uniform, so that begin(s) is one multiply
    /// and the placement can treat each segment as one element of `stride` bytes.
    std::size_t stride = 0;
    /// The segments follow each other with no gap (a contiguous array's chunks); stride unused.
    bool packed = false;
    /// Segment s runs on the thread that for_static(segments, owners.chunk) in a team of
    /// owners.threads threads gives it to.
    ccnuma::schedule owners{};
    /// A contiguous array split by a partition (partition.hpp): segment s is its part s, of
    /// any length; empty for the static partitions above.
    ccnuma::partition by{};

    /// n elements in `parts` segments of the static partition with chunk `c`.
    void split(std::size_t elements, std::size_t parts, std::size_t c) noexcept {
        n = elements;
        segments = parts;
        chunk = c;
        q = c != 0 ? c : elements / parts;
        r = c != 0 ? 0 : elements % parts;
    }
    std::size_t offset(std::size_t s) const noexcept {
        // The library's one static partition: segment s is what thread s of `segments` gets,
        // from q and r without a division (static_ranges' formulas; every iterator step across
        // a segment and every par:: call asks for several offsets).
        if (s >= segments) return n;
        if (!by.empty()) return by.range(static_cast<unsigned>(s)).first;
        return chunk != 0 ? std::min(n, s * chunk) : balanced_begin(q, r, s);
    }
    std::size_t size(std::size_t s) const noexcept { return offset(s + 1) - offset(s); }
    T* begin(std::size_t s) const noexcept {
        if (packed) return base + offset(s);
        return reinterpret_cast<T*>(reinterpret_cast<char*>(base) + s * stride);
    }
    T* end(std::size_t s) const noexcept { return begin(s) + size(s); }
    /// The segment of element i < n: static_owner's formula over `segments` parts, with q and r
    /// kept.
    std::size_t segment_of(std::size_t i) const noexcept {
        return by.empty() ? balanced_part(q, r, i) : by.owner(i);
    }
};

/// The layout of a contiguous array of n elements split as `s` splits it: schedule(static)
/// gives one segment per thread (q + 1 elements to the first n % threads), schedule(static, c)
/// one segment per chunk of c, the chunks dealt round-robin to the threads; a partition one
/// segment per part.
template <class T>
segment_layout<T> chunks_of(T* data, std::size_t n, const ccnuma::schedule& s) {
    segment_layout<T> l;
    l.base = data;
    l.packed = true;
    const auto threads = static_cast<std::size_t>(detail::team_size(s));
    if (!s.partition.empty()) {
        check_covers(s, n, "a segmented view");
        l.split(n, threads, 0);
        l.by = s.partition;
        l.owners = {0, static_cast<unsigned>(threads)};
    } else if (s.chunk == 0) {
        l.split(n, threads, 0);
        l.owners = {0, static_cast<unsigned>(threads)};
    } else {
        l.split(n, n / s.chunk + (n % s.chunk != 0 ? 1 : 0), s.chunk);
        l.owners = {1, static_cast<unsigned>(threads)};
    }
    return l;
}

struct segment_access;

/// The operators of a random-access iterator that follow from its ++, --, += and a - b, written
/// once for both iterators below (the derived class brings in the postfix ones with `using`).
template <class It>
struct random_access_ops {
    It operator++(int) noexcept {
        It old = self();
        ++self();
        return old;
    }
    It operator--(int) noexcept {
        It old = self();
        --self();
        return old;
    }
    It& operator-=(std::ptrdiff_t k) noexcept { return self() += -k; }
    friend It operator+(It it, std::ptrdiff_t k) noexcept { return it += k; }
    friend It operator+(std::ptrdiff_t k, It it) noexcept { return it += k; }
    friend It operator-(It it, std::ptrdiff_t k) noexcept { return it -= k; }

private:
    It& self() noexcept { return static_cast<It&>(*this); }
};

}  // namespace detail

template <class V>
class segment_iterator;

/// The flat iterator of a segmented range: random access over the elements in order, skipping
/// the padding between segments. It holds the segment number and a raw pointer; ++ tests for
/// the segment's end, += and - compute through the layout. Valid for every <algorithm>.
template <class V>
class segmented_iterator : public detail::random_access_ops<segmented_iterator<V>> {
    using layout_type = detail::segment_layout<std::remove_const_t<V>>;

public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::remove_const_t<V>;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;

    segmented_iterator() = default;
    /// iterator to const_iterator.
    template <class W>
        requires std::is_same_v<const W, V> && (!std::is_same_v<W, V>)
    segmented_iterator(const segmented_iterator<W>& other) noexcept  // NOLINT: implicit, like T* to const T*
        : layout_(other.layout_), seg_(other.seg_), p_(other.p_), end_(other.end_) {}

    reference operator*() const noexcept { return *p_; }
    pointer operator->() const noexcept { return p_; }
    reference operator[](difference_type k) const noexcept { return *(*this + k); }

    using detail::random_access_ops<segmented_iterator>::operator++;
    using detail::random_access_ops<segmented_iterator>::operator--;
    using detail::random_access_ops<segmented_iterator>::operator-=;

    segmented_iterator& operator++() noexcept {
        if (++p_ == end_) next_segment();
        return *this;
    }
    segmented_iterator& operator--() noexcept {
        if (p_ == layout_->begin(seg_)) *this = at(*layout_, index() - 1);
        else --p_;
        return *this;
    }
    segmented_iterator& operator+=(difference_type k) noexcept {
        // Within the segment: a pointer step. Across: through the global index.
        if (k >= 0 ? k < end_ - p_ : -k <= p_ - layout_->begin(seg_)) p_ += k;
        else if (k != 0) *this = at(*layout_, index() + static_cast<std::size_t>(k));
        return *this;
    }
    friend difference_type operator-(const segmented_iterator& a, const segmented_iterator& b) noexcept {
        if (a.seg_ == b.seg_) return a.p_ - b.p_;
        return static_cast<difference_type>(a.index() - b.index());
    }
    // Positions are canonical (never the end of a segment but the last) and segments lie in
    // increasing address order, so the pointer alone orders iterators.
    friend bool operator==(const segmented_iterator& a, const segmented_iterator& b) noexcept { return a.p_ == b.p_; }
    friend std::strong_ordering operator<=>(const segmented_iterator& a, const segmented_iterator& b) noexcept {
        return std::compare_three_way{}(a.p_, b.p_);
    }

private:
    template <class>
    friend class segmented_iterator;
    friend struct detail::segment_access;

    segmented_iterator(const layout_type* l, std::size_t s, V* p) noexcept
        : layout_(l), seg_(s), p_(p), end_(l->end(s)) {
        if (p_ == end_) next_segment();
    }
    /// The iterator at element i (i == n: the end, in the segment after the last).
    static segmented_iterator at(const layout_type& l, std::size_t i) noexcept {
        if (i >= l.n) return {&l, l.segments, l.begin(l.segments)};
        // Every begin(): no division for segment_of (a par:: call over a few KB felt each one).
        if (i == 0) return {&l, 0, l.begin(0)};
        const std::size_t s = l.segment_of(i);
        return {&l, s, l.begin(s) + (i - l.offset(s))};
    }
    std::size_t index() const noexcept {
        return layout_->offset(seg_) + static_cast<std::size_t>(p_ - layout_->begin(seg_));
    }
    void next_segment() noexcept {
        // Empty segments (fewer elements than segments) are skipped; the end is the start of
        // the segment after the last.
        while (p_ == end_ && seg_ < layout_->segments) {
            ++seg_;
            p_ = layout_->begin(seg_);
            end_ = p_ + layout_->size(seg_);
        }
    }

    const layout_type* layout_ = nullptr;
    std::size_t seg_ = 0;
    V* p_ = nullptr;
    V* end_ = nullptr;
};

/// Runs over the segments of a segmented range. `*it` is the segment as a std::span; begin()
/// and end() are its raw local range.
template <class V>
class segment_iterator : public detail::random_access_ops<segment_iterator<V>> {
    using layout_type = detail::segment_layout<std::remove_const_t<V>>;

public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // *it is a span by value
    using value_type = std::span<V>;
    using reference = std::span<V>;
    using difference_type = std::ptrdiff_t;

    segment_iterator() = default;
    segment_iterator(const layout_type* l, std::size_t s) noexcept : layout_(l), seg_(s) {}
    template <class W>
        requires std::is_same_v<const W, V> && (!std::is_same_v<W, V>)
    segment_iterator(const segment_iterator<W>& other) noexcept  // NOLINT: implicit, like T* to const T*
        : layout_(other.layout_), seg_(other.seg_) {}

    std::span<V> operator*() const noexcept { return {begin(), layout_->size(seg_)}; }
    std::span<V> operator[](difference_type k) const noexcept { return *(*this + k); }
    /// The segment's raw range.
    V* begin() const noexcept { return layout_->begin(seg_); }
    V* end() const noexcept { return layout_->end(seg_); }
    std::size_t size() const noexcept { return layout_->size(seg_); }
    /// The segment's number.
    std::size_t index() const noexcept { return seg_; }

    using detail::random_access_ops<segment_iterator>::operator++;
    using detail::random_access_ops<segment_iterator>::operator--;
    using detail::random_access_ops<segment_iterator>::operator-=;

    segment_iterator& operator++() noexcept {
        ++seg_;
        return *this;
    }
    segment_iterator& operator--() noexcept {
        --seg_;
        return *this;
    }
    segment_iterator& operator+=(difference_type k) noexcept {
        seg_ += static_cast<std::size_t>(k);
        return *this;
    }
    friend difference_type operator-(const segment_iterator& a, const segment_iterator& b) noexcept {
        return static_cast<difference_type>(a.seg_) - static_cast<difference_type>(b.seg_);
    }
    friend bool operator==(const segment_iterator& a, const segment_iterator& b) noexcept { return a.seg_ == b.seg_; }
    friend std::strong_ordering operator<=>(const segment_iterator& a, const segment_iterator& b) noexcept {
        return a.seg_ <=> b.seg_;
    }

private:
    template <class>
    friend class segment_iterator;
    friend struct detail::segment_access;

    const layout_type* layout_ = nullptr;
    std::size_t seg_ = 0;
};

/// ccnuma's segmented iterators model the protocol of segmented_iterator_traits.hpp, ownership
/// included: segment s belongs to the thread that the layout's owner schedule gives it to.
template <class V>
struct segmented_iterator_traits<segmented_iterator<V>> {
    using is_segmented_iterator = std::true_type;
    static constexpr bool is_segmented = true;
    using iterator = segmented_iterator<V>;
    using segment_iterator = ccnuma::segment_iterator<V>;
    using local_iterator = V*;

    static segment_iterator segment(const iterator& it) noexcept;
    static local_iterator local(const iterator& it) noexcept;
    static local_iterator begin(const segment_iterator& s) noexcept { return s.begin(); }
    static local_iterator end(const segment_iterator& s) noexcept { return s.end(); }
    /// The flat iterator at `l` in segment `s` (the end of a segment is the start of the next).
    static iterator compose(const segment_iterator& s, local_iterator l) noexcept;
    static std::size_t index(const segment_iterator& s) noexcept { return s.index(); }
    static segment_owners owners(const segment_iterator& s) noexcept;
};

namespace detail {

/// How the containers and the traits make positions: the iterators' constructors are private.
struct segment_access {
    template <class V>
    static segmented_iterator<V> at(const segment_layout<std::remove_const_t<V>>& l, std::size_t i) noexcept {
        return segmented_iterator<V>::at(l, i);
    }
    template <class V>
    static segmented_iterator<V> make(const segment_layout<std::remove_const_t<V>>* l, std::size_t s, V* p) noexcept {
        return {l, s, p};
    }
    template <class V>
    static ccnuma::segment_iterator<V> segment(const segmented_iterator<V>& it) noexcept {
        return {it.layout_, it.seg_};
    }
    template <class V>
    static const segment_layout<std::remove_const_t<V>>* layout(const ccnuma::segment_iterator<V>& s) noexcept {
        return s.layout_;
    }
    template <class V>
    static const segment_layout<std::remove_const_t<V>>* layout(const segmented_iterator<V>& it) noexcept {
        return it.layout_;
    }
    /// The flat position of `it` in its layout (the end: n).
    template <class V>
    static std::size_t position(const segmented_iterator<V>& it) noexcept {
        return it.index();
    }
};

/// Whether It is ccnuma's own flat iterator, whose layout par:: reads directly (par_parts).
template <class It>
inline constexpr bool layout_iterator = false;
template <class V>
inline constexpr bool layout_iterator<segmented_iterator<V>> = true;

}  // namespace detail

template <class V>
auto segmented_iterator_traits<segmented_iterator<V>>::segment(const iterator& it) noexcept -> segment_iterator {
    return detail::segment_access::segment(it);
}
template <class V>
auto segmented_iterator_traits<segmented_iterator<V>>::local(const iterator& it) noexcept -> local_iterator {
    return it.operator->();
}
template <class V>
auto segmented_iterator_traits<segmented_iterator<V>>::compose(const segment_iterator& s, local_iterator l) noexcept
    -> iterator {
    return detail::segment_access::make<V>(detail::segment_access::layout(s), s.index(), l);
}
template <class V>
segment_owners segmented_iterator_traits<segmented_iterator<V>>::owners(const segment_iterator& s) noexcept {
    const auto& l = *detail::segment_access::layout(s);
    return {l.segments, l.owners};
}


}  // namespace ccnuma
