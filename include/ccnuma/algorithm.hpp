#pragma once
/// @file
/// Hierarchical algorithms (Austern, "Segmented Iterators and Hierarchical Algorithms"): on
/// segmented iterators (any iterator that models segmented_iterator_traits.hpp: seg_array,
/// ccnuma::segments(v), or one of your own) they run as nested loops, an outer loop
/// over segments and an inner std:: algorithm over each segment's raw range; on any other
/// iterator they are the std:: algorithm. ccnuma::par:: runs each segment on its owner thread.
///
///     ccnuma::seg_array<double> a(n), b(n, 1.0), c(n, 2.0);
///     ccnuma::transform(b.begin(), b.end(), c.begin(), a.begin(), std::plus<>{});  // one loop per segment
///     double s = ccnuma::reduce(a.begin(), a.end(), 0.0);
///     ccnuma::par::transform(b.begin(), b.end(), a.begin(), [](double x) { return 3 * x; });
///     double t = ccnuma::par::reduce(a.begin(), a.end(), 0.0);   // segment s on thread s
///
/// Why: std::transform over the flat iterator tests for a segment end at every ++ and cannot
/// vectorize; here the inner loop is std::transform on pointers. Ranges with several iterators
/// (transform, copy, inner_product, equal) are cut where any of their segmented iterators
/// changes segment, so the inner loops stay raw whatever the segmentations: equal
/// segmentations give one piece per segment, different ones shorter pieces, and a
/// non-segmented iterator is passed to the inner std:: algorithm as it is.
///
/// par:: versions split the range by the segments of one segmented iterator with owners (the
/// output where it is one, else the first input that is) and run the piece in segment s on the
/// thread that owns s (the traits' owners(): the schedule over segments the container was
/// built with), so every segment is read and
/// written where its pages are. Function objects are called concurrently and may be copied.
/// Reductions combine the per-segment results in segment order, so the result depends on the
/// segmentation only, not on the team. Without a segmented iterator with owners, or with an
/// iterator that is not random access, par:: runs the sequential version.
///
/// The algorithms use the traits alone. Each one stands with its par:: version; a new one is
/// the sequential function over detail::for_each_segment or detail::lockstep and the par::
/// function over detail::par_pieces, next to each other.
///
/// The whole-range writes par::fill, par::copy and par::transform take a store mode first
/// (stores.hpp), `automatic` when it is left out: a raw float or double output range then gets
/// non-temporal stores when the call moves (writes and reads) more than streaming_threshold() bytes and the piece
/// reads no operand it writes. Each piece ends with one sfence on the thread that wrote it.
///
///     ccnuma::par::fill(ccnuma::stores::streaming, a.begin(), a.end(), 0.0);
///     ccnuma::par::transform(ccnuma::stores::regular, b.begin(), b.end(), a.begin(), op);

#include <ccnuma/detail/lane_sum.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/slots.hpp>
#include <ccnuma/detail/streaming.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/segmented_iterator.hpp>
#include <ccnuma/segmented_iterator_traits.hpp>
#include <ccnuma/stores.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

namespace detail {

/// Hierarchical treatment pays where one of the iterators is segmented and the first range
/// can be cut into pieces (random access, or segmented itself).
template <class It1, class... Its>
concept hierarchical = (segmented<It1> || (segmented<Its> || ...)) && (segmented<It1> || std::random_access_iterator<It1>);

/// Austern's nested loop: visit(segment, local_first, local_last) for each segment's part of
/// [first, last), in order. A visit that returns bool stops the walk by returning true; the
/// function then returns true.
template <class It, class Visit>
bool for_each_segment(It first, It last, Visit&& visit) {
    using tr = segmented_iterator_traits<It>;
    auto call = [&](const auto& s, auto b, auto e) -> bool {
        if constexpr (std::is_void_v<decltype(visit(s, b, e))>) {
            visit(s, b, e);
            return false;
        } else {
            return visit(s, b, e);
        }
    };
    auto sf = tr::segment(first);
    const auto sl = tr::segment(last);
    if (sf == sl) return call(sf, tr::local(first), tr::local(last));
    if (call(sf, tr::local(first), tr::end(sf))) return true;
    for (++sf; sf != sl; ++sf)
        if (call(sf, tr::begin(sf), tr::end(sf))) return true;
    return call(sl, tr::begin(sl), tr::local(last));
}

/// The position of an iterator that moves along with the first range: itself, or for a
/// segmented iterator its segment and raw pointer, with the room left in the segment.
template <class X>
struct cursor {
    X pos;
    explicit cursor(X x) : pos(std::move(x)) {}
    static constexpr std::size_t room() noexcept { return std::numeric_limits<std::size_t>::max(); }
    X& local() noexcept { return pos; }
    void sync() noexcept {}
    X get() const { return pos; }
};

template <segmented X>
struct cursor<X> {
    using tr = segmented_iterator_traits<X>;
    typename tr::segment_iterator seg;
    typename tr::local_iterator p;
    explicit cursor(const X& x) : seg(tr::segment(x)), p(tr::local(x)) {}
    std::size_t room() const noexcept { return static_cast<std::size_t>(tr::end(seg) - p); }
    typename tr::local_iterator& local() noexcept { return p; }
    /// After a piece that filled the segment, on to the next one.
    void sync() {
        if (p == tr::end(seg)) {
            const X x = tr::compose(seg, p);
            seg = tr::segment(x);
            p = tr::local(x);
        }
    }
    X get() const { return tr::compose(seg, p); }
};

/// step(b, e, locals&...) over [first1, last1) cut into pieces in which no segmented cursor
/// changes segment: b and e are raw pointers where first1 is segmented, the locals raw
/// pointers for segmented cursors and the iterators themselves otherwise. step advances the
/// locals by e - b and returns true to stop; lockstep then returns true.
template <class It1, class Step, class... Cs>
bool lockstep(It1 first1, It1 last1, Step&& step, Cs&... cs) {
    auto run = [&](auto b, auto e) -> bool {
        while (b != e) {
            auto k = static_cast<std::size_t>(e - b);
            ((k = std::min(k, cs.room())), ...);
            // Room 0: a secondary range already at its end, which the caller promised not to
            // happen; one piece then does what the flat loop would.
            if (k == 0) k = static_cast<std::size_t>(e - b);
            const auto m = std::next(b, static_cast<std::iter_difference_t<decltype(b)>>(k));
            const bool stop = step(b, m, cs.local()...);
            (cs.sync(), ...);
            if (stop) return true;
            b = m;
        }
        return false;
    };
    if constexpr (segmented<It1>)
        return for_each_segment(first1, last1, [&](const auto&, auto b, auto e) { return run(b, e); });
    else
        return run(first1, last1);
}

template <class L, class D>
void advance_by(L& it, D k) {
    it += static_cast<std::iter_difference_t<L>>(k);
}

template <class It>
It at(It first, std::size_t d) noexcept(noexcept(first + std::iter_difference_t<It>{}) && std::is_nothrow_copy_constructible_v<It>) {
    return first + static_cast<std::iter_difference_t<It>>(d);
}

/// How a whole-range write stores: the caller's mode and the bytes the whole call moves, its
/// output plus its inputs (what `automatic` compares with the threshold). Sequential
/// algorithms store regularly.
struct store_choice {
    stores mode = stores::regular;
    std::size_t bytes = 0;
};

/// An output a whole-range write may stream to: float or double behind a contiguous, writable
/// iterator (a raw pointer, std::vector's, ccnuma::vector's).
template <class Out>
concept stream_output = std::contiguous_iterator<Out> && std::is_lvalue_reference_v<std::iter_reference_t<Out>> &&
                        !std::is_const_v<std::remove_reference_t<std::iter_reference_t<Out>>> &&
                        streamable<std::iter_value_t<Out>>;

/// Whether the k elements at `in` may share memory with the k elements at `out`: exact for two
/// contiguous ranges, true when `in` is an iterator whose memory cannot be seen (it might read out).
template <class In, class Out>
bool may_alias(const In& in, const Out& out, std::size_t k) noexcept {
    if constexpr (std::contiguous_iterator<In> && std::contiguous_iterator<Out>) {
        const auto i0 = reinterpret_cast<std::uintptr_t>(std::to_address(in));
        const auto o0 = reinterpret_cast<std::uintptr_t>(std::to_address(out));
        return i0 < o0 + k * sizeof(std::iter_value_t<Out>) && o0 < i0 + k * sizeof(std::iter_value_t<In>);
    } else {
        return true;
    }
}

/// The one place a piece of a whole-range write may stream: out[0, k) = at(i) with
/// non-temporal stores when the output is a contiguous float or double range and streams()
/// says so for this call and this piece (`aliases`: the piece reads memory it writes); `out`
/// then moves past the piece. Returns false, having written nothing, otherwise; the caller
/// then stores regularly.
template <class L, class Aliases, class At>
bool stream_piece(const store_choice& c, L& out, std::size_t k, Aliases&& aliases, const At& at) {
    if constexpr (stream_output<L>) {
        if (c.mode == stores::regular || k == 0 || !streams(c.mode, c.bytes, aliases(), true)) return false;
        stream_range(std::to_address(out), 0, k, at);
        out += static_cast<std::iter_difference_t<L>>(k);
        return true;
    } else {
        (void)c, (void)out, (void)k, (void)aliases, (void)at;
        return false;
    }
}

/// Whether the k elements at `in` overlap the k at `out` other than element for element (in
/// place, in == out, is element for element): exact for two contiguous ranges, true when
/// `in`'s memory cannot be seen.
template <class In, class Out>
bool shifted_overlap(const In& in, const Out& out, std::size_t k) noexcept {
    if constexpr (std::contiguous_iterator<In> && std::contiguous_iterator<Out>) {
        const auto i0 = reinterpret_cast<std::uintptr_t>(std::to_address(in));
        const auto o0 = reinterpret_cast<std::uintptr_t>(std::to_address(out));
        return i0 != o0 && may_alias(in, out, k);
    } else {
        return true;
    }
}

/// A piece's regular stores as an `omp simd` loop, out[i] = at(i) for i in [0, k): for a
/// contiguous output, an `at` that cannot throw (an exception may not leave a simd loop), and
/// inputs that do not overlap the output other than element for element (`shifted`). GCC's -O2
/// vectorizes no plain loop that needs an alias check or an epilogue, so par::transform over a
/// seg_array's segments ran scalar there: 0.45 of the expert's `omp simd` loop (issue 35).
/// `out` then moves past the piece. Returns false, having written nothing, otherwise.
template <class L, class Shifted, class At>
bool simd_piece(L& out, std::size_t k, Shifted&& shifted, const At& at) {
    if constexpr (std::contiguous_iterator<L> && std::is_lvalue_reference_v<std::iter_reference_t<L>> &&
                  noexcept(at(std::size_t{})) &&
                  std::is_nothrow_assignable_v<std::iter_reference_t<L>, decltype(at(std::size_t{}))>) {
        if (k == 0 || shifted()) return false;
        auto* const o = std::to_address(out);
        detail::elementwise_range(o, 0, k, [o, &at](std::size_t i) noexcept { o[i] = at(i); });
        out += static_cast<std::iter_difference_t<L>>(k);
        return true;
    } else {
        (void)out, (void)k, (void)shifted, (void)at;
        return false;
    }
}

/// The store choice of a par:: call over [first, last) writing to an Out and reading an
/// element of each of Ins per position (none for a fill). Ranges that are not random access
/// are not measured (that would consume a single-pass input): they never stream.
template <class Out, class... Ins, class It>
store_choice choice_for(stores mode, const It& first, const It& last) {
    if constexpr (std::random_access_iterator<It> && requires { sizeof(std::iter_value_t<Out>); }) {
        const auto n = static_cast<std::size_t>(last - first);
        std::size_t read = 0;
        ((read = moved_bytes<std::iter_value_t<Ins>>(n, read)), ...);
        return {mode, moved_bytes<std::iter_value_t<Out>>(n, read)};
    } else {
        return {stores::regular, 0};
    }
}

/// Where the n elements after `it` lie, as a byte range of one address space per array: the
/// addresses of a contiguous iterator, or for ccnuma's own segmented iterator its positions in
/// its layout (padded segments: the elements, not the padding) tagged by the layout. Ranges of
/// two iterators compare only when both have one and `same_space` says they share the space.
template <class It>
std::pair<std::uintptr_t, std::uintptr_t> element_bytes(const It& it, std::size_t n) noexcept {
    using V = std::iter_value_t<It>;
    std::uintptr_t b = 0;
    if constexpr (layout_iterator<It>)
        b = segment_access::position(it) * sizeof(V);
    else
        b = reinterpret_cast<std::uintptr_t>(std::to_address(it));
    return {b, b + static_cast<std::uintptr_t>(moved_bytes<V>(n, 0))};
}

/// Whether element_bytes of It1 and It2 are positions in one space: both contiguous (one
/// address space), or both ccnuma's segmented iterators over the same layout.
template <class It1, class It2>
bool same_space(const It1& a, const It2& b) noexcept {
    if constexpr (std::contiguous_iterator<It1> && std::contiguous_iterator<It2>)
        return true;
    else if constexpr (layout_iterator<It1> && layout_iterator<It2>)
        return segment_access::layout(a) == segment_access::layout(b);
    else
        return false;
}

/// The store choice of a binary par::transform: what its two inputs cover together, counted once
/// (union_bytes, the rule operand_bytes applies to an expression's arrays): transform(b, b_end,
/// b, out, op) reads b once, and transform(b, b_end - 1, b + 1, out, op), a stencil's shifted
/// input, reads b once too, not twice. Inputs of two arrays, or of iterators that cannot tell
/// (user segmented iterators), count both.
template <class Out, class It1, class It2>
store_choice choice_for(stores mode, const It1& first1, const It1& last1, const It2& first2) {
    if constexpr (std::random_access_iterator<It1> && std::random_access_iterator<It2> &&
                  std::is_same_v<std::iter_value_t<It1>, std::iter_value_t<It2>> &&
                  requires { sizeof(std::iter_value_t<Out>); } &&
                  (std::contiguous_iterator<It1> || layout_iterator<It1>) &&
                  (std::contiguous_iterator<It2> || layout_iterator<It2>)) {
        // An empty range reads nothing; its iterators may not even belong to a layout.
        if (first1 != last1 && same_space(first1, first2)) {
            const auto n = static_cast<std::size_t>(last1 - first1);
            std::array<std::pair<std::uintptr_t, std::uintptr_t>, 2> ranges{element_bytes(first1, n), element_bytes(first2, n)};
            return {mode, moved_bytes<std::iter_value_t<Out>>(n, union_bytes(ranges))};
        }
    }
    if constexpr (std::random_access_iterator<It1> && std::random_access_iterator<It2> &&
                  std::is_lvalue_reference_v<std::iter_reference_t<It1>> &&
                  std::is_lvalue_reference_v<std::iter_reference_t<It2>> &&
                  std::is_same_v<std::iter_value_t<It1>, std::iter_value_t<It2>>) {
        // Iterators of two spaces (user segmented iterators; segments(v) beside v's own
        // iterator or beside another segments(v), each with its own layout): only the same
        // first element is known to be the same memory.
        if (first1 != last1 && static_cast<const void*>(std::addressof(*first1)) == static_cast<const void*>(std::addressof(*first2)))
            return choice_for<Out, It1>(mode, first1, last1);
    }
    return choice_for<Out, It1, It2>(mode, first1, last1);
}

// ---- par:: helpers: the traits' index() and owners() give each segment its thread --------

/// par:: splits by a segmented iterator with owners and moves every other iterator by offsets.
template <class... Its>
concept par_ready = (owned_segmented<Its> || ...) && (std::random_access_iterator<Its> && ...);

/// The iterator par:: splits by: the first of `its` whose segments have owners.
template <class It, class... Rest>
const auto& driver(const It& it, const Rest&... rest) noexcept {
    if constexpr (owned_segmented<It>) return it;
    else return driver(rest...);
}

template <owned_segmented It>
segment_owners owners_of(const It& it) noexcept(noexcept(segmented_iterator_traits<It>::owners(segmented_iterator_traits<It>::segment(it)))) {
    using tr = segmented_iterator_traits<It>;
    return tr::owners(tr::segment(it));
}

/// The part of a range that lies in one segment: its number, its positions [d0, d1) counted
/// from the range's first element, and the same elements as the segment's local range [b, e).
template <owned_segmented It>
struct segment_part {
    using local = typename segmented_iterator_traits<It>::local_iterator;
    std::size_t segment = 0, d0 = 0, d1 = 0;
    local b{}, e{};
};

/// Throws the error of traits whose index() does not number a range's segments in ++ order.
[[noreturn]] inline void misnumbered(std::size_t place, std::size_t index, operation_name what) {
    throw_error(errc::invalid_argument, what,
                "segment " + std::to_string(place) + " of the range whose index() is " + std::to_string(index),
                "segmented_iterator_traits whose index() numbers the segments 0, 1, 2, ... in order");
}

/// Whether advance_segments on an S cannot throw.
template <class S>
constexpr bool nothrow_advance() noexcept {
    if constexpr (requires(S& s) { s += std::ptrdiff_t{}; })
        return noexcept(std::declval<S&>() += std::ptrdiff_t{});
    else
        return noexcept(++std::declval<S&>());
}

/// Segment iterator `s` moved k segments on: in one step where it can, else one at a time (the
/// protocol asks only for ++).
template <class S>
void advance_segments(S& s, std::size_t k) noexcept(nothrow_advance<S>()) {
    if constexpr (requires { s += static_cast<std::ptrdiff_t>(k); })
        s += static_cast<std::ptrdiff_t>(k);
    else
        for (; k != 0; --k) ++s;
}

/// Whether a thread of par_parts can find its parts without an exception: every operation of the
/// traits and of the iterators it uses is noexcept (ccnuma's own are). Then, with a noexcept
/// visit, the region needs no exception wrapper; otherwise an exception from the traits (user
/// code) is carried out of the team to the caller like one from the visit.
template <class It>
constexpr bool nothrow_walk() noexcept {
    using tr = segmented_iterator_traits<It>;
    using S = typename tr::segment_iterator;
    using L = typename tr::local_iterator;
    const It* it = nullptr;
    const S* s = nullptr;
    const L* l = nullptr;
    return noexcept(owners_of(*it)) && noexcept(at(*it, std::size_t{})) && noexcept(tr::segment(*it)) &&
           noexcept(tr::local(*it)) && noexcept(tr::index(*s)) && noexcept(tr::begin(*s)) && noexcept(tr::end(*s)) &&
           noexcept(tr::compose(*s, *l)) && noexcept(*it - *it) && noexcept(*l == *l) && noexcept(*l - *l) &&
           noexcept(*s == *s) && noexcept(++std::declval<S&>()) && nothrow_advance<S>() &&
           std::is_nothrow_copy_constructible_v<It> && std::is_nothrow_copy_constructible_v<S> &&
           std::is_nothrow_copy_constructible_v<L>;
}

/// par_parts over ccnuma's own flat iterator (n > 0): its layout gives each segment's place in
/// the flat order (offset) and in memory (begin) by arithmetic, so a thread finds the parts of
/// its segments from the range's first position alone. traits_parts does the same by
/// composing and subtracting iterators, and checks user traits' numbering first: a par::reduce
/// over 8 doubles took 2,525 instructions a call that way and 2,431 this way (callgrind,
/// 1 thread), a few percent of a sum over a few hundred KB (issue 35). Our traits number and
/// count the segments by construction, so nothing needs checking here.
///
/// layout_walk checks the range and returns what each thread of a team runs, walk(t, threads,
/// stopped): par_parts runs it in a team of the owners, a ccnuma::team's thread calls it with its
/// own rank (thread_parts). `split` gives each thread its segments (the owners' schedule, but
/// for a caller that needs each thread's segments in one run); it must outlive the walk, which
/// reads its partition through a pointer. `what` names the operation in the errors.
template <class V, class Visit>
auto layout_walk(const segmented_iterator<V>& by, std::size_t n, const ccnuma::schedule& split, operation_name what, Visit&& visit) {
    const auto* l = segment_access::layout(by);
    const std::size_t i0 = segment_access::position(by);
    // by's own segment holds i0 (a position is never a segment's end); a range to the end of
    // the array ends in the last segment (empty trailing ones are skipped below). Neither
    // needs segment_of's division.
    const std::size_t s0 = segment_access::segment(by).index();
    const std::size_t s_last = i0 + n == l->n ? l->segments - 1 : l->segment_of(i0 + n - 1);
    check_covers(split, l->segments, what);
    return [l, i0, i_end = i0 + n, s0, s_last, chunk = split.chunk, p = partition_of(split),
                   visit = region_copy(visit)](unsigned t, unsigned threads, const auto& stopped) noexcept(
                      noexcept(visit(std::declval<const segment_part<segmented_iterator<V>>&>()))) {
                      bool first = true;
                      static_ranges(l->segments, chunk, p, t, threads, [&](std::size_t lo, std::size_t hi) {
                          lo = std::max(lo, s0);
                          hi = std::min(hi, s_last + 1);
                          if (lo >= hi || (!std::exchange(first, false) && stopped())) return;
                          for (std::size_t s = lo; s < hi; ++s) {
                              const std::size_t o = l->offset(s);
                              const std::size_t a = std::max(o, i0), z = std::min(l->offset(s + 1), i_end);
                              if (a >= z) continue;  // an empty segment (fewer elements than segments)
                              V* const b = l->begin(s) + (a - o);
                              visit(segment_part<segmented_iterator<V>>{s, a - i0, z - i0, b, b + (z - a)});
                          }
                      });
                  };
}

/// par_parts by the traits' protocol alone (user segmented iterators): the static schedule of
/// the owners gives each thread its segment numbers, and the thread finds those segments'
/// parts itself, from the two ends of the range. Nothing is written for the threads before the region: each
/// line of the caller's frame a thread reads is a cache miss on every call, which a 4 us
/// reduction over 512 KB felt as a tenth of its time (issue 35). The first exception a visit
/// throws stops the others at their next range of segments and is rethrown.
///
/// The traits' index() must number the segments 0, 1, 2, ... in ++ order and owners() must
/// count every segment the range has elements in: both are checked before any thread starts.
///
/// traits_walk checks the range and returns each thread's walk, as layout_walk does, with
/// `own`, by's owners_of.
template <owned_segmented It, class Visit>
auto traits_walk(const It& by, std::size_t n, const segment_owners& own, const ccnuma::schedule& split, operation_name what,
                 Visit&& visit) {
    using tr = segmented_iterator_traits<It>;
    const It last = at(by, n);
    // The numbering the threads rely on, checked before any of them starts: a walk over the
    // range's segments, as the old table of parts took on every call. s_last: the number of
    // the last segment the range reaches into (last's own, unless last stands at its start; an
    // empty segment may stand between).
    std::size_t s_last = 0;
    {
        auto s = tr::segment(by);
        const auto sl = tr::segment(last);
        const bool last_has_elements = s == sl || !(tr::local(last) == tr::begin(sl));
        std::size_t k = static_cast<std::size_t>(tr::index(s));
        for (; !(s == sl); ++s, ++k)
            if (static_cast<std::size_t>(tr::index(s)) != k) misnumbered(k, tr::index(s), what);
        if (last_has_elements && static_cast<std::size_t>(tr::index(sl)) != k) misnumbered(k, tr::index(sl), what);
        s_last = last_has_elements ? k : k - 1;
        if (s_last >= own.segments)
            throw_error(errc::invalid_argument, what, "a range whose segment " + std::to_string(s_last) +
                                                                   " is not below its owners().segments (" +
                                                                   std::to_string(own.segments) + ")",
                        "segmented_iterator_traits whose owners() counts every segment of the range");
    }
    check_covers(split, own.segments, what);
    // The closure holds by value what the checks above found (both ends of the range, its last
    // segment, the owners' count and chunk) and the visit, so that no thread computes them
    // again: each thread deriving the end and the owners itself cost 112 instructions a call
    // (callgrind, par::reduce over 8 doubles, 1 thread). Owners split by a partition (possible
    // through user traits; ccnuma's layouts have none) are read through a pointer into `split`
    // (`own`'s schedule, or the caller's), which outlives the region: a read of one line, where a
    // copy in each thread would increment the partition's shared count from every thread.
    return [by, to = last, s_last, segments = own.segments, chunk = split.chunk,
                   p = partition_of(split), visit = region_copy(visit)](unsigned t, unsigned threads, const auto& stopped) noexcept(
                      nothrow_walk<It>() && noexcept(visit(std::declval<const segment_part<It>&>()))) {
                      const auto sf = tr::segment(by), sl = tr::segment(to);
                      const auto s0 = static_cast<std::size_t>(tr::index(sf));
                      // A cursor that only moves forward over this thread's increasing ranges:
                      // ++ alone (the protocol's) then costs each thread one pass, not one per range.
                      auto s = sf;
                      std::size_t at_k = s0;
                      bool first = true;
                      static_ranges(segments, chunk, p, t, threads, [&](std::size_t lo, std::size_t hi) {
                          lo = std::max(lo, s0);
                          hi = std::min(hi, s_last + 1);
                          if (lo >= hi || (!std::exchange(first, false) && stopped())) return;
                          advance_segments(s, lo - at_k);
                          // Never past segment hi - 1: a segment iterator need not step past the end.
                          for (at_k = lo;; ++at_k, ++s) {
                              const auto b = at_k == s0 ? tr::local(by) : tr::begin(s);
                              const auto e = s == sl ? tr::local(to) : tr::end(s);
                              if (b != e) {
                                  const auto d0 = static_cast<std::size_t>(tr::compose(s, b) - by);
                                  visit(segment_part<It>{at_k, d0, d0 + static_cast<std::size_t>(e - b), b, e});
                              }
                              if (at_k + 1 == hi) break;
                          }
                      });
                  };
}

/// The two walks (n > 0), each in a team of the owners' schedule.
template <class V, class Visit>
void layout_parts(const segmented_iterator<V>& by, std::size_t n, Visit&& visit) {
    const ccnuma::schedule& owners = segment_access::layout(by)->owners;
    parallel_team(owners, "ccnuma::par", layout_walk(by, n, owners, "ccnuma::par", std::forward<Visit>(visit)));
}
template <owned_segmented It, class Visit>
void traits_parts(const It& by, std::size_t n, Visit&& visit) {
    const segment_owners own = owners_of(by);
    parallel_team(own.schedule, "ccnuma::par", traits_walk(by, n, own, own.schedule, "ccnuma::par", std::forward<Visit>(visit)));
}

/// visit(part) for each segment_part of the positions [0, n) after `by`, on the thread that owns
/// the part's segment, in one parallel region: by the layout for ccnuma's own iterators, by the
/// traits for any other.
template <owned_segmented It, class Visit>
void par_parts(const It& by, std::size_t n, Visit&& visit) {
    if (n == 0) return;
    if constexpr (layout_iterator<It>)
        layout_parts(by, n, std::forward<Visit>(visit));
    else
        traits_parts(by, n, std::forward<Visit>(visit));
}

/// Whether schedule(static) over a range's segments by `owners` gives each thread of a team of
/// `threads` one run of segments, in thread order: no chunk, and at most one partition part per
/// thread. Then folding each thread's run and the runs in thread order folds in segment order.
inline bool runs_in_thread_order(const ccnuma::schedule& owners, unsigned threads) noexcept {
    return owners.chunk == 0 && (owners.partition.empty() || owners.partition.parts() <= threads);
}

/// visit(part) for each segment_part of the positions [0, n) after `by` whose segment falls to
/// thread t of a team of `threads`, on the calling thread: a ccnuma::team thread's share of what
/// par_parts spreads over a team of its own. By the owners' schedule (the segments the thread
/// placed, when it is a thread of the team that placed them), or, with `in_order` where that
/// schedule would give a thread segments apart (runs_in_thread_order), by plain
/// schedule(static) over the segments: one run each, for a fold that must keep segment order.
template <owned_segmented It, class Visit>
void thread_parts(const It& by, std::size_t n, unsigned t, unsigned threads, bool in_order, operation_name what, Visit&& visit) {
    if (n == 0) return;
    const auto never = [] { return false; };
    if constexpr (layout_iterator<It>) {
        const ccnuma::schedule& owners = segment_access::layout(by)->owners;
        const ccnuma::schedule& split = in_order && !runs_in_thread_order(owners, threads) ? static_schedule : owners;
        layout_walk(by, n, split, what, std::forward<Visit>(visit))(t, threads, never);
    } else {
        const segment_owners own = owners_of(by);
        const ccnuma::schedule& split = in_order && !runs_in_thread_order(own.schedule, threads) ? static_schedule : own.schedule;
        traits_walk(by, n, own, split, what, std::forward<Visit>(visit))(t, threads, never);
    }
}

/// piece(s, d0, d1) for each part [d0, d1) of the positions [0, n) after `by` that lies in
/// segment s, on the thread that owns s (par_parts): for algorithms that move other iterators
/// along by position.
template <owned_segmented It, class Piece>
void par_pieces(const It& by, std::size_t n, Piece&& piece) {
    par_parts(by, n, [&](const segment_part<It>& p) { piece(p.segment, p.d0, p.d1); });
}

/// One segment's partial result, alone in its cache lines.
template <class T>
using partials = slots<padded<std::optional<T>>>;

/// Each segment's part folded on its owner (fold(part): ccnuma::reduce, accumulate or
/// inner_product of the segment_part), the parts then combined with init in segment order.
template <class T, class Op, class Drive, class Fold>
T fold_segments(const Drive& drive, std::size_t n, T init, Op op, Fold fold) {
    partials<T> partial(owners_of(drive).segments);
    // The slots' pointer and the fold by value: what a thread reads is in the region's closure.
    par_parts(drive, n, [out = partial.begin(), fold](const segment_part<Drive>& p) noexcept(noexcept(fold(p)) && std::is_nothrow_move_assignable_v<T>) {
        out[p.segment].value = fold(p);
    });
    for (auto& p : partial)
        if (p.value) init = op(std::move(init), std::move(*p.value));
    return init;
}

/// The first smallest (Largest: largest) element by comp. On a segmented range, each segment's
/// best, then the first best over the segments in order.
template <bool Largest, class It, class Comp>
It extremum(It first, It last, Comp comp) {
    if constexpr (segmented<It>) {
        auto better = [&](const auto& a, const auto& best) { return Largest ? comp(best, a) : comp(a, best); };
        using tr = segmented_iterator_traits<It>;
        It best = last;
        typename tr::local_iterator best_at{};
        for_each_segment(first, last, [&](const auto& s, auto b, auto e) {
            const auto r = extremum<Largest>(b, e, comp);
            if (r != e && (best == last || better(*r, *best_at))) {
                best = tr::compose(s, r);
                best_at = r;
            }
        });
        return best;
    } else if constexpr (Largest) {
        return std::max_element(first, last, std::move(comp));
    } else {
        return std::min_element(first, last, std::move(comp));
    }
}

/// extremum, each segment's part searched on its owner.
template <bool Largest, class It, class Comp>
It par_extremum(It first, It last, Comp comp) {
    if constexpr (par_ready<It>) {
        const auto n = static_cast<std::size_t>(last - first);
        partials<std::size_t> partial(owners_of(first).segments);
        par_pieces(first, n, [&](std::size_t s, std::size_t d0, std::size_t d1) {
            partial[s].value = static_cast<std::size_t>(extremum<Largest>(at(first, d0), at(first, d1), comp) - first);
        });
        It best = last;
        for (const auto& p : partial)
            if (p.value) {
                const It candidate = at(first, *p.value);
                if (best == last || (Largest ? comp(*best, *candidate) : comp(*candidate, *best))) best = candidate;
            }
        return best;
    } else {
        return extremum<Largest>(first, last, std::move(comp));
    }
}

}  // namespace detail

// ---- for_each ------------------------------------------------------------------------------

/// f(x) for every element, in order; returns f, as std::for_each does.
template <class It, class F>
F for_each(It first, It last, F f) {
    if constexpr (segmented<It>) {
        detail::for_each_segment(first, last, [&](const auto&, auto b, auto e) { ccnuma::for_each(b, e, std::ref(f)); });
        return f;
    } else {
        return std::for_each(first, last, std::move(f));
    }
}

namespace par {
/// f(x) for every element, each segment's part on the segment's owner thread.
template <class It, class F>
void for_each(It first, It last, F f) {
    if constexpr (detail::par_ready<It>) {
        detail::par_pieces(first, static_cast<std::size_t>(last - first), [&](std::size_t, std::size_t d0, std::size_t d1) {
            ccnuma::for_each(detail::at(first, d0), detail::at(first, d1), f);
        });
    } else {
        ccnuma::for_each(first, last, std::move(f));
    }
}
}  // namespace par

// ---- transform -----------------------------------------------------------------------------

namespace detail {

/// transform with a store choice: the sequential algorithm with regular stores, a par:: piece
/// with the call's choice.
template <class It, class Out, class Op>
Out transform(const store_choice& c, It first, It last, Out out, Op& op) {
    if constexpr (hierarchical<It, Out>) {
        cursor<Out> o(out);
        lockstep(
            first, last,
            [&](auto b, auto e, auto& lo) {
                const auto k = static_cast<std::size_t>(std::distance(b, e));
                if constexpr (std::random_access_iterator<decltype(b)>) {
                    const auto at = [&](std::size_t i) noexcept(noexcept(op(b[i]))) { return op(b[i]); };
                    if (stream_piece(c, lo, k, [&] { return may_alias(b, lo, k); }, at) ||
                        simd_piece(lo, k, [&] { return shifted_overlap(b, lo, k); }, at))
                        return false;
                }
                lo = std::transform(b, e, lo, op);
                return false;
            },
            o);
        return o.get();
    } else {
        if constexpr (std::random_access_iterator<It>) {
            const auto k = static_cast<std::size_t>(last - first);
            const auto at = [&](std::size_t i) noexcept(noexcept(op(first[i]))) { return op(first[i]); };
            if (stream_piece(c, out, k, [&] { return may_alias(first, out, k); }, at) ||
                simd_piece(out, k, [&] { return shifted_overlap(first, out, k); }, at))
                return out;
        }
        return std::transform(first, last, out, op);
    }
}

template <class It1, class It2, class Out, class Op>
Out transform(const store_choice& c, It1 first1, It1 last1, It2 first2, Out out, Op& op) {
    if constexpr (hierarchical<It1, It2, Out>) {
        cursor<It2> in(first2);
        cursor<Out> o(out);
        lockstep(
            first1, last1,
            [&](auto b, auto e, auto& l2, auto& lo) {
                const auto k = static_cast<std::size_t>(std::distance(b, e));
                if constexpr (std::random_access_iterator<std::remove_reference_t<decltype(l2)>>) {
                    if constexpr (std::random_access_iterator<decltype(b)>) {
                        const auto at = [&](std::size_t i) noexcept(noexcept(op(b[i], l2[i]))) { return op(b[i], l2[i]); };
                        if (stream_piece(c, lo, k, [&] { return may_alias(b, lo, k) || may_alias(l2, lo, k); }, at) ||
                            simd_piece(lo, k, [&] { return shifted_overlap(b, lo, k) || shifted_overlap(l2, lo, k); }, at)) {
                            advance_by(l2, k);
                            return false;
                        }
                    }
                    lo = std::transform(b, e, l2, lo, op);
                    advance_by(l2, k);
                } else {
                    for (; b != e; ++b, ++l2, ++lo) *lo = op(*b, *l2);
                }
                return false;
            },
            in, o);
        return o.get();
    } else {
        if constexpr (std::random_access_iterator<It1> && std::random_access_iterator<It2>) {
            const auto k = static_cast<std::size_t>(last1 - first1);
            const auto at = [&](std::size_t i) noexcept(noexcept(op(first1[i], first2[i]))) { return op(first1[i], first2[i]); };
            if (stream_piece(c, out, k, [&] { return may_alias(first1, out, k) || may_alias(first2, out, k); }, at) ||
                simd_piece(out, k, [&] { return shifted_overlap(first1, out, k) || shifted_overlap(first2, out, k); }, at))
                return out;
        }
        return std::transform(first1, last1, first2, out, op);
    }
}

}  // namespace detail

/// out[i] = op(first[i]); returns the end of the output.
template <class It, class Out, class Op>
Out transform(It first, It last, Out out, Op op) {
    return detail::transform(detail::store_choice{}, first, last, out, op);
}

/// out[i] = op(first1[i], first2[i]); returns the end of the output. With the same
/// segmentation everywhere this is one std::transform over raw pointers per segment.
template <class It1, class It2, class Out, class Op>
Out transform(It1 first1, It1 last1, It2 first2, Out out, Op op) {
    return detail::transform(detail::store_choice{}, first1, last1, first2, out, op);
}

namespace par {
/// out[i] = op(first[i]), by the owners of the output's segments (or of the input's), with
/// stores `mode`.
template <class It, class Out, class Op>
Out transform(stores mode, It first, It last, Out out, Op op) {
    const auto c = detail::choice_for<Out, It>(mode, first, last);
    if constexpr (detail::par_ready<It, Out>) {
        const auto n = static_cast<std::size_t>(last - first);
        detail::par_pieces(detail::driver(out, first), n, [&](std::size_t, std::size_t d0, std::size_t d1) {
            Op f = op;  // each piece its own, as std::transform's copy
            detail::transform(c, detail::at(first, d0), detail::at(first, d1), detail::at(out, d0), f);
        });
        return detail::at(out, n);
    } else {
        return detail::transform(c, first, last, out, op);
    }
}

/// out[i] = op(first1[i], first2[i]), by the owners of the output's segments (or of an
/// input's), with stores `mode`.
template <class It1, class It2, class Out, class Op>
Out transform(stores mode, It1 first1, It1 last1, It2 first2, Out out, Op op) {
    const auto c = detail::choice_for<Out>(mode, first1, last1, first2);
    if constexpr (detail::par_ready<It1, It2, Out>) {
        const auto n = static_cast<std::size_t>(last1 - first1);
        detail::par_pieces(detail::driver(out, first1, first2), n, [&](std::size_t, std::size_t d0, std::size_t d1) {
            Op f = op;
            detail::transform(c, detail::at(first1, d0), detail::at(first1, d1), detail::at(first2, d0),
                              detail::at(out, d0), f);
        });
        return detail::at(out, n);
    } else {
        return detail::transform(c, first1, last1, first2, out, op);
    }
}

/// par::transform with automatic stores.
template <class It, class Out, class Op>
Out transform(It first, It last, Out out, Op op) {
    return par::transform(stores::automatic, first, last, out, std::move(op));
}
template <class It1, class It2, class Out, class Op>
Out transform(It1 first1, It1 last1, It2 first2, Out out, Op op) {
    return par::transform(stores::automatic, first1, last1, first2, out, std::move(op));
}
}  // namespace par

// ---- fill ----------------------------------------------------------------------------------

namespace detail {
template <class It, class T>
void fill(const store_choice& c, It first, It last, const T& value) {
    if constexpr (segmented<It>) {
        for_each_segment(first, last, [&](const auto&, auto b, auto e) { detail::fill(c, b, e, value); });
    } else {
        if constexpr (std::random_access_iterator<It>) {
            // A copy: value may be an element of the range.
            const std::iter_value_t<It> v = value;
            if (stream_piece(c, first, static_cast<std::size_t>(last - first), [] { return false; },
                             [v](std::size_t) { return v; }))
                return;
        }
        std::fill(first, last, value);
    }
}
}  // namespace detail

template <class It, class T>
void fill(It first, It last, const T& value) {
    detail::fill(detail::store_choice{}, first, last, value);
}

namespace par {
/// Fills each segment's part on its owner, with stores `mode`.
template <class It, class T>
void fill(stores mode, It first, It last, const T& value) {
    const auto c = detail::choice_for<It>(mode, first, last);
    if constexpr (detail::par_ready<It>) {
        detail::par_pieces(first, static_cast<std::size_t>(last - first), [&](std::size_t, std::size_t d0, std::size_t d1) {
            detail::fill(c, detail::at(first, d0), detail::at(first, d1), value);
        });
    } else {
        detail::fill(c, first, last, value);
    }
}
/// par::fill with automatic stores.
template <class It, class T>
void fill(It first, It last, const T& value) {
    par::fill(stores::automatic, first, last, value);
}
}  // namespace par

// ---- copy ----------------------------------------------------------------------------------

namespace detail {
template <class It, class Out>
Out copy(const store_choice& c, It first, It last, Out out) {
    if constexpr (hierarchical<It, Out>) {
        cursor<Out> o(out);
        lockstep(
            first, last,
            [&](auto b, auto e, auto& lo) {
                const auto k = static_cast<std::size_t>(std::distance(b, e));
                if constexpr (std::random_access_iterator<decltype(b)>) {
                    if (stream_piece(c, lo, k, [&] { return may_alias(b, lo, k); }, [&](std::size_t i) { return b[i]; }))
                        return false;
                }
                lo = std::copy(b, e, lo);
                return false;
            },
            o);
        return o.get();
    } else {
        if constexpr (std::random_access_iterator<It>) {
            const auto k = static_cast<std::size_t>(last - first);
            if (stream_piece(c, out, k, [&] { return may_alias(first, out, k); }, [&](std::size_t i) { return first[i]; }))
                return out;
        }
        return std::copy(first, last, out);
    }
}
}  // namespace detail

/// Copies [first, last) to out (out must not lie in [first, last)); returns the end of the
/// output. Trivially copyable elements go by memmove, segment by segment.
template <class It, class Out>
Out copy(It first, It last, Out out) {
    return detail::copy(detail::store_choice{}, first, last, out);
}

namespace par {
/// Copies [first, last) to out, by the owners of the output's segments (or of the input's),
/// with stores `mode`.
template <class It, class Out>
Out copy(stores mode, It first, It last, Out out) {
    const auto c = detail::choice_for<Out, It>(mode, first, last);
    if constexpr (detail::par_ready<It, Out>) {
        const auto n = static_cast<std::size_t>(last - first);
        detail::par_pieces(detail::driver(out, first), n, [&](std::size_t, std::size_t d0, std::size_t d1) {
            detail::copy(c, detail::at(first, d0), detail::at(first, d1), detail::at(out, d0));
        });
        return detail::at(out, n);
    } else {
        return detail::copy(c, first, last, out);
    }
}
/// par::copy with automatic stores.
template <class It, class Out>
Out copy(It first, It last, Out out) {
    return par::copy(stores::automatic, first, last, out);
}
}  // namespace par

// ---- reduce, accumulate -------------------------------------------------------------------

namespace detail {

/// Whether reduce's fold over a contiguous range of Its is lane_sum: a plain sum (plain_sum)
/// of the elements behind a contiguous iterator.
template <class It, class T, class Op>
concept lane_reducible = std::contiguous_iterator<It> && plain_sum<T, std::iter_value_t<It>, Op>;

/// The two folds: std::reduce (any order) and std::accumulate (left to right). A plain sum of
/// a contiguous range is lane_sum, init + (the range's lanes): std::reduce's freedom of order
/// used for a fixed order that vectorizes (libstdc++'s std::reduce is one dependent chain).
struct by_reduce {
    template <class B, class T, class Op>
    static T run(B b, B e, T init, Op op) noexcept(lane_reducible<B, T, Op>) {
        if constexpr (lane_reducible<B, T, Op>) {
            if (b == e) return init;
            return static_cast<T>(init + lane_sum(std::to_address(b), static_cast<std::size_t>(e - b)));
        } else {
            return std::reduce(b, e, std::move(init), std::move(op));
        }
    }
};
struct by_accumulate {
    template <class B, class T, class Op>
    static T run(B b, B e, T init, Op op) {
        return std::accumulate(b, e, std::move(init), std::move(op));
    }
};

/// Fold::run segment by segment, in order, on a segmented range; Fold::run itself otherwise.
template <class Fold, class It, class T, class Op>
T fold(It first, It last, T init, Op op) {
    if constexpr (segmented<It>) {
        for_each_segment(first, last, [&](const auto&, auto b, auto e) { init = fold<Fold>(b, e, std::move(init), op); });
        return init;
    } else {
        return Fold::run(first, last, std::move(init), std::move(op));
    }
}

/// Whether fold_part cannot throw.
template <class Fold, class It, class T, class Op>
inline constexpr bool nothrow_fold_part = std::is_same_v<Fold, by_reduce> && lane_reducible<typename segment_part<It>::local, T, Op>;

/// One segment's part (not empty) folded over its segment's local range, as the sequential fold
/// does: par::reduce's and par::accumulate's parts, and a ccnuma::team thread's.
template <class Fold, class T, class It, class Op>
T fold_part(const segment_part<It>& p, const Op& op) noexcept(nothrow_fold_part<Fold, It, T, Op>) {
    // A plain sum starts each part from the identity, so that lane_sum reads the segment from
    // its (aligned) beginning.
    if constexpr (std::is_same_v<Fold, by_reduce> && plain_sum<T, std::iter_value_t<It>, Op>)
        return Fold::run(p.b, p.e, sum_identity<T>(), op);
    else
        return Fold::run(std::next(p.b), p.e, T(*p.b), op);
}

/// fold, each segment's part on its owner, the parts combined with init in segment order.
template <class Fold, class It, class T, class Op>
T par_fold(It first, It last, T init, Op op) {
    if constexpr (par_ready<It>) {
        return fold_segments(first, static_cast<std::size_t>(last - first), std::move(init), op,
                             [&op](const segment_part<It>& p) noexcept(nothrow_fold_part<Fold, It, T, Op>) {
                                 return fold_part<Fold, T>(p, op);
                             });
    } else
        return fold<Fold>(first, last, std::move(init), std::move(op));
}

}  // namespace detail

/// std::reduce, segment by segment: op must be associative and commutative.
template <class It, class T = std::iter_value_t<It>, class Op = std::plus<>>
T reduce(It first, It last, T init = T{}, Op op = {}) {
    return detail::fold<detail::by_reduce>(first, last, std::move(init), std::move(op));
}
namespace par {
/// Reduces each segment on its owner, then the segments' results in segment order: op must be
/// associative and commutative (as for std::reduce).
template <class It, class T = std::iter_value_t<It>, class Op = std::plus<>>
T reduce(It first, It last, T init = T{}, Op op = {}) {
    return detail::par_fold<detail::by_reduce>(first, last, std::move(init), std::move(op));
}
}  // namespace par

/// std::accumulate: a left fold in element order, so the result is the flat loop's, bit for bit.
template <class It, class T, class Op = std::plus<>>
T accumulate(It first, It last, T init, Op op = {}) {
    return detail::fold<detail::by_accumulate>(first, last, std::move(init), std::move(op));
}
namespace par {
/// A left fold within each segment, on its owner, and across the segments in order: op must
/// be associative (not commutative). Not bitwise the sequential accumulate for floating point.
template <class It, class T, class Op = std::plus<>>
T accumulate(It first, It last, T init, Op op = {}) {
    return detail::par_fold<detail::by_accumulate>(first, last, std::move(init), std::move(op));
}
}  // namespace par

// ---- inner_product -------------------------------------------------------------------------

/// std::inner_product: a left fold in element order.
template <class It1, class It2, class T, class Op1, class Op2>
T inner_product(It1 first1, It1 last1, It2 first2, T init, Op1 op1, Op2 op2) {
    if constexpr (detail::hierarchical<It1, It2>) {
        detail::cursor<It2> in(first2);
        detail::lockstep(
            first1, last1,
            [&](auto b, auto e, auto& l2) {
                if constexpr (std::random_access_iterator<std::remove_reference_t<decltype(l2)>>) {
                    init = std::inner_product(b, e, l2, std::move(init), op1, op2);
                    detail::advance_by(l2, e - b);
                } else {
                    for (; b != e; ++b, ++l2) init = op1(std::move(init), op2(*b, *l2));
                }
                return false;
            },
            in);
        return init;
    } else {
        return std::inner_product(first1, last1, first2, std::move(init), std::move(op1), std::move(op2));
    }
}
template <class It1, class It2, class T>
T inner_product(It1 first1, It1 last1, It2 first2, T init) {
    return ccnuma::inner_product(first1, last1, first2, std::move(init), std::plus<>{}, std::multiplies<>{});
}

namespace par {
/// inner_product by segments of the first range (or of the second), combined in order with
/// op1, which must be associative.
template <class It1, class It2, class T, class Op1, class Op2>
T inner_product(It1 first1, It1 last1, It2 first2, T init, Op1 op1, Op2 op2) {
    if constexpr (detail::par_ready<It1, It2>)
        return detail::fold_segments(detail::driver(first1, first2), static_cast<std::size_t>(last1 - first1),
                                     std::move(init), op1, [&](const auto& part) {
                                         const auto a = detail::at(first1, part.d0);
                                         const auto b = detail::at(first2, part.d0);
                                         return ccnuma::inner_product(std::next(a), detail::at(first1, part.d1), std::next(b),
                                                                      T(op2(*a, *b)), op1, op2);
                                     });
    else
        return ccnuma::inner_product(first1, last1, first2, std::move(init), std::move(op1), std::move(op2));
}
template <class It1, class It2, class T>
T inner_product(It1 first1, It1 last1, It2 first2, T init) {
    return par::inner_product(first1, last1, first2, std::move(init), std::plus<>{}, std::multiplies<>{});
}
}  // namespace par

// ---- count_if ------------------------------------------------------------------------------

template <class It, class Pred>
std::iter_difference_t<It> count_if(It first, It last, Pred pred) {
    if constexpr (segmented<It>) {
        std::iter_difference_t<It> n = 0;
        detail::for_each_segment(first, last, [&](const auto&, auto b, auto e) { n += ccnuma::count_if(b, e, pred); });
        return n;
    } else {
        return std::count_if(first, last, std::move(pred));
    }
}

namespace par {
template <class It, class Pred>
std::iter_difference_t<It> count_if(It first, It last, Pred pred) {
    if constexpr (detail::par_ready<It>) {
        std::vector<padded<std::iter_difference_t<It>>> partial(detail::owners_of(first).segments);
        detail::par_pieces(first, static_cast<std::size_t>(last - first), [&](std::size_t s, std::size_t d0, std::size_t d1) {
            partial[s].value = ccnuma::count_if(detail::at(first, d0), detail::at(first, d1), pred);
        });
        std::iter_difference_t<It> n = 0;
        for (const auto& p : partial) n += p.value;
        return n;
    } else {
        return ccnuma::count_if(first, last, std::move(pred));
    }
}
}  // namespace par

// ---- find_if -------------------------------------------------------------------------------

/// The first element that satisfies pred, or last; stops at the segment that has it.
template <class It, class Pred>
It find_if(It first, It last, Pred pred) {
    if constexpr (segmented<It>) {
        using tr = segmented_iterator_traits<It>;
        It found = last;
        detail::for_each_segment(first, last, [&](const auto& s, auto b, auto e) {
            const auto r = ccnuma::find_if(b, e, pred);
            if (r == e) return false;
            found = tr::compose(s, r);
            return true;
        });
        return found;
    } else {
        return std::find_if(first, last, std::move(pred));
    }
}

namespace par {
/// The first element that satisfies pred, or last. Segments after one that has a match skip
/// their search.
template <class It, class Pred>
It find_if(It first, It last, Pred pred) {
    if constexpr (detail::par_ready<It>) {
        const auto n = static_cast<std::size_t>(last - first);
        std::atomic<std::size_t> best{n};
        detail::par_pieces(first, n, [&](std::size_t, std::size_t d0, std::size_t d1) {
            if (d0 >= best.load(std::memory_order_relaxed)) return;
            const auto e = detail::at(first, d1);
            const auto r = ccnuma::find_if(detail::at(first, d0), e, pred);
            if (r == e) return;
            const auto d = static_cast<std::size_t>(r - first);
            for (std::size_t seen = best.load(); d < seen && !best.compare_exchange_weak(seen, d);) {
            }
        });
        return detail::at(first, best.load());
    } else {
        return ccnuma::find_if(first, last, std::move(pred));
    }
}
}  // namespace par

// ---- equal ---------------------------------------------------------------------------------

/// Whether [first1, last1) and [first2, first2 + (last1 - first1)) are equal; stops at the
/// first piece with a difference.
template <class It1, class It2, class Pred>
bool equal(It1 first1, It1 last1, It2 first2, Pred pred) {
    if constexpr (detail::hierarchical<It1, It2>) {
        detail::cursor<It2> in(first2);
        return !detail::lockstep(
            first1, last1,
            [&](auto b, auto e, auto& l2) {
                if constexpr (std::random_access_iterator<std::remove_reference_t<decltype(l2)>>) {
                    if (!std::equal(b, e, l2, pred)) return true;
                    detail::advance_by(l2, e - b);
                } else {
                    for (; b != e; ++b, ++l2)
                        if (!pred(*b, *l2)) return true;
                }
                return false;
            },
            in);
    } else {
        return std::equal(first1, last1, first2, std::move(pred));
    }
}
template <class It1, class It2>
bool equal(It1 first1, It1 last1, It2 first2) {
    return ccnuma::equal(first1, last1, first2, std::equal_to<>{});
}

namespace par {
template <class It1, class It2, class Pred>
bool equal(It1 first1, It1 last1, It2 first2, Pred pred) {
    if constexpr (detail::par_ready<It1, It2>) {
        std::atomic<bool> differ{false};
        detail::par_pieces(detail::driver(first1, first2), static_cast<std::size_t>(last1 - first1),
                           [&](std::size_t, std::size_t d0, std::size_t d1) {
                               if (differ.load(std::memory_order_relaxed)) return;
                               if (!ccnuma::equal(detail::at(first1, d0), detail::at(first1, d1), detail::at(first2, d0), pred))
                                   differ.store(true, std::memory_order_relaxed);
                           });
        return !differ.load();
    } else {
        return ccnuma::equal(first1, last1, first2, std::move(pred));
    }
}
template <class It1, class It2>
bool equal(It1 first1, It1 last1, It2 first2) {
    return par::equal(first1, last1, first2, std::equal_to<>{});
}
}  // namespace par

// ---- min_element, max_element --------------------------------------------------------------

namespace detail {
/// min_element (Largest false) and max_element, sequential or par::: one function object type,
/// so that the four differ only in their two flags.
template <bool Largest, bool Parallel>
struct extremum_fn {
    template <class It, class Comp = std::less<>>
    It operator()(It first, It last, Comp comp = {}) const {
        if constexpr (Parallel) return par_extremum<Largest>(first, last, std::move(comp));
        else return extremum<Largest>(first, last, std::move(comp));
    }
};
}  // namespace detail

/// The first smallest element (by comp, default <), or last for an empty range.
inline constexpr detail::extremum_fn<false, false> min_element{};
namespace par {
inline constexpr detail::extremum_fn<false, true> min_element{};
}  // namespace par

/// The first largest element (by comp, default <), or last for an empty range.
inline constexpr detail::extremum_fn<true, false> max_element{};
namespace par {
inline constexpr detail::extremum_fn<true, true> max_element{};
}  // namespace par

}  // namespace ccnuma
