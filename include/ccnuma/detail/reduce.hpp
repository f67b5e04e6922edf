#pragma once
// Reductions of ccnuma::vector's operands (sum, min, max, dot, norm2; public names, documented
// in docs/vector.md): each thread folds its part of the operand's static partition
// (static_ranges) into a slot of its own, and the slots are combined in thread order.

#include <ccnuma/detail/expression.hpp>
#include <ccnuma/detail/lane_sum.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/slots.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/schedule.hpp>

#include <omp.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace ccnuma::detail {

template <class Node, class Fold>
typename Node::value_type fold_node(const Node& e, Fold fold, operation_name what, bool empty_ok) {
    using V = typename Node::value_type;
    const std::size_t n = e.size();
    if (n == 0) {
        if (empty_ok) return V{};
        throw_std_error(std_error::length_error, what, "the operand is empty", "it needs at least one element");
    }
    const ccnuma::schedule& s = e.placed_by() ? *e.placed_by() : static_schedule;
    check_covers(s, n, what);
    // A slot for each thread of the team the schedule asks for; a smaller team leaves the
    // last ones empty.
    slots<padded<std::optional<V>>> partial(static_cast<std::size_t>(detail::team_size(s, what)));
    // The node's evaluator and the slots by value in the body: parallel_ranges keeps them in
    // the region's closure, so that a thread reads no other line of this frame.
    using slot = padded<std::optional<V>>;
    using eval = decltype(e.eval());
    parallel_ranges(n, s, what, [ev = e.eval(), slot0 = partial.begin(), fold](std::size_t lo, std::size_t hi) noexcept(
                                    noexcept(fold(std::declval<slot&>(), std::declval<const eval&>(), lo, hi))) {
        fold(slot0[omp_get_thread_num()], ev, lo, hi);
    });
    // In thread order, so that a given team size always gives the same bits.
    std::optional<V> result;
    for (auto& p : partial)
        if (p.value) result = result ? Fold::combine(*result, *p.value) : *p.value;
    return *result;
}

/// Whether a fold of Eval's elements into a Slot cannot throw: copying the evaluator (the folds
/// carry it by value), reading an element, and copying, adding and comparing the value type
/// (arithmetic types), as sum_fold and extremum_fold do.
template <class Slot, class Eval>
inline constexpr bool nothrow_fold = noexcept(std::declval<const Eval&>()[std::size_t{}]) && std::is_nothrow_copy_constructible_v<Eval> &&
                                     std::is_arithmetic_v<typename std::remove_cvref_t<decltype(std::declval<Slot&>().value)>::value_type>;

struct sum_fold {
    template <class V>
    static V combine(const V& a, const V& b) { return a + b; }
    template <class Slot, class Eval>
    void operator()(Slot& slot, const Eval& ev, std::size_t lo, std::size_t hi) const noexcept(nothrow_fold<Slot, Eval>) {
        using V = typename std::remove_cvref_t<decltype(slot.value)>::value_type;
        V acc{};
        if constexpr (lane_summable<V>) {
            // The node's evaluator by value: its pointers are then locals the compiler keeps in
            // registers (evaluator_of, expression.hpp).
            // The blocks start on a cache line of the expression's first array (line_start).
            const std::size_t start = hi > lo ? ev.line_start(lo) : 0;
            acc = lane_sum<V>(hi - lo, [ev, lo](std::size_t i) noexcept(noexcept(ev[i])) { return ev[lo + i]; }, start);
        } else {
            acc = ev[lo];
            for (std::size_t i = lo + 1; i < hi; ++i) acc += ev[i];
        }
        slot.value = slot.value ? combine(*slot.value, acc) : acc;
    }
};

template <bool Max>
struct extremum_fold {
    template <class V>
    static V combine(const V& a, const V& b) { return Max ? (a < b ? b : a) : (b < a ? b : a); }
    template <class Slot, class Eval>
    void operator()(Slot& slot, const Eval& ev, std::size_t lo, std::size_t hi) const noexcept(nothrow_fold<Slot, Eval>) {
        using V = typename std::remove_cvref_t<decltype(slot.value)>::value_type;
        V acc = ev[lo];
        for (std::size_t i = lo + 1; i < hi; ++i) acc = combine(acc, V(ev[i]));
        slot.value = slot.value ? combine(*slot.value, acc) : acc;
    }
};

}  // namespace ccnuma::detail

namespace ccnuma {

// Reductions, in parallel over the operand's partition. The per-thread partial results are
// combined in thread order, so a given team size always gives the same bits; a different team
// size may round differently, as any parallel reduction does.
template <detail::operand X>
auto sum(const X& x) {
    return detail::fold_node(detail::node_of(x), detail::sum_fold{}, "ccnuma::sum", true);
}
/// The smallest element; throws std::length_error for an empty operand.
template <detail::operand X>
auto min(const X& x) {
    return detail::fold_node(detail::node_of(x), detail::extremum_fold<false>{}, "ccnuma::min", false);
}
template <detail::operand X>
auto max(const X& x) {
    return detail::fold_node(detail::node_of(x), detail::extremum_fold<true>{}, "ccnuma::max", false);
}
/// sum(x * y), fused: no temporary.
template <detail::operand X, detail::operand Y>
auto dot(const X& x, const Y& y) {
    return sum(x * y);
}
/// The Euclidean norm sqrt(sum(x * x)) of a real operand.
template <detail::operand X>
auto norm2(const X& x) {
    using std::sqrt;
    return sqrt(sum(x * x));
}

}  // namespace ccnuma
