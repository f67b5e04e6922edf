#pragma once
// ccnuma::vector's valarray-style arithmetic: the expression nodes, ccnuma::expression that
// wraps them, and the operators and elementwise functions that build them (public names,
// documented in docs/vector.md; vector.hpp includes this). A node is a small value that holds
// pointers to its operands' elements (never copies of them); `a = b + c * d` builds
// binary<add, leaf, binary<mul, leaf, leaf>>, which detail/evaluate.hpp evaluates as node[i]
// in one parallel loop that the compiler inlines into the same code as the hand-written triad.

#include <ccnuma/detail/line.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/schedule.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ccnuma::detail {

/// Makes a node of an operand type: specialized for ccnuma::vector, vector_view and expression.
template <class X>
struct as_node;

template <class X>
concept operand = requires(const std::remove_cvref_t<X>& x) { as_node<std::remove_cvref_t<X>>::make(x); };

template <operand X>
auto node_of(const X& x) {
    return as_node<std::remove_cvref_t<X>>::make(x);
}

/// Builtin arithmetic cannot throw, whatever noexcept the function objects declare; anything
/// else (a user's type or apply() function) is asked.
template <class Op, class... X>
inline constexpr bool nothrow_op = (requires { Op::builtin; } && (std::is_arithmetic_v<std::remove_cvref_t<X>> && ...)) ||
                                   std::is_nothrow_invocable_v<const Op&, X...>;

/// A node's evaluator (node.eval()): the node without what only placement needs (the leaves'
/// schedules, whose partitions are shared_ptrs). It is a plain aggregate of pointers and
/// scalars, so the copy a parallel loop's closure holds lives in registers: with the schedules
/// in the closure, GCC reloaded the triad's three pointers from memory after every streaming
/// store (a store it may not assume leaves the closure alone).
template <class Node>
using evaluator_of = std::remove_cvref_t<decltype(std::declval<const Node&>().eval())>;

/// Elements [p, p + n) of a container or view, and the schedule they were placed by: a pointer
/// to the container's own, which lives as long as the elements do. A copy would copy its
/// partition's shared_ptr at every node an expression builds (a triad builds eight leaves: 200
/// instructions of a 2,000-instruction call at n = 8, issue 35), and nodes of pointers alone are
/// trivially copyable.
template <class T>
struct leaf {
    using value_type = std::remove_const_t<T>;
    const value_type* p;
    std::size_t n;
    const ccnuma::schedule* sched;
    static constexpr bool is_scalar = false;
    static constexpr bool nothrow = true;
    /// How many ranges for_each_leaf visits.
    static constexpr std::size_t leaves = 1;

    const value_type& operator[](std::size_t i) const noexcept { return p[i]; }
    std::size_t size() const noexcept { return n; }
    const ccnuma::schedule* placed_by() const noexcept { return sched; }
    /// What evaluation needs of the node: its element pointers, no schedule (see evaluator).
    struct evaluator {
        const value_type* p;
        const value_type& operator[](std::size_t i) const noexcept { return p[i]; }
        /// Elements from i to the next cache line of this operand (to_line): where a sum of
        /// the expression starts its blocks, so that the loads of its first array never span
        /// two lines (issue 35: a dot from 16 bytes into a line ran at 0.58 to 0.68 of the speed
        /// from the line). Every node answers for its first array operand.
        std::size_t line_start(std::size_t i) const noexcept { return detail::to_line(p + i); }
    };
    evaluator eval() const noexcept { return {p}; }
    template <class F>
    void for_each_leaf(F&& f) const {
        f(static_cast<const void*>(p), static_cast<const void*>(p + n));
    }
};

/// A scalar operand, the same for every i.
template <class S>
struct scalar {
    using value_type = S;
    S v;
    static constexpr bool is_scalar = true;
    static constexpr bool nothrow = true;
    static constexpr std::size_t leaves = 0;

    const S& operator[](std::size_t) const noexcept { return v; }
    std::size_t line_start(std::size_t) const noexcept { return 0; }
    std::size_t size() const noexcept { return 0; }
    const ccnuma::schedule* placed_by() const noexcept { return nullptr; }
    const scalar& eval() const noexcept { return *this; }
    template <class F>
    void for_each_leaf(F&&) const {}
};

/// Size of an elementwise combination; a scalar takes any size.
template <class L, class R>
std::size_t common_size(const L& l, const R& r, const char* op) {
    if constexpr (L::is_scalar) return r.size();
    else if constexpr (R::is_scalar) return l.size();
    else {
        if (l.size() != r.size())
            throw_std_error(std_error::length_error, "ccnuma::vector expression",
                            std::string("operands of ") + op + " have different sizes, " + std::to_string(l.size()) +
                                " and " + std::to_string(r.size()),
                            "elementwise operations need equal sizes");
        return l.size();
    }
}

template <class Op, class L, class R>
struct binary {
    using value_type = std::decay_t<decltype(Op{}(std::declval<const L&>()[0], std::declval<const R&>()[0]))>;
    L l;
    R r;
    std::size_t n;
    static constexpr bool is_scalar = false;
    static constexpr std::size_t leaves = L::leaves + R::leaves;
    static constexpr bool nothrow =
        L::nothrow && R::nothrow &&
        nothrow_op<Op, decltype(std::declval<const L&>()[0]), decltype(std::declval<const R&>()[0])>;

    binary(L a, R b) : l(std::move(a)), r(std::move(b)), n(common_size(l, r, Op::symbol)) {}
    value_type operator[](std::size_t i) const noexcept(nothrow) { return Op{}(l[i], r[i]); }
    std::size_t size() const noexcept { return n; }
    const ccnuma::schedule* placed_by() const noexcept { return l.placed_by() ? l.placed_by() : r.placed_by(); }
    struct evaluator {
        evaluator_of<L> l;
        evaluator_of<R> r;
        value_type operator[](std::size_t i) const noexcept(nothrow) { return Op{}(l[i], r[i]); }
        std::size_t line_start(std::size_t i) const noexcept {
            if constexpr (L::leaves > 0) return l.line_start(i);
            else return r.line_start(i);
        }
    };
    evaluator eval() const { return {l.eval(), r.eval()}; }
    template <class F>
    void for_each_leaf(F&& f) const {
        l.for_each_leaf(f);
        r.for_each_leaf(f);
    }
};

template <class F, class A>
struct mapped {
    using value_type = std::decay_t<std::invoke_result_t<const F&, decltype(std::declval<const A&>()[0])>>;
    F f;
    A a;
    static constexpr bool is_scalar = false;
    static constexpr std::size_t leaves = A::leaves;
    static constexpr bool nothrow = A::nothrow && nothrow_op<F, decltype(std::declval<const A&>()[0])>;

    value_type operator[](std::size_t i) const noexcept(nothrow) { return f(a[i]); }
    std::size_t size() const noexcept { return a.size(); }
    const ccnuma::schedule* placed_by() const noexcept { return a.placed_by(); }
    struct evaluator {
        F f;
        evaluator_of<A> a;
        value_type operator[](std::size_t i) const noexcept(nothrow) { return f(a[i]); }
        std::size_t line_start(std::size_t i) const noexcept { return a.line_start(i); }
    };
    evaluator eval() const { return {f, a.eval()}; }
    template <class G>
    void for_each_leaf(G&& g) const {
        a.for_each_leaf(g);
    }
};

// The operations. `using std::sqrt; sqrt(x)` lets a user type's own sqrt (found by ADL) take
// part, as with std::valarray.
struct add { static constexpr bool builtin = true; static constexpr const char* symbol = "+"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { return x + y; } };
struct sub { static constexpr bool builtin = true; static constexpr const char* symbol = "-"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { return x - y; } };
struct mul { static constexpr bool builtin = true; static constexpr const char* symbol = "*"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { return x * y; } };
struct div { static constexpr bool builtin = true; static constexpr const char* symbol = "/"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { return x / y; } };
struct pow_op { static constexpr bool builtin = true; static constexpr const char* symbol = "pow"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { using std::pow; return pow(x, y); } };
// std::min semantics (the first if equal), without std::min's same-type requirement.
struct min_op { static constexpr bool builtin = true; static constexpr const char* symbol = "min"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { return y < x ? y : x; } };
struct max_op { static constexpr bool builtin = true; static constexpr const char* symbol = "max"; template <class X, class Y> auto operator()(const X& x, const Y& y) const { return x < y ? y : x; } };
struct neg { static constexpr bool builtin = true; template <class X> auto operator()(const X& x) const { return -x; } };
struct sqrt_op { static constexpr bool builtin = true; template <class X> auto operator()(const X& x) const { using std::sqrt; return sqrt(x); } };
struct abs_op { static constexpr bool builtin = true; template <class X> auto operator()(const X& x) const { using std::abs; return abs(x); } };
struct exp_op { static constexpr bool builtin = true; template <class X> auto operator()(const X& x) const { using std::exp; return exp(x); } };
struct log_op { static constexpr bool builtin = true; template <class X> auto operator()(const X& x) const { using std::log; return log(x); } };

}  // namespace ccnuma::detail

namespace ccnuma {

/// A lazy elementwise expression over vectors, views and scalars, as `b + c * d` makes. It is
/// evaluated when assigned to a vector or view, or reduced; it holds pointers to its operands,
/// so it must not outlive them (as with std::valarray's expression templates).
template <class Node>
class expression {
public:
    using value_type = typename Node::value_type;
    explicit expression(Node n) : node_(std::move(n)) {}
    value_type operator[](std::size_t i) const noexcept(Node::nothrow) { return node_[i]; }
    std::size_t size() const noexcept { return node_.size(); }
    const Node& node() const noexcept { return node_; }

private:
    Node node_;
};

namespace detail {

template <class N>
struct as_node<expression<N>> {
    static const N& make(const expression<N>& e) noexcept { return e.node(); }
};

template <class X>
auto operand_node(const X& x) {
    if constexpr (operand<X>) return node_of(x);
    else return scalar<X>{x};
}

template <class Op, class L, class R>
auto make_binary(const L& l, const R& r) {
    using node = binary<Op, decltype(operand_node(l)), decltype(operand_node(r))>;
    return expression<node>(node(operand_node(l), operand_node(r)));
}

template <class F, class X>
auto make_mapped(const X& x, F f) {
    using node = mapped<F, decltype(node_of(x))>;
    return expression<node>(node{std::move(f), node_of(x)});
}

template <class L, class R>
concept either_operand = operand<L> || operand<R>;

}  // namespace detail

// Elementwise arithmetic: lazy, evaluated on assignment. At least one side is a vector, view or
// expression; the other may be a scalar.
template <class L, class R>
    requires detail::either_operand<L, R>
auto operator+(const L& l, const R& r) {
    return detail::make_binary<detail::add>(l, r);
}
template <class L, class R>
    requires detail::either_operand<L, R>
auto operator-(const L& l, const R& r) {
    return detail::make_binary<detail::sub>(l, r);
}
template <class L, class R>
    requires detail::either_operand<L, R>
auto operator*(const L& l, const R& r) {
    return detail::make_binary<detail::mul>(l, r);
}
template <class L, class R>
    requires detail::either_operand<L, R>
auto operator/(const L& l, const R& r) {
    return detail::make_binary<detail::div>(l, r);
}
template <detail::operand X>
auto operator-(const X& x) {
    return detail::make_mapped(x, detail::neg{});
}

// Elementwise functions, as std::valarray has them.
template <detail::operand X>
auto sqrt(const X& x) {
    return detail::make_mapped(x, detail::sqrt_op{});
}
template <detail::operand X>
auto abs(const X& x) {
    return detail::make_mapped(x, detail::abs_op{});
}
template <detail::operand X>
auto exp(const X& x) {
    return detail::make_mapped(x, detail::exp_op{});
}
template <detail::operand X>
auto log(const X& x) {
    return detail::make_mapped(x, detail::log_op{});
}
template <class L, class R>
    requires detail::either_operand<L, R>
auto pow(const L& l, const R& r) {
    return detail::make_binary<detail::pow_op>(l, r);
}
/// Elementwise minimum and maximum of two operands (one may be a scalar); min(x) and max(x)
/// with one argument are the reductions.
template <class L, class R>
    requires detail::either_operand<L, R>
auto min(const L& l, const R& r) {
    return detail::make_binary<detail::min_op>(l, r);
}
template <class L, class R>
    requires detail::either_operand<L, R>
auto max(const L& l, const R& r) {
    return detail::make_binary<detail::max_op>(l, r);
}
/// The lazy expression f(x[i]). f is called concurrently from the team's threads.
template <detail::operand X, class F>
auto apply(const X& x, F f) {
    return detail::make_mapped(x, std::move(f));
}

}  // namespace ccnuma
