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

namespace ccnuma::detail {

template <class Node, class Fold>
typename Node::value_type fold_node(const Node& e, Fold fold, operation_name what, bool empty_ok) {
    using V = typename Node::value_type;
    const std::size_t n = e.size();
    if (n == 0) {
        if (empty_ok) return V{};
        throw_std_error(std_error::length_error, what, "the operand is empty", "it needs at least one element");
    }
    static const ccnuma::schedule plain{};
    const ccnuma::schedule& s = e.placed_by() ? *e.placed_by() : plain;
    check_covers(s, n, what);
    const int requested = detail::team_size(s, what);
    // Each thread's partial result, alone in its cache lines.
    slots<padded<std::optional<V>>> partial(static_cast<std::size_t>(requested));
    unsigned threads = 1;
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    // An explicit size, not in_team's default team: `partial` has a slot for each thread.
    // What every thread reads is copied into the region's closure (the node's evaluator, the
    // slots, n): each other line of this frame a thread reads is a cache miss on every call,
    // which the expert's region does not pay.
    open_team(requested, [&, ev = e.eval(), slot0 = partial.begin(), n] {
        const auto t = static_cast<unsigned>(omp_get_thread_num());
        const auto team = static_cast<unsigned>(omp_get_num_threads());
        if (t == 0) threads = team;
        try {
            auto& slot = slot0[t];
            static_ranges(n, s, t, team, [&](std::size_t lo, std::size_t hi) { fold(slot, ev, lo, hi); });
        } catch (...) {
            if (!failed.exchange(true)) error = std::current_exception();
        }
    });
    if (error) std::rethrow_exception(error);
    // In thread order, so that a given team size always gives the same bits.
    std::optional<V> result;
    for (unsigned t = 0; t < threads; ++t)
        if (partial[t].value) result = result ? Fold::combine(*result, *partial[t].value) : *partial[t].value;
    return *result;
}

struct sum_fold {
    template <class V>
    static V combine(const V& a, const V& b) { return a + b; }
    template <class Slot, class Eval>
    void operator()(Slot& slot, const Eval& ev, std::size_t lo, std::size_t hi) const {
        using V = typename std::remove_cvref_t<decltype(slot.value)>::value_type;
        V acc{};
        if constexpr (lane_summable<V>) {
            // The node's evaluator by value: its pointers are then locals the compiler keeps in
            // registers (evaluator_of, expression.hpp).
            acc = lane_sum<V>(hi - lo, [ev, lo](std::size_t i) noexcept(noexcept(ev[i])) { return ev[lo + i]; });
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
    void operator()(Slot& slot, const Eval& ev, std::size_t lo, std::size_t hi) const {
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
