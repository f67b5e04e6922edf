#pragma once
/// @file
/// Hierarchical algorithms (Austern, "Segmented Iterators and Hierarchical Algorithms"): on
/// segmented iterators (seg_array, ccnuma::segments(v)) they run as nested loops, an outer loop
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
/// par:: versions split the range by the segments of one segmented iterator (the output where
/// it is one, else the first input) and run the piece in segment s on the thread that owns s
/// (the schedule over segments the container was built with), so every segment is read and
/// written where its pages are. Function objects are called concurrently and may be copied.
/// Reductions combine the per-segment results in segment order, so the result depends on the
/// segmentation only, not on the team. Without a segmented iterator, or with an iterator that
/// is not random access, par:: runs the sequential version.

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/seg_array.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

namespace detail {

template <class It>
concept segmented = segmented_iterator_traits<It>::is_segmented;

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

// ---- par:: helpers --------------------------------------------------------------------

template <class It>
struct is_owned_iterator : std::false_type {};
template <class V>
struct is_owned_iterator<segmented_iterator<V>> : std::true_type {};
/// A segmented iterator whose segments have owner threads.
template <class It>
concept owned = is_owned_iterator<It>::value;

/// par:: splits by an owned iterator and moves every other iterator by offsets.
template <class... Its>
concept par_ready = (owned<Its> || ...) && (std::random_access_iterator<Its> && ...);

/// piece(s, d0, d1) for each part [d0, d1) of the positions [0, n) after `driver` that lies in
/// segment s of the driver's layout, on the thread that owns s, all in one parallel region.
/// The loop runs over every segment, so that the static schedule gives each its owner; the
/// first exception a piece throws stops the others at their next segment and is rethrown.
template <class V, class Piece>
void par_pieces(const segmented_iterator<V>& driver, std::size_t n, Piece&& piece) {
    if (n == 0) return;
    const auto& l = segment_access::layout(driver);
    const std::size_t i0 = segment_access::index(driver), i1 = i0 + n;
    parallel_for(l.segments, l.owners, [&](std::size_t s) {
        const std::size_t lo = std::max(i0, l.offset(s)), hi = std::min(i1, l.offset(s + 1));
        if (lo < hi) piece(s, lo - i0, hi - i0);
    });
}

template <class V>
std::size_t segments_of(const segmented_iterator<V>& it) noexcept {
    return segment_access::layout(it).segments;
}

template <class It>
It at(It first, std::size_t d) {
    return first + static_cast<std::iter_difference_t<It>>(d);
}

/// One segment's partial result, alone in its cache lines.
template <class T>
using partials = std::vector<padded<std::optional<T>>>;

}  // namespace detail

// ---- sequential hierarchical algorithms ------------------------------------------------

/// f(x) for every element, in order; returns f, as std::for_each does.
template <class It, class F>
F for_each(It first, It last, F f) {
    if constexpr (detail::segmented<It>) {
        detail::for_each_segment(first, last, [&](const auto&, auto b, auto e) { ccnuma::for_each(b, e, std::ref(f)); });
        return f;
    } else {
        return std::for_each(first, last, std::move(f));
    }
}

/// out[i] = op(first[i]); returns the end of the output.
template <class It, class Out, class Op>
Out transform(It first, It last, Out out, Op op) {
    if constexpr (detail::hierarchical<It, Out>) {
        detail::cursor<Out> o(out);
        detail::lockstep(
            first, last,
            [&](auto b, auto e, auto& lo) {
                lo = std::transform(b, e, lo, op);
                return false;
            },
            o);
        return o.get();
    } else {
        return std::transform(first, last, out, std::move(op));
    }
}

/// out[i] = op(first1[i], first2[i]); returns the end of the output. With the same
/// segmentation everywhere this is one std::transform over raw pointers per segment.
template <class It1, class It2, class Out, class Op>
Out transform(It1 first1, It1 last1, It2 first2, Out out, Op op) {
    if constexpr (detail::hierarchical<It1, It2, Out>) {
        detail::cursor<It2> in(first2);
        detail::cursor<Out> o(out);
        detail::lockstep(
            first1, last1,
            [&](auto b, auto e, auto& l2, auto& lo) {
                if constexpr (std::random_access_iterator<std::remove_reference_t<decltype(l2)>>) {
                    lo = std::transform(b, e, l2, lo, op);
                    detail::advance_by(l2, e - b);
                } else {
                    for (; b != e; ++b, ++l2, ++lo) *lo = op(*b, *l2);
                }
                return false;
            },
            in, o);
        return o.get();
    } else {
        return std::transform(first1, last1, first2, out, std::move(op));
    }
}

template <class It, class T>
void fill(It first, It last, const T& value) {
    if constexpr (detail::segmented<It>)
        detail::for_each_segment(first, last, [&](const auto&, auto b, auto e) { ccnuma::fill(b, e, value); });
    else
        std::fill(first, last, value);
}

/// Copies [first, last) to out (out must not lie in [first, last)); returns the end of the
/// output. Trivially copyable elements go by memmove, segment by segment.
template <class It, class Out>
Out copy(It first, It last, Out out) {
    if constexpr (detail::hierarchical<It, Out>) {
        detail::cursor<Out> o(out);
        detail::lockstep(
            first, last,
            [&](auto b, auto e, auto& lo) {
                lo = std::copy(b, e, lo);
                return false;
            },
            o);
        return o.get();
    } else {
        return std::copy(first, last, out);
    }
}

/// std::reduce, segment by segment: op must be associative and commutative.
template <class It, class T, class Op>
T reduce(It first, It last, T init, Op op) {
    if constexpr (detail::segmented<It>) {
        detail::for_each_segment(first, last,
                                 [&](const auto&, auto b, auto e) { init = ccnuma::reduce(b, e, std::move(init), op); });
        return init;
    } else {
        return std::reduce(first, last, std::move(init), std::move(op));
    }
}
template <class It, class T>
T reduce(It first, It last, T init) {
    return ccnuma::reduce(first, last, std::move(init), std::plus<>{});
}
template <class It>
std::iter_value_t<It> reduce(It first, It last) {
    return ccnuma::reduce(first, last, std::iter_value_t<It>{});
}

/// std::accumulate: a left fold in element order, so the result is the flat loop's, bit for bit.
template <class It, class T, class Op>
T accumulate(It first, It last, T init, Op op) {
    if constexpr (detail::segmented<It>) {
        detail::for_each_segment(
            first, last, [&](const auto&, auto b, auto e) { init = ccnuma::accumulate(b, e, std::move(init), op); });
        return init;
    } else {
        return std::accumulate(first, last, std::move(init), std::move(op));
    }
}
template <class It, class T>
T accumulate(It first, It last, T init) {
    return ccnuma::accumulate(first, last, std::move(init), std::plus<>{});
}

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

template <class It, class Pred>
std::iter_difference_t<It> count_if(It first, It last, Pred pred) {
    if constexpr (detail::segmented<It>) {
        std::iter_difference_t<It> n = 0;
        detail::for_each_segment(first, last, [&](const auto&, auto b, auto e) { n += ccnuma::count_if(b, e, pred); });
        return n;
    } else {
        return std::count_if(first, last, std::move(pred));
    }
}

/// The first element that satisfies pred, or last; stops at the segment that has it.
template <class It, class Pred>
It find_if(It first, It last, Pred pred) {
    if constexpr (detail::segmented<It>) {
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

/// The first smallest element (by comp), or last for an empty range.
template <class It, class Comp>
It min_element(It first, It last, Comp comp) {
    if constexpr (detail::segmented<It>) {
        using tr = segmented_iterator_traits<It>;
        It best = last;
        typename tr::local_iterator best_at{};
        detail::for_each_segment(first, last, [&](const auto& s, auto b, auto e) {
            const auto r = ccnuma::min_element(b, e, comp);
            if (r != e && (best == last || comp(*r, *best_at))) {
                best = tr::compose(s, r);
                best_at = r;
            }
        });
        return best;
    } else {
        return std::min_element(first, last, std::move(comp));
    }
}
template <class It>
It min_element(It first, It last) {
    return ccnuma::min_element(first, last, std::less<>{});
}

/// The first largest element (by comp), or last for an empty range.
template <class It, class Comp>
It max_element(It first, It last, Comp comp) {
    if constexpr (detail::segmented<It>) {
        using tr = segmented_iterator_traits<It>;
        It best = last;
        typename tr::local_iterator best_at{};
        detail::for_each_segment(first, last, [&](const auto& s, auto b, auto e) {
            const auto r = ccnuma::max_element(b, e, comp);
            if (r != e && (best == last || comp(*best_at, *r))) {
                best = tr::compose(s, r);
                best_at = r;
            }
        });
        return best;
    } else {
        return std::max_element(first, last, std::move(comp));
    }
}
template <class It>
It max_element(It first, It last) {
    return ccnuma::max_element(first, last, std::less<>{});
}

// ---- parallel: segment s on its owner thread ------------------------------------------

namespace detail {

/// Each segment's part reduced on its owner (fold = ccnuma::reduce or accumulate, started
/// from the part's first element), the parts then combined with init in segment order.
template <class It, class T, class Op, class Fold>
T fold_segments(It first, It last, T init, Op op, Fold fold) {
    partials<T> partial(segments_of(first));
    par_pieces(first, static_cast<std::size_t>(last - first), [&](std::size_t s, std::size_t d0, std::size_t d1) {
        const auto b = at(first, d0);
        partial[s].value = fold(std::next(b), at(first, d1), T(*b), op);
    });
    for (auto& p : partial)
        if (p.value) init = op(std::move(init), std::move(*p.value));
    return init;
}

/// Each segment's best element on its owner; then the first best over the segments in order.
/// `better(a, b)`: a replaces the best so far b.
template <class It, class Local, class Better>
It best_element(It first, It last, Local local, Better better) {
    partials<std::size_t> partial(segments_of(first));
    par_pieces(first, static_cast<std::size_t>(last - first), [&](std::size_t s, std::size_t d0, std::size_t d1) {
        const auto r = local(at(first, d0), at(first, d1));
        partial[s].value = static_cast<std::size_t>(r - first);
    });
    It best = last;
    for (const auto& p : partial)
        if (p.value) {
            const It candidate = at(first, *p.value);
            if (best == last || better(*candidate, *best)) best = candidate;
        }
    return best;
}

}  // namespace detail

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

/// out[i] = op(first[i]), by the owners of the output's segments (or of the input's).
template <class It, class Out, class Op>
Out transform(It first, It last, Out out, Op op) {
    if constexpr (detail::par_ready<It, Out>) {
        const auto n = static_cast<std::size_t>(last - first);
        auto piece = [&](std::size_t, std::size_t d0, std::size_t d1) {
            ccnuma::transform(detail::at(first, d0), detail::at(first, d1), detail::at(out, d0), op);
        };
        if constexpr (detail::owned<Out>) detail::par_pieces(out, n, piece);
        else detail::par_pieces(first, n, piece);
        return detail::at(out, n);
    } else {
        return ccnuma::transform(first, last, out, std::move(op));
    }
}

/// out[i] = op(first1[i], first2[i]), by the owners of the output's segments (or of an input's).
template <class It1, class It2, class Out, class Op>
Out transform(It1 first1, It1 last1, It2 first2, Out out, Op op) {
    if constexpr (detail::par_ready<It1, It2, Out>) {
        const auto n = static_cast<std::size_t>(last1 - first1);
        auto piece = [&](std::size_t, std::size_t d0, std::size_t d1) {
            ccnuma::transform(detail::at(first1, d0), detail::at(first1, d1), detail::at(first2, d0), detail::at(out, d0), op);
        };
        if constexpr (detail::owned<Out>) detail::par_pieces(out, n, piece);
        else if constexpr (detail::owned<It1>) detail::par_pieces(first1, n, piece);
        else detail::par_pieces(first2, n, piece);
        return detail::at(out, n);
    } else {
        return ccnuma::transform(first1, last1, first2, out, std::move(op));
    }
}

template <class It, class T>
void fill(It first, It last, const T& value) {
    if constexpr (detail::par_ready<It>) {
        detail::par_pieces(first, static_cast<std::size_t>(last - first), [&](std::size_t, std::size_t d0, std::size_t d1) {
            ccnuma::fill(detail::at(first, d0), detail::at(first, d1), value);
        });
    } else {
        ccnuma::fill(first, last, value);
    }
}

/// Copies [first, last) to out, by the owners of the output's segments (or of the input's).
template <class It, class Out>
Out copy(It first, It last, Out out) {
    if constexpr (detail::par_ready<It, Out>) {
        const auto n = static_cast<std::size_t>(last - first);
        auto piece = [&](std::size_t, std::size_t d0, std::size_t d1) {
            ccnuma::copy(detail::at(first, d0), detail::at(first, d1), detail::at(out, d0));
        };
        if constexpr (detail::owned<Out>) detail::par_pieces(out, n, piece);
        else detail::par_pieces(first, n, piece);
        return detail::at(out, n);
    } else {
        return ccnuma::copy(first, last, out);
    }
}


/// Reduces each segment on its owner, then the segments' results in segment order: op must be
/// associative and commutative (as for std::reduce).
template <class It, class T, class Op>
T reduce(It first, It last, T init, Op op) {
    if constexpr (detail::par_ready<It>)
        return detail::fold_segments(first, last, std::move(init), op, [](auto b, auto e, T acc, const Op& o) {
            return ccnuma::reduce(b, e, std::move(acc), o);
        });
    else
        return ccnuma::reduce(first, last, std::move(init), std::move(op));
}
template <class It, class T>
T reduce(It first, It last, T init) {
    return par::reduce(first, last, std::move(init), std::plus<>{});
}
template <class It>
std::iter_value_t<It> reduce(It first, It last) {
    return par::reduce(first, last, std::iter_value_t<It>{});
}

/// A left fold within each segment, on its owner, and across the segments in order: op must
/// be associative (not commutative). Not bitwise the sequential accumulate for floating point.
template <class It, class T, class Op>
T accumulate(It first, It last, T init, Op op) {
    if constexpr (detail::par_ready<It>)
        return detail::fold_segments(first, last, std::move(init), op, [](auto b, auto e, T acc, const Op& o) {
            return ccnuma::accumulate(b, e, std::move(acc), o);
        });
    else
        return ccnuma::accumulate(first, last, std::move(init), std::move(op));
}
template <class It, class T>
T accumulate(It first, It last, T init) {
    return par::accumulate(first, last, std::move(init), std::plus<>{});
}

/// inner_product by segments of the first range (or of the second), combined in order with
/// op1, which must be associative.
template <class It1, class It2, class T, class Op1, class Op2>
T inner_product(It1 first1, It1 last1, It2 first2, T init, Op1 op1, Op2 op2) {
    if constexpr (detail::par_ready<It1, It2>) {
        const auto n = static_cast<std::size_t>(last1 - first1);
        std::size_t segments = 0;
        if constexpr (detail::owned<It1>) segments = detail::segments_of(first1);
        else segments = detail::segments_of(first2);
        detail::partials<T> partial(segments);
        auto piece = [&](std::size_t s, std::size_t d0, std::size_t d1) {
            const auto a = detail::at(first1, d0);
            const auto b = detail::at(first2, d0);
            partial[s].value =
                ccnuma::inner_product(std::next(a), detail::at(first1, d1), std::next(b), T(op2(*a, *b)), op1, op2);
        };
        if constexpr (detail::owned<It1>) detail::par_pieces(first1, n, piece);
        else detail::par_pieces(first2, n, piece);
        for (auto& p : partial)
            if (p.value) init = op1(std::move(init), std::move(*p.value));
        return init;
    } else {
        return ccnuma::inner_product(first1, last1, first2, std::move(init), std::move(op1), std::move(op2));
    }
}
template <class It1, class It2, class T>
T inner_product(It1 first1, It1 last1, It2 first2, T init) {
    return par::inner_product(first1, last1, first2, std::move(init), std::plus<>{}, std::multiplies<>{});
}

template <class It, class Pred>
std::iter_difference_t<It> count_if(It first, It last, Pred pred) {
    if constexpr (detail::par_ready<It>) {
        std::vector<padded<std::iter_difference_t<It>>> partial(detail::segments_of(first));
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

template <class It1, class It2, class Pred>
bool equal(It1 first1, It1 last1, It2 first2, Pred pred) {
    if constexpr (detail::par_ready<It1, It2>) {
        const auto n = static_cast<std::size_t>(last1 - first1);
        std::atomic<bool> differ{false};
        auto piece = [&](std::size_t, std::size_t d0, std::size_t d1) {
            if (differ.load(std::memory_order_relaxed)) return;
            if (!ccnuma::equal(detail::at(first1, d0), detail::at(first1, d1), detail::at(first2, d0), pred))
                differ.store(true, std::memory_order_relaxed);
        };
        if constexpr (detail::owned<It1>) detail::par_pieces(first1, n, piece);
        else detail::par_pieces(first2, n, piece);
        return !differ.load();
    } else {
        return ccnuma::equal(first1, last1, first2, std::move(pred));
    }
}
template <class It1, class It2>
bool equal(It1 first1, It1 last1, It2 first2) {
    return par::equal(first1, last1, first2, std::equal_to<>{});
}


template <class It, class Comp>
It min_element(It first, It last, Comp comp) {
    if constexpr (detail::par_ready<It>)
        return detail::best_element(
            first, last, [&](It b, It e) { return ccnuma::min_element(b, e, comp); },
            [&](const auto& a, const auto& b) { return comp(a, b); });
    else
        return ccnuma::min_element(first, last, std::move(comp));
}
template <class It>
It min_element(It first, It last) {
    return par::min_element(first, last, std::less<>{});
}

template <class It, class Comp>
It max_element(It first, It last, Comp comp) {
    if constexpr (detail::par_ready<It>)
        return detail::best_element(
            first, last, [&](It b, It e) { return ccnuma::max_element(b, e, comp); },
            [&](const auto& a, const auto& b) { return comp(b, a); });
    else
        return ccnuma::max_element(first, last, std::move(comp));
}
template <class It>
It max_element(It first, It last) {
    return par::max_element(first, last, std::less<>{});
}

}  // namespace par

}  // namespace ccnuma
