#pragma once
// Expression nodes of ccnuma::vector's valarray-style arithmetic. A node is a small value that
// holds pointers to its operands' elements (never copies of them); `a = b + c * d` builds
// binary<plus, leaf, binary<multiplies, leaf, leaf>> and evaluates node[i] in one parallel
// loop, which the compiler inlines into the same code as the hand-written triad.

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/placement.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ccnuma::detail {

/// Makes a node of an operand type: specialized for ccnuma::vector, vector_view and expr.
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

/// Elements [p, p + n) of a container or view, and the schedule they were placed by.
template <class T>
struct leaf {
    using value_type = std::remove_const_t<T>;
    const value_type* p;
    std::size_t n;
    ccnuma::schedule sched;
    static constexpr bool is_scalar = false;
    static constexpr bool nothrow = true;

    const value_type& operator[](std::size_t i) const noexcept { return p[i]; }
    std::size_t size() const noexcept { return n; }
    const ccnuma::schedule* placed_by() const noexcept { return &sched; }
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

    const S& operator[](std::size_t) const noexcept { return v; }
    std::size_t size() const noexcept { return 0; }
    const ccnuma::schedule* placed_by() const noexcept { return nullptr; }
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
            throw_length_error(std::string("ccnuma::vector expression: operands of ") + op + " have different sizes, " +
                               std::to_string(l.size()) + " and " + std::to_string(r.size()) +
                               " (elementwise operations need equal sizes)");
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
    static constexpr bool nothrow =
        L::nothrow && R::nothrow &&
        nothrow_op<Op, decltype(std::declval<const L&>()[0]), decltype(std::declval<const R&>()[0])>;

    binary(L a, R b) : l(std::move(a)), r(std::move(b)), n(common_size(l, r, Op::symbol)) {}
    value_type operator[](std::size_t i) const noexcept(nothrow) { return Op{}(l[i], r[i]); }
    std::size_t size() const noexcept { return n; }
    const ccnuma::schedule* placed_by() const noexcept { return l.placed_by() ? l.placed_by() : r.placed_by(); }
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
    static constexpr bool nothrow = A::nothrow && nothrow_op<F, decltype(std::declval<const A&>()[0])>;

    value_type operator[](std::size_t i) const noexcept(nothrow) { return f(a[i]); }
    std::size_t size() const noexcept { return a.size(); }
    const ccnuma::schedule* placed_by() const noexcept { return a.placed_by(); }
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
