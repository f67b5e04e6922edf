#pragma once
// Evaluation of ccnuma::vector's expressions: assignment of a node to a destination with the
// destination's partition, through a temporary where an operand overlaps it shifted, and the
// dispatch to streaming stores (stores.hpp's mode decides, detail/streaming.hpp stores).

#include <ccnuma/detail/expression.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/streaming.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/schedule.hpp>
#include <ccnuma/stores.hpp>

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma::detail {

/// Whether a write of n elements of T that reads `read` bytes streams under `mode`: the
/// decision of stream_write, and of a ccnuma::team's assign, whose threads each take it alike.
template <class T>
bool streams_write(std::size_t n, std::size_t read, ccnuma::stores mode, bool aliases) {
    if constexpr (streamable<T>)
        return n != 0 && mode != ccnuma::stores::regular && ccnuma::streams(mode, moved_bytes<T>(n, read), aliases, true);
    else
        return false;
}

/// dst[i] = at(i) for i in [0, n) with streaming stores, each thread on the range that
/// schedule(static[, chunk]) or its partition gives it (static_ranges), so every element is
/// written by the thread that placed its page. `read`: the bytes at(i) reads over the whole
/// range (0 for a fill). Returns false, writing nothing, when `mode` says not to stream this
/// write (stores.hpp's streams() decides, on moved_bytes) or T has no streaming stores here.
template <class T, class At>
bool stream_write(T* dst, std::size_t n, std::size_t read, const ccnuma::schedule& s, ccnuma::stores mode, bool aliases,
                  const At& at) {
    if constexpr (streamable<T>) {
        if (!streams_write<T>(n, read, mode, aliases)) return false;
        // The closure by value (parallel_ranges): each thread reads its own copy of dst and
        // the evaluator, not the caller's frame.
        parallel_ranges(n, s, "a streaming write",
                        [dst, a = region_copy(at)](std::size_t lo, std::size_t hi) noexcept { stream_range(dst, lo, hi, a); });
        return true;
    } else {
        (void)dst, (void)n, (void)read, (void)s, (void)mode, (void)aliases, (void)at;
        return false;
    }
}

/// The bytes an expression reads from its operands over its whole length: the union of its
/// leaves' ranges, so an array counts once however often the expression names it (b * b reads
/// b's 8 n bytes once: the second read of each element hits the line the first brought in),
/// and two views that overlap count what they cover together. Scalars read nothing. What the
/// caches must hold, which is what `automatic` weighs.
template <class Node>
std::size_t operand_bytes(const Node& e) {
    if constexpr (Node::leaves == 0) {
        return 0;
    } else {
        std::array<std::pair<std::uintptr_t, std::uintptr_t>, Node::leaves> ranges{};
        std::size_t k = 0;
        e.for_each_leaf([&](const void* b, const void* end) {
            ranges[k++] = {reinterpret_cast<std::uintptr_t>(b), reinterpret_cast<std::uintptr_t>(end)};
        });
        return union_bytes(ranges);
    }
}

/// Whether writing a Node's element to a T cannot throw: the assignment from the node's value
/// type, which is what the loop does (T's own copy assignment may be noexcept while its
/// assignment from another type throws). Only then may the loop be an `omp simd` one, out of
/// which no exception may leave.
template <class T, class Node>
inline constexpr bool nothrow_element_assign = std::is_nothrow_assignable_v<T&, const typename Node::value_type&>;

/// Throws std::length_error for an expression whose size is not the destination's n.
template <class Node>
void check_assign_size(const Node& e, std::size_t n, operation_name what) {
    if (!Node::is_scalar && e.size() != n)
        throw_std_error(std_error::length_error, what,
                        "the expression has " + std::to_string(e.size()) + " elements and the destination " +
                            std::to_string(n),
                        "elementwise assignment needs equal sizes; resize() first");
}

/// How an assignment's operands overlap its destination dst[0, n): `aliases`, one overlaps it
/// (the destination itself counts); `shifted`, one overlaps it other than element for element
/// (a view shifted by k), so every element must be read before any is written.
struct overlap {
    bool aliases = false, shifted = false;
};
template <class T, class Node>
overlap overlap_of(const T* dst, std::size_t n, const Node& e) {
    overlap o;
    const auto d0 = reinterpret_cast<std::uintptr_t>(dst), d1 = reinterpret_cast<std::uintptr_t>(dst + n);
    e.for_each_leaf([&](const void* b, const void* end) {
        const auto b0 = reinterpret_cast<std::uintptr_t>(b), b1 = reinterpret_cast<std::uintptr_t>(end);
        if (b0 < d1 && b1 > d0) o.aliases = true;
        if (b0 != d0 && b0 < d1 && b1 > d0) o.shifted = true;
    });
    return o;
}

/// Writes node[i] to dst[i] for i in [0, n) with the destination's partition. An operand that
/// overlaps the destination other than element for element (a view shifted by k, say) is read
/// before it is overwritten: the result goes through a temporary then. `mode` chooses regular
/// or streaming stores (an operand that is the destination itself counts as aliasing).
template <class T, class Node>
void assign_node(T* dst, std::size_t n, const Node& e, const ccnuma::schedule& s, operation_name what,
                 ccnuma::stores mode = ccnuma::stores::automatic) {
    check_assign_size(e, n, what);
    const auto [aliases, shifted] = overlap_of(dst, n, e);
    if (shifted) {
        std::vector<T> tmp(n);
        parallel_for(n, s, [&, t = tmp.data()](std::size_t i) noexcept(Node::nothrow && nothrow_element_assign<T, Node>) { t[i] = e[i]; });
        parallel_for(n, s, [&, t = tmp.data()](std::size_t i) noexcept(std::is_nothrow_copy_assignable_v<T>) {
            dst[i] = t[i];
        });
        return;
    }
    if constexpr (Node::nothrow)
        if (stream_write(dst, n, operand_bytes(e), s, mode, aliases, [node = e.eval()](std::size_t i) noexcept { return node[i]; }))
            return;
    // A copy of the node's evaluator in the closure: its pointers are then locals of the outlined
    // region, which the compiler keeps in registers (evaluator_of, expression.hpp). An operand
    // here is the destination itself or does not overlap it, so element i depends on nothing
    // but element i of the operands: the loop is elementwise.
    const auto node = e.eval();
    if constexpr (Node::nothrow && nothrow_element_assign<T, Node>)
        parallel_elementwise(n, s, dst, [dst, node](std::size_t i) noexcept { dst[i] = node[i]; });
    else
        parallel_for(n, s, [dst, node](std::size_t i) noexcept(Node::nothrow && nothrow_element_assign<T, Node>) { dst[i] = node[i]; });
}

}  // namespace ccnuma::detail
