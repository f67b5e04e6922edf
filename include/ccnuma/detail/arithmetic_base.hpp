#pragma once
// The arithmetic that ccnuma::vector and vector_view share, as a CRTP base: compound
// assignment from expressions and scalars, and std::valarray's member reductions.

#include <ccnuma/detail/evaluate.hpp>
#include <ccnuma/detail/expression.hpp>
#include <ccnuma/detail/reduce.hpp>

#include <string_view>
#include <type_traits>
#include <utility>

namespace ccnuma::detail {

/// The common part of vector and vector_view: elementwise assignment and compound assignment
/// from expressions and scalars, and the member reductions of std::valarray. Derived names
/// itself in errors with `static constexpr std::string_view type_name` ("ccnuma::vector").
template <class Derived, class T>
class arithmetic_base {
public:
    template <class X>
        requires operand<X> || std::is_convertible_v<const X&, T>
    Derived& operator+=(const X& x) { return self().assign(self() + x, "operator+="); }
    template <class X>
        requires operand<X> || std::is_convertible_v<const X&, T>
    Derived& operator-=(const X& x) { return self().assign(self() - x, "operator-="); }
    template <class X>
        requires operand<X> || std::is_convertible_v<const X&, T>
    Derived& operator*=(const X& x) { return self().assign(self() * x, "operator*="); }
    template <class X>
        requires operand<X> || std::is_convertible_v<const X&, T>
    Derived& operator/=(const X& x) { return self().assign(self() / x, "operator/="); }

    /// std::valarray's reductions; see ccnuma::sum, min, max.
    T sum() const { return fold_node(node_of(self()), sum_fold{}, {Derived::type_name, "sum"}, true); }
    T min() const { return fold_node(node_of(self()), extremum_fold<false>{}, {Derived::type_name, "min"}, false); }
    T max() const { return fold_node(node_of(self()), extremum_fold<true>{}, {Derived::type_name, "max"}, false); }
    /// The lazy expression f(x[i]) (std::valarray::apply, without the copy).
    template <class F>
    auto apply(F f) const {
        return make_mapped(self(), std::move(f));
    }

protected:
    template <class X>
    Derived& assign(const X& x, std::string_view member) {
        auto& d = self();
        assign_node(d.data(), d.size(), operand_node(x), d.schedule(), {Derived::type_name, member}, d.store_mode());
        return d;
    }

private:
    Derived& self() noexcept { return static_cast<Derived&>(*this); }
    const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace ccnuma::detail
