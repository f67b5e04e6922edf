#pragma once
/// @file
/// The segmented-iterator protocol (Austern, "Segmented Iterators and Hierarchical
/// Algorithms"; HPX's segmented_iterator_traits): what an iterator over a range made of
/// segments tells the hierarchical algorithms of algorithm.hpp. ccnuma's own segmented
/// iterators (segmented_iterator.hpp: seg_array, ccnuma::segments(v)) model it; so can any
/// other iterator, by specializing ccnuma::segmented_iterator_traits.
///
///     template <>
///     struct ccnuma::segmented_iterator_traits<my::flat_iterator> {
///         static constexpr bool is_segmented = true;
///         using iterator = my::flat_iterator;
///         using segment_iterator = my::block_iterator;   // ++, ==
///         using local_iterator = double*;                // random access within a segment
///         static segment_iterator segment(const iterator&);
///         static local_iterator local(const iterator&);
///         static local_iterator begin(const segment_iterator&);
///         static local_iterator end(const segment_iterator&);
///         static iterator compose(const segment_iterator&, local_iterator);
///         // Optional, for ccnuma::par::: the segment's number (0, 1, 2, ... in ++ order)
///         // and who owns it.
///         static std::size_t index(const segment_iterator&);
///         static ccnuma::segment_owners owners(const segment_iterator&);
///     };
///
/// The sequential algorithms need the first group; ccnuma::par:: also needs index() and
/// owners(), which say on which thread each segment is read and written.

#include <ccnuma/placement.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace ccnuma {

/// Who owns the segments of a segmented range: segment k (of `segments`) belongs to the thread
/// that `#pragma omp for schedule(static[, schedule.chunk])` over the segment indices gives it to,
/// in a team of schedule.threads threads (0: omp_get_max_threads()).
struct segment_owners {
    std::size_t segments = 0;
    ccnuma::schedule schedule{};
};

/// Austern's traits: for a segmented iterator, the segment it is in, its local (raw) iterator,
/// a segment's local range, the way back, and for par:: the segment's number and owners. Every
/// iterator without a specialization gets is_segmented == false and is treated as flat.
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

template <class It>
inline constexpr bool is_segmented_v = segmented_iterator_traits<It>::is_segmented;

/// An iterator that models the protocol: segment, local, begin, end and compose.
template <class It>
concept segmented = segmented_iterator_traits<It>::is_segmented &&
                    requires(const It& it, const typename segmented_iterator_traits<It>::segment_iterator& s,
                             typename segmented_iterator_traits<It>::local_iterator l) {
                        { segmented_iterator_traits<It>::segment(it) };
                        { segmented_iterator_traits<It>::local(it) };
                        { segmented_iterator_traits<It>::begin(s) };
                        { segmented_iterator_traits<It>::end(s) };
                        { segmented_iterator_traits<It>::compose(s, l) };
                    };

/// A segmented iterator whose segments have owner threads: ccnuma::par:: runs each segment's
/// part on its owner.
template <class It>
concept owned_segmented = segmented<It> && requires(const typename segmented_iterator_traits<It>::segment_iterator& s) {
    { segmented_iterator_traits<It>::index(s) } -> std::convertible_to<std::size_t>;
    { segmented_iterator_traits<It>::owners(s) } -> std::convertible_to<segment_owners>;
};

}  // namespace ccnuma
