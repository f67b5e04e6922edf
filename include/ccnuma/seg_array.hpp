#pragma once
/// @file
/// ccnuma::seg_array<T, Policy>: an array split into padded segments, one per thread (or per
/// NUMA node, or a given count), each placed on its owner thread's node. Its iterators are
/// ccnuma's segmented iterators (segmented_iterator.hpp), which model the protocol of
/// segmented_iterator_traits.hpp (Austern, "Segmented Iterators and Hierarchical Algorithms");
/// ccnuma::segments(v) (segments.hpp) gives the same view of a ccnuma::vector's static chunks.
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
#include <ccnuma/detail/streaming.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/segmented_iterator.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/topology.hpp>

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
/// on a huge-page boundary (pad::huge_page: support().huge_page_size, usually 2 MiB, or the
/// base page where the kernel has no THP; it also makes the policy use huge pages), on a
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
    if constexpr (std::is_same_v<Policy, ccnuma::policy>) std::visit([](auto& x) { x.page = page_kind::huge; }, p);
    else p.page = page_kind::huge;
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
    /// float and double are written with automatic stores (stores.hpp): streamed beyond
    /// streaming_threshold().
    seg_array(size_type n, const T& value, segmentation segs = seg::per_thread, ccnuma::padding pad_to = pad::page,
              const Policy& p = Policy{}) {
        // Decided before anything is allocated: a bad CCNUMA_STREAMING_THRESHOLD throws here.
        const bool stream = streams_by_value(n);
        setup(n, segs, pad_to, p);
        if constexpr (detail::streamable<T>)
            build_filled(value, stream);
        else
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
        if (i >= size()) detail::throw_index_out_of_range("ccnuma::seg_array::at", i, size());
        return i;
    }

    /// Decides the segments, their stride and owners; allocates and places the block.
    void setup(size_type n, segmentation segs, ccnuma::padding pad, const Policy& p) {
        padding_ = pad;
        Policy placed = pad.to == padding::kind::huge_page ? detail::with_huge_pages(p) : p;
        ccnuma::schedule owners = detail::schedule_of(placed);
        // Its segments are its partition: one of elements would have to be reconciled with them.
        if (!owners.partition.empty())
            detail::throw_error(errc::invalid_argument, "ccnuma::seg_array of " + std::to_string(n) + " elements",
                                "a policy with " + to_string(owners.partition),
                                "seg_array splits by its segments (seg::count, seg::per_thread, seg::per_node); place a "
                                "ccnuma::vector by a partition instead");
        size_type count = 0;
        switch (segs.by) {
        case segmentation::kind::per_thread:
            count = static_cast<size_type>(detail::team_size(owners, "ccnuma::seg_array"));
            break;
        case segmentation::kind::per_node: {
            for (const auto& node : topology::current().numa_nodes()) count += node.cpus.empty() ? 0 : 1;
            count = std::max<size_type>(count, 1);
            break;
        }
        case segmentation::kind::count:
            count = segs.segments;
            if (count == 0)
                detail::throw_std_error(detail::std_error::invalid_argument,
                                        "ccnuma::seg_array of " + std::to_string(n) + " elements", "0 segments",
                                        "expected at least 1");
            break;
        }
        // The team is fixed now, so that every later operation gives segment s the same thread.
        if (owners.threads == 0)
            owners.threads = segs.by == segmentation::kind::count ? static_cast<unsigned>(detail::team_size(owners, "ccnuma::seg_array"))
                                                                  : static_cast<unsigned>(count);
        policy_ = detail::with_schedule(placed, owners);

        // As std::vector's max_size(), a layout that cannot exist is a std::length_error, and
        // every step of it is checked before it is computed: the segment index (the layout and
        // the team count segments in unsigned), the bytes of the largest segment, their padding
        // to the unit, and the stride times the segments plus a unit of alignment slack each.
        constexpr size_type most = std::numeric_limits<size_type>::max();
        constexpr size_type most_segments = std::numeric_limits<unsigned>::max();
        if (count > most_segments)
            detail::throw_std_error(detail::std_error::length_error,
                                    "ccnuma::seg_array of " + std::to_string(n) + " elements",
                                    std::to_string(count) + " segments are more than a segment index can count",
                                    "valid: seg::count(1) to seg::count(" + std::to_string(most_segments) + ")");
        auto l = std::make_unique<layout_type>();
        l->split(n, count, 0);
        l->owners = owners;
        const size_type unit = unit_bytes(pad, n, count);
        const size_type largest = l->q + (l->r != 0 ? 1 : 0);
        if (largest > most / sizeof(T) || largest * sizeof(T) > most - (unit - 1) || most / count < unit ||
            detail::round_up(largest * sizeof(T), unit) > most / count - unit)
            detail::throw_std_error(detail::std_error::length_error, "ccnuma::seg_array",
                                    std::to_string(n) + " elements of " + std::to_string(sizeof(T)) + " bytes in " +
                                        std::to_string(count) + " segments padded to " + std::to_string(unit) +
                                        " bytes exceed the address space");
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
            // The huge-page size is the kernel's (sysfs, through support()). Without THP it is
            // 0: no huge page can back the block, and a page of the base size is the unit.
            const size_type huge = support().huge_page_size;
            unit = page_kind_of(policy_) == page_kind::huge && huge != 0 ? huge : support().page_size;
            break;
        }
        case padding::kind::bytes: {
            // Rounded up to alignof(T), a padding near SIZE_MAX would wrap to 0; and no padded
            // segment larger than the address space over the segments can ever be allocated.
            const size_type largest = std::numeric_limits<size_type>::max() / count / 2 / alignof(T) * alignof(T);
            if (pad.count > largest)
                detail::throw_error(errc::invalid_argument,
                                    "seg_array of " + std::to_string(n) + " elements in " + std::to_string(count) + " segments",
                                    "pad::bytes(" + std::to_string(pad.count) + ") does not fit the address space",
                                    "valid: pad::bytes(0) to pad::bytes(" + std::to_string(largest) + ")");
            unit = std::max<size_type>(pad.count, 1);
            break;
        }
        }
        return detail::round_up(unit, alignof(T));
    }

    // Why one allocate() with the segment as the element: the placement then runs its own
    // team over the segments (it binds no thread; it notes the node each one runs on), and
    // gives each page (each huge page for page_kind::huge) to the owner of the segment in its
    // middle, first-touched by that thread (first_touch) or mbind'ed to its node (blocked). With page padding no page holds
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

    /// Whether construction by value streams n elements: automatic stores, no operand to alias.
    static bool streams_by_value(size_type n) {
        if constexpr (detail::streamable<T>) {
            return ccnuma::streams(stores::automatic, detail::moved_bytes<T>(n, 0), false, true);
        } else {
            (void)n;
            return false;
        }
    }

    /// build() for copies of one float or double (the bytes are the objects), each segment by
    /// its owner: streamed, or an `omp simd` fill, which build()'s element-by-element
    /// construction is not at GCC's -O2 (seg_array(n, value) took 0.92 of an expert's mmap and
    /// simd fill at 1.6 MB on 2 threads).
    void build_filled(T value, bool stream) {
        static_assert(detail::streamable<T>, "only bytes that are the objects are written without construction");
        const auto& l = *layout_;
        if (l.n == 0) return;
        detail::parallel_for(l.segments, l.owners, [&l, this, value, stream](std::size_t s) noexcept {
            T* const p = l.begin(s);
            const std::size_t k = l.offset(s + 1) - l.offset(s);
            if (stream) {
                detail::stream_range(p, 0, k, [value](std::size_t) noexcept { return value; });
            } else {
                CCNUMA_DETAIL_ELEMENTWISE_SIMD
                for (std::size_t i = 0; i < k; ++i) p[i] = value;
            }
            touch_padding(s);
        });
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
