#pragma once
/// @file
/// ccnuma::seg_array<T, Policy>: an array split into padded segments, one per thread (or per
/// NUMA node, or a given count), each placed on its owner thread's node; segmented iterators
/// and their traits (Austern, "Segmented Iterators and Hierarchical Algorithms"); and
/// ccnuma::segments(v), the same view of a ccnuma::vector's static chunks.
///
///     ccnuma::seg_array<double> a(n);                       // one segment per thread, page-padded
///     ccnuma::seg_array<double> b(n, 1.0, ccnuma::seg::per_node, ccnuma::pad::cache_line);
///     std::sort(a.begin(), a.end());                        // flat random-access iterators
///     for (auto seg = a.segment_begin(); seg != a.segment_end(); ++seg)
///         for (double& x : *seg) x *= 2;                    // nested loops over raw segments
///     ccnuma::par::for_each(a.begin(), a.end(), f);         // algorithm.hpp: segment s on thread s
///     std::printf("%s\n", a.placement().to_string().c_str());
///
/// Why segments: a thread that owns a whole, padded segment shares no page (pad::page) or
/// cache line (pad::cache_line) with any other thread, whatever the element count, and a loop
/// over one segment is a loop over raw memory. The flat iterator pays a test at every segment
/// end (the slow operator++ of the poster); the hierarchical algorithms of algorithm.hpp take
/// each segment as a raw range instead.
///
/// Owners: segment s belongs to the thread that `#pragma omp for schedule(static)` over the
/// segment indices gives it to, in a team whose size is fixed at construction (schedule()): the
/// policy's thread count if it names one, else one thread per segment for seg::per_thread and
/// seg::per_node, else omp_get_max_threads(). With the default, segment s is thread s's.

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>
// Not a forward declaration: segments(v) of a ccnuma::vector must work with this header alone.
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace ccnuma {

/// How many segments a seg_array has: one per thread of the team (seg::per_thread, the
/// default), one per NUMA node with CPUs (seg::per_node), or a count (seg::count(7)).
struct segmentation {
    enum class kind { per_thread, per_node, count };
    kind by = kind::per_thread;
    std::size_t segments = 0;  ///< for kind::count
    friend bool operator==(const segmentation&, const segmentation&) = default;
};

namespace seg {
inline constexpr segmentation per_thread{segmentation::kind::per_thread, 0};
inline constexpr segmentation per_node{segmentation::kind::per_node, 0};
/// Exactly `segments` segments (at least 1).
constexpr segmentation count(std::size_t segments) noexcept { return {segmentation::kind::count, segments}; }
}  // namespace seg

/// Where each segment starts: on a page of the policy's page size (pad::page, the default),
/// on a 2 MiB boundary (pad::huge_page, which also makes the policy use huge pages), on a
/// cache line (pad::cache_line: ccnuma::false_sharing_range, 128 bytes, for the adjacent-line
/// prefetcher), right after the previous segment (pad::none), or on a multiple of a byte count
/// (pad::bytes(256); rounded up to a multiple of alignof(T)).
struct padding {
    enum class kind { none, cache_line, page, huge_page, bytes };
    kind to = kind::page;
    std::size_t count = 0;  ///< for kind::bytes
    friend bool operator==(const padding&, const padding&) = default;
};

namespace pad {
inline constexpr padding none{padding::kind::none, 0};
inline constexpr padding cache_line{padding::kind::cache_line, 0};
inline constexpr padding page{padding::kind::page, 0};
inline constexpr padding huge_page{padding::kind::huge_page, 0};
constexpr padding bytes(std::size_t count) noexcept { return {padding::kind::bytes, count}; }
}  // namespace pad

namespace detail {

/// Where the segments of a segmented range are. Segment s holds the elements
/// [offset(s), offset(s + 1)) at begin(s): q + 1 elements for s < r and q after, as
/// schedule(static) splits them, or q each but the last for a schedule(static, q) view.
template <class T>
struct segment_layout {
    T* base = nullptr;
    std::size_t n = 0;
    std::size_t segments = 0;
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

    std::size_t offset(std::size_t s) const noexcept { return std::min(s * q + std::min(s, r), n); }
    std::size_t size(std::size_t s) const noexcept { return offset(s + 1) - offset(s); }
    T* begin(std::size_t s) const noexcept {
        if (packed) return base + offset(s);
        return reinterpret_cast<T*>(reinterpret_cast<char*>(base) + s * stride);
    }
    T* end(std::size_t s) const noexcept { return begin(s) + size(s); }
    /// The segment of element i < n.
    std::size_t segment_of(std::size_t i) const noexcept {
        const std::size_t big = r * (q + 1);
        return i < big ? i / (q + 1) : r + (i - big) / q;
    }
};

/// The layout of a contiguous array of n elements split as `s` splits it: schedule(static)
/// gives one segment per thread (q + 1 elements to the first n % threads), schedule(static, c)
/// one segment per chunk of c, the chunks dealt round-robin to the threads.
template <class T>
segment_layout<T> chunks_of(T* data, std::size_t n, const ccnuma::schedule& s) {
    segment_layout<T> l;
    l.base = data;
    l.n = n;
    l.packed = true;
    const auto threads = static_cast<std::size_t>(team_threads(s));
    if (s.chunk == 0) {
        l.segments = threads;
        l.q = n / threads;
        l.r = n % threads;
        l.owners = {0, static_cast<unsigned>(threads)};
    } else {
        l.segments = n / s.chunk + (n % s.chunk != 0 ? 1 : 0);
        l.q = s.chunk;
        l.owners = {1, static_cast<unsigned>(threads)};
    }
    return l;
}

struct segment_access;

}  // namespace detail

template <class V>
class segment_iterator;

/// The flat iterator of a segmented range: random access over the elements in order, skipping
/// the padding between segments. It holds the segment number and a raw pointer; ++ tests for
/// the segment's end, += and - compute through the layout. Valid for every <algorithm>.
template <class V>
class segmented_iterator {
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

    segmented_iterator& operator++() noexcept {
        if (++p_ == end_) next_segment();
        return *this;
    }
    segmented_iterator operator++(int) noexcept {
        auto old = *this;
        ++*this;
        return old;
    }
    segmented_iterator& operator--() noexcept {
        if (p_ == layout_->begin(seg_)) *this = at(*layout_, index() - 1);
        else --p_;
        return *this;
    }
    segmented_iterator operator--(int) noexcept {
        auto old = *this;
        --*this;
        return old;
    }
    segmented_iterator& operator+=(difference_type k) noexcept {
        // Within the segment: a pointer step. Across: through the global index.
        if (k >= 0 ? k < end_ - p_ : -k <= p_ - layout_->begin(seg_)) p_ += k;
        else if (k != 0) *this = at(*layout_, index() + static_cast<std::size_t>(k));
        return *this;
    }
    segmented_iterator& operator-=(difference_type k) noexcept { return *this += -k; }
    friend segmented_iterator operator+(segmented_iterator it, difference_type k) noexcept { return it += k; }
    friend segmented_iterator operator+(difference_type k, segmented_iterator it) noexcept { return it += k; }
    friend segmented_iterator operator-(segmented_iterator it, difference_type k) noexcept { return it -= k; }
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
class segment_iterator {
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

    segment_iterator& operator++() noexcept {
        ++seg_;
        return *this;
    }
    segment_iterator operator++(int) noexcept {
        auto old = *this;
        ++seg_;
        return old;
    }
    segment_iterator& operator--() noexcept {
        --seg_;
        return *this;
    }
    segment_iterator operator--(int) noexcept {
        auto old = *this;
        --seg_;
        return old;
    }
    segment_iterator& operator+=(difference_type k) noexcept {
        seg_ += static_cast<std::size_t>(k);
        return *this;
    }
    segment_iterator& operator-=(difference_type k) noexcept { return *this += -k; }
    friend segment_iterator operator+(segment_iterator it, difference_type k) noexcept { return it += k; }
    friend segment_iterator operator+(difference_type k, segment_iterator it) noexcept { return it += k; }
    friend segment_iterator operator-(segment_iterator it, difference_type k) noexcept { return it -= k; }
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

/// Austern's traits: for a segmented iterator, the segment it is in, its local (raw) iterator,
/// a segment's local range, and the way back. Algorithms test is_segmented and run nested
/// loops over local ranges; every other iterator gets is_segmented == false.
///
///     using tr = ccnuma::segmented_iterator_traits<decltype(first)>;
///     if constexpr (tr::is_segmented) {
///         auto s = tr::segment(first);
///         double* p = tr::local(first);          // first == tr::compose(s, p)
///         double* e = tr::end(s);                // the rest of first's segment is [p, e)
///     }
template <class It>
struct segmented_iterator_traits {
    using is_segmented_iterator = std::false_type;
    static constexpr bool is_segmented = false;
};

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
};

template <class It>
inline constexpr bool is_segmented_v = segmented_iterator_traits<It>::is_segmented;

namespace detail {

/// What the algorithms need beyond the traits: the layout behind an iterator and positions in
/// it, to give each segment to its owner thread.
struct segment_access {
    template <class V>
    static const segment_layout<std::remove_const_t<V>>& layout(const segmented_iterator<V>& it) noexcept {
        return *it.layout_;
    }
    template <class V>
    static std::size_t index(const segmented_iterator<V>& it) noexcept {
        return it.index();
    }
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
};

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

/// A segmented view of contiguous elements split into the chunks of a static schedule: what
/// ccnuma::segments(v) returns. It owns its layout (iterators point into it), so it must
/// outlive its iterators; moving it keeps them valid.
template <class V>
class segmented_view {
    using layout_type = detail::segment_layout<std::remove_const_t<V>>;

public:
    using iterator = segmented_iterator<V>;
    using segment_iterator = ccnuma::segment_iterator<V>;
    using local_iterator = V*;
    using value_type = std::remove_const_t<V>;
    using size_type = std::size_t;

    segmented_view(V* data, std::size_t n, const ccnuma::schedule& s)
        : layout_(std::make_unique<layout_type>(
              detail::chunks_of(const_cast<std::remove_const_t<V>*>(data), n, s))) {}

    iterator begin() const noexcept { return detail::segment_access::at<V>(*layout_, 0); }
    iterator end() const noexcept { return detail::segment_access::at<V>(*layout_, layout_->n); }
    segment_iterator segment_begin() const noexcept { return {layout_.get(), 0}; }
    segment_iterator segment_end() const noexcept { return {layout_.get(), layout_->segments}; }
    size_type size() const noexcept { return layout_->n; }
    bool empty() const noexcept { return layout_->n == 0; }
    size_type segment_count() const noexcept { return layout_->segments; }
    /// The schedule over segments that gives segment s to its thread.
    ccnuma::schedule schedule() const noexcept { return layout_->owners; }

private:
    std::unique_ptr<const layout_type> layout_;
};

/// A ccnuma::vector seen as segments: one per thread's chunk of its schedule(static) (or one
/// per chunk of schedule(static, c)), so that algorithm.hpp runs each chunk on the thread that
/// constructed it and placed its pages.
///
///     ccnuma::vector<double> v(n, 1.0);
///     auto segs = ccnuma::segments(v);
///     double s = ccnuma::par::reduce(segs.begin(), segs.end(), 0.0);
template <class T, class P>
segmented_view<T> segments(vector<T, P>& v) {
    return {v.data(), v.size(), v.schedule()};
}
template <class T, class P>
segmented_view<const T> segments(const vector<T, P>& v) {
    return {v.data(), v.size(), v.schedule()};
}
/// Any contiguous elements, split as `s` would split them.
template <class T, std::size_t E>
segmented_view<T> segments(std::span<T, E> data, const ccnuma::schedule& s = {}) {
    return {data.data(), data.size(), s};
}

namespace detail {

/// `p` with its partition set to `s` (first_touch and blocked; the others do not partition).
template <class Policy>
Policy with_schedule(Policy p, const ccnuma::schedule& s) {
    if constexpr (std::is_same_v<Policy, ccnuma::policy>) {
        std::visit([&](auto& x) { x = with_schedule(x, s); }, p);
    } else if constexpr (requires { p.sched; }) {
        p.sched = s;
    }
    return p;
}

template <class Policy>
Policy with_huge_pages(Policy p) {
    if constexpr (std::is_same_v<Policy, ccnuma::policy>) std::visit([](auto& x) { x.page = pages::huge; }, p);
    else p.page = pages::huge;
    return p;
}

inline std::size_t round_up(std::size_t x, std::size_t unit) noexcept { return (x + unit - 1) / unit * unit; }

}  // namespace detail

/// An array of n elements in padded segments, each constructed, placed and destroyed by its
/// owner thread, with flat iterators, segment iterators and local (raw) iterators.
template <class T, class Policy = first_touch>
class seg_array {
    using layout_type = detail::segment_layout<T>;

public:
    using value_type = T;
    using policy_type = Policy;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using iterator = segmented_iterator<T>;
    using const_iterator = segmented_iterator<const T>;
    using segment_iterator = ccnuma::segment_iterator<T>;
    using const_segment_iterator = ccnuma::segment_iterator<const T>;
    using local_iterator = T*;
    using const_local_iterator = const T*;

    seg_array() noexcept = default;
    /// n value-initialized elements.
    explicit seg_array(size_type n, segmentation segs = seg::per_thread, ccnuma::padding pad_to = pad::page,
                       const Policy& p = Policy{}) {
        setup(n, segs, pad_to, p);
        build([](T* q, std::size_t) noexcept(std::is_nothrow_default_constructible_v<T>) { ::new (q) T(); });
    }
    /// n copies of value, each made by its segment's owner (so memory a T owns is local too).
    seg_array(size_type n, const T& value, segmentation segs = seg::per_thread, ccnuma::padding pad_to = pad::page,
              const Policy& p = Policy{}) {
        setup(n, segs, pad_to, p);
        build([&value](T* q, std::size_t) noexcept(std::is_nothrow_copy_constructible_v<T>) { ::new (q) T(value); });
    }
    /// Element i is gen(i), i counted over the whole array. gen is called concurrently.
    template <class G>
        requires std::invocable<G&, size_type> && (!std::is_convertible_v<const G&, T>) &&
                 std::is_constructible_v<T, std::invoke_result_t<G&, size_type>>
    seg_array(size_type n, G gen, segmentation segs = seg::per_thread, ccnuma::padding pad_to = pad::page,
              const Policy& p = Policy{}) {
        setup(n, segs, pad_to, p);
        build([&gen](T* q, std::size_t i) noexcept(std::is_nothrow_invocable_v<G&, size_type> &&
                                                   std::is_nothrow_constructible_v<T, std::invoke_result_t<G&, size_type>>) {
            ::new (q) T(gen(i));
        });
    }
    /// Copies [first, last): in parallel for random-access input, else read serially first.
    template <std::input_iterator It>
    seg_array(It first, It last, segmentation segs = seg::per_thread, ccnuma::padding pad_to = pad::page,
              const Policy& p = Policy{}) {
        if constexpr (std::random_access_iterator<It>) {
            setup(static_cast<size_type>(last - first), segs, pad_to, p);
            build([first](T* q, std::size_t i) { ::new (q) T(first[static_cast<std::iter_difference_t<It>>(i)]); });
        } else {
            std::vector<T> staged(first, last);
            setup(staged.size(), segs, pad_to, p);
            build([&staged](T* q, std::size_t i) noexcept(std::is_nothrow_move_constructible_v<T>) {
                ::new (q) T(std::move(staged[i]));
            });
        }
    }
    seg_array(std::initializer_list<T> init, segmentation segs = seg::per_thread, ccnuma::padding pad_to = pad::page,
              const Policy& p = Policy{})
        : seg_array(init.begin(), init.end(), segs, pad_to, p) {}

    /// The same segments, padding and policy, copied in parallel by the owners: placed as the
    /// original.
    seg_array(const seg_array& other) : padding_(other.padding_), policy_(other.policy_) {
        if (!other.layout_) return;
        layout_ = std::make_unique<layout_type>(*other.layout_);
        layout_->base = nullptr;
        alignment_ = other.alignment_;
        allocate();
        // The same layout: an element is at the same byte offset in both blocks.
        const char* from = reinterpret_cast<const char*>(other.layout_->base);
        const char* to = reinterpret_cast<const char*>(layout_->base);
        build([from, to](T* q, std::size_t) noexcept(std::is_nothrow_copy_constructible_v<T>) {
            ::new (q) T(*reinterpret_cast<const T*>(from + (reinterpret_cast<const char*>(q) - to)));
        });
    }
    seg_array(seg_array&& other) noexcept
        : layout_(std::move(other.layout_)), alignment_(other.alignment_), padding_(other.padding_),
          policy_(std::move(other.policy_)) {}
    seg_array& operator=(const seg_array& other) {
        if (this != &other) {
            seg_array copy(other);
            swap(copy);
        }
        return *this;
    }
    seg_array& operator=(seg_array&& other) noexcept {
        seg_array gone(std::move(*this));
        swap(other);
        return *this;
    }
    ~seg_array() { release(); }

    void swap(seg_array& other) noexcept {
        std::swap(layout_, other.layout_);
        std::swap(alignment_, other.alignment_);
        std::swap(padding_, other.padding_);
        std::swap(policy_, other.policy_);
    }
    friend void swap(seg_array& a, seg_array& b) noexcept { a.swap(b); }

    // Flat iteration over all elements in order.
    iterator begin() noexcept { return detail::segment_access::at<T>(layout(), 0); }
    iterator end() noexcept { return detail::segment_access::at<T>(layout(), size()); }
    const_iterator begin() const noexcept { return detail::segment_access::at<const T>(layout(), 0); }
    const_iterator end() const noexcept { return detail::segment_access::at<const T>(layout(), size()); }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }

    // The segments, and each segment's raw range (as unordered containers' local iterators).
    segment_iterator segment_begin() noexcept { return {&layout(), 0}; }
    segment_iterator segment_end() noexcept { return {&layout(), segment_count()}; }
    const_segment_iterator segment_begin() const noexcept { return {&layout(), 0}; }
    const_segment_iterator segment_end() const noexcept { return {&layout(), segment_count()}; }
    local_iterator begin(size_type s) noexcept { return layout().begin(s); }
    local_iterator end(size_type s) noexcept { return layout().end(s); }
    const_local_iterator begin(size_type s) const noexcept { return layout().begin(s); }
    const_local_iterator end(size_type s) const noexcept { return layout().end(s); }
    std::span<T> segment(size_type s) noexcept { return {begin(s), segment_size(s)}; }
    std::span<const T> segment(size_type s) const noexcept { return {begin(s), segment_size(s)}; }

    size_type size() const noexcept { return layout().n; }
    bool empty() const noexcept { return size() == 0; }
    size_type segment_count() const noexcept { return layout().segments; }
    size_type segment_size(size_type s) const noexcept { return layout().size(s); }
    /// Bytes from the start of one segment to the next: the largest segment, padded.
    size_type segment_stride() const noexcept { return layout().stride; }

    /// Element i of the flat order: a division to find its segment. Loops belong in segments.
    T& operator[](size_type i) noexcept { return *locate(i); }
    const T& operator[](size_type i) const noexcept { return *locate(i); }
    T& at(size_type i) { return *locate(check(i)); }
    const T& at(size_type i) const { return *locate(check(i)); }
    T& front() noexcept { return *begin(); }
    const T& front() const noexcept { return *begin(); }
    T& back() noexcept { return *locate(size() - 1); }
    const T& back() const noexcept { return *locate(size() - 1); }

    /// The policy the block was placed with: the one given, with the segment team as its
    /// schedule and, for pad::huge_page, huge pages.
    const Policy& policy() const noexcept { return policy_; }
    const ccnuma::padding& segment_padding() const noexcept { return padding_; }
    /// The schedule over segment indices that gives each segment its owner thread, with the
    /// team size fixed at construction.
    ccnuma::schedule schedule() const noexcept { return layout().owners; }
    /// Pages per node of the whole block, and the fraction on the node of the segment's owner.
    placement_report placement() const {
        const auto& l = layout();
        if (l.base == nullptr) return {};
        return report_placement(l.base, l.segments, l.stride, l.owners);
    }

private:
    static const layout_type& empty_layout() noexcept {
        static const layout_type none{};
        return none;
    }
    const layout_type& layout() const noexcept { return layout_ ? *layout_ : empty_layout(); }

    T* locate(size_type i) const noexcept {
        const auto& l = layout();
        const size_type s = l.segment_of(i);
        return l.begin(s) + (i - l.offset(s));
    }
    size_type check(size_type i) const {
        if (i >= size())
            throw std::out_of_range("ccnuma::seg_array::at: index " + std::to_string(i) + " is out of range for size " +
                                    std::to_string(size()) +
                                    (empty() ? std::string(" (the array is empty)")
                                             : " (valid: 0.." + std::to_string(size() - 1) + ")"));
        return i;
    }

    /// Decides the segments, their stride and owners; allocates and places the block.
    void setup(size_type n, segmentation segs, ccnuma::padding pad, const Policy& p) {
        padding_ = pad;
        Policy placed = pad.to == padding::kind::huge_page ? detail::with_huge_pages(p) : p;
        ccnuma::schedule owners = detail::schedule_of(placed);
        size_type count = 0;
        switch (segs.by) {
        case segmentation::kind::per_thread:
            count = static_cast<size_type>(detail::team_threads(owners, "ccnuma::seg_array"));
            break;
        case segmentation::kind::per_node: {
            for (const auto& node : topology::current().numa_nodes()) count += node.cpus.empty() ? 0 : 1;
            count = std::max<size_type>(count, 1);
            break;
        }
        case segmentation::kind::count:
            count = segs.segments;
            if (count == 0)
                throw std::invalid_argument("ccnuma::seg_array of " + std::to_string(n) +
                                            " elements: 0 segments (expected at least 1)");
            break;
        }
        // The team is fixed now, so that every later operation gives segment s the same thread.
        if (owners.threads == 0)
            owners.threads = segs.by == segmentation::kind::count ? static_cast<unsigned>(detail::team_threads(owners, "ccnuma::seg_array"))
                                                                  : static_cast<unsigned>(count);
        policy_ = detail::with_schedule(placed, owners);

        auto l = std::make_unique<layout_type>();
        l->n = n;
        l->segments = count;
        l->q = n / count;
        l->r = n % count;
        l->owners = owners;
        const size_type unit = unit_bytes(pad, n, count);
        const size_type largest = l->q + (l->r != 0 ? 1 : 0);
        if (largest > std::numeric_limits<size_type>::max() / sizeof(T) ||
            largest * sizeof(T) > std::numeric_limits<size_type>::max() - (unit - 1) ||
            detail::round_up(largest * sizeof(T), unit) > std::numeric_limits<size_type>::max() / count - unit)
            throw std::length_error("ccnuma::seg_array: " + std::to_string(n) + " elements of " +
                                    std::to_string(sizeof(T)) + " bytes in " + std::to_string(count) +
                                    " padded segments exceed the address space");
        l->stride = detail::round_up(largest * sizeof(T), unit);
        // The base is aligned to the padding unit where allocate() can do it (powers of two up
        // to a page; blocks of a page or more start on a page, or 2 MiB for huge pages).
        alignment_ = std::max<size_type>(alignof(std::max_align_t), unit & (~unit + 1));
        alignment_ = std::min(alignment_, support().page_size);
        layout_ = std::move(l);
        allocate();
    }

    size_type unit_bytes(ccnuma::padding pad, size_type n, size_type count) const {
        size_type unit = alignof(T);
        switch (pad.to) {
        case padding::kind::none:
            break;
        case padding::kind::cache_line:
            unit = false_sharing_range;
            break;
        case padding::kind::page:
        case padding::kind::huge_page: {
            unit = page_kind(policy_) == pages::huge ? std::size_t{2} << 20 : support().page_size;
            break;
        }
        case padding::kind::bytes: {
            // Rounded up to alignof(T), a padding near SIZE_MAX would wrap to 0; and no padded
            // segment larger than the address space over the segments can ever be allocated.
            const size_type largest = std::numeric_limits<size_type>::max() / count / 2 / alignof(T) * alignof(T);
            if (pad.count > largest)
                detail::throw_error(errc::invalid_argument,
                                    "seg_array of " + std::to_string(n) + " elements in " + std::to_string(count) +
                                        " segments: pad::bytes(" + std::to_string(pad.count) +
                                        ") does not fit the address space (valid: pad::bytes(0) to pad::bytes(" +
                                        std::to_string(largest) + "))");
            unit = std::max<size_type>(pad.count, 1);
            break;
        }
        }
        return detail::round_up(unit, alignof(T));
    }

    // Why one allocate() with the segment as the element: the placement then runs its own
    // team over the segments, binds it to the binding plan, and gives each page (each 2 MiB
    // unit for huge pages) to the owner of the segment in its middle, first-touched by that
    // thread (first_touch) or mbind'ed to its node (blocked). With page padding no page holds
    // two segments, so every page of segment s is on its owner's node; interleave, on_node and
    // preferred place the block as a whole. The uniform stride is what makes a segment one
    // element; pad::none keeps it too (the smaller segments leave a gap of one element).
    void allocate() {
        auto& l = *layout_;
        const size_type bytes = l.segments * l.stride;
        if (bytes == 0) return;
        l.base = static_cast<T*>(ccnuma::allocate(bytes, policy_, l.stride, alignment_));
    }
    void deallocate() noexcept {
        if (layout_ && layout_->base != nullptr)
            ccnuma::deallocate(layout_->base, layout_->segments * layout_->stride, policy_, alignment_);
    }

    /// Constructs every element with make(address, flat index), segment by segment on the
    /// owner thread. If one throws, the segment's built elements are destroyed there, the other
    /// threads stop at their next segment, the finished segments are destroyed by their owners,
    /// the block is freed and the first exception rethrown.
    template <class Make>
    void build(Make&& make) {
        const auto& l = *layout_;
        if (l.n == 0) return;
        constexpr bool nothrow = noexcept(make(static_cast<T*>(nullptr), std::size_t{}));
        if constexpr (nothrow) {
            detail::parallel_for(l.segments, l.owners, [&](std::size_t s) noexcept {
                T* p = l.begin(s);
                for (std::size_t i = l.offset(s), e = l.offset(s + 1); i < e; ++i, ++p) make(p, i);
                touch_padding(s);
            });
        } else {
            std::vector<unsigned char> built(l.segments, 0);
            try {
                detail::parallel_for(l.segments, l.owners, [&](std::size_t s) {
                    T* const first = l.begin(s);
                    T* p = first;
                    try {
                        for (std::size_t i = l.offset(s), e = l.offset(s + 1); i < e; ++i, ++p) make(p, i);
                    } catch (...) {
                        std::destroy(first, p);
                        throw;
                    }
                    built[s] = 1;
                    touch_padding(s);
                });
            } catch (...) {
                if constexpr (!std::is_trivially_destructible_v<T>)
                    detail::parallel_for(l.segments, l.owners, [&](std::size_t s) noexcept {
                        if (built[s]) std::destroy(l.begin(s), l.end(s));
                    });
                deallocate();
                layout_.reset();
                throw;
            }
        }
    }

    /// Writes the pages of segment s that hold padding only, on the owner thread. Why: the
    /// smaller segments (and empty ones) end a page or more before the stride, and no element
    /// ever writes those pages. first_touch has written them in allocate(); under blocked they
    /// would stay unbacked and show as "not present" in placement(). Written here, every page
    /// of the block is on its segment's node whatever the policy. The pages are fresh zeros,
    /// and zero is what is written.
    void touch_padding(std::size_t s) const noexcept {
        const auto& l = *layout_;
        const std::size_t pg = support().page_size;
        const auto from = reinterpret_cast<std::uintptr_t>(l.end(s));
        const auto to = reinterpret_cast<std::uintptr_t>(l.begin(s)) + l.stride;
        for (std::uintptr_t b = (from + pg - 1) / pg * pg; b < to; b += pg) *reinterpret_cast<volatile char*>(b) = 0;
    }

    void release() noexcept {
        if (!layout_) return;
        if constexpr (!std::is_trivially_destructible_v<T>) {
            const auto& l = *layout_;
            if (l.n != 0)
                detail::parallel_for(l.segments, l.owners,
                                     [&](std::size_t s) noexcept { std::destroy(l.begin(s), l.end(s)); });
        }
        deallocate();
        layout_.reset();
    }

    std::unique_ptr<layout_type> layout_;
    size_type alignment_ = alignof(std::max_align_t);
    ccnuma::padding padding_ = pad::page;
    [[no_unique_address]] Policy policy_{};
};

}  // namespace ccnuma
