#pragma once
/// @file
/// ccnuma::vector_view: a non-owning view of contiguous elements (a std::vector, a span, a
/// pointer and a size, or a ccnuma::vector) that takes part in ccnuma::vector's expressions and
/// can be assigned from them, in parallel with the partition its memory was placed by.
///
///     std::vector<double> x(n, 1.0), y(n);                    // any allocator
///     ccnuma::view(y) = 2.0 * ccnuma::view(x) + 1.0;          // one parallel loop
///     double s = ccnuma::sum(ccnuma::view(x));
///     auto tail = ccnuma::view(y.data() + 1, n - 1);          // overlapping views are safe

#include <ccnuma/detail/arithmetic_base.hpp>
#include <ccnuma/detail/expression.hpp>
#include <ccnuma/schedule.hpp>
#include <ccnuma/stores.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ccnuma {

/// A non-owning view of contiguous elements that takes part in expressions and can be
/// assigned from them: `ccnuma::view(stdvec) = b + c;`. Its copy assignment copies elements
/// (as std::slice_array's does), it never rebinds.
template <class T>
class vector_view : public detail::arithmetic_base<vector_view<T>, std::remove_const_t<T>> {
public:
    using value_type = std::remove_const_t<T>;
    using element_type = T;
    using size_type = std::size_t;
    using iterator = T*;
    static constexpr std::string_view type_name = "ccnuma::vector_view";

    vector_view(T* p, size_type n, ccnuma::schedule s = {}) noexcept : data_(p), size_(n), sched_(s) {}
    vector_view(const vector_view&) = default;
    vector_view& operator=(const vector_view& other)
        requires(!std::is_const_v<T>)
    {
        return this->assign(other, "operator=");
    }
    template <class X>
        requires(!std::is_const_v<T>) && ((detail::operand<X> && !std::is_same_v<X, vector_view>) ||
                                          (!detail::operand<X> && std::is_convertible_v<const X&, value_type>))
    vector_view& operator=(const X& x) {
        return this->assign(x, "operator=");
    }

    T& operator[](size_type i) const noexcept { return data_[i]; }
    T* data() const noexcept { return data_; }
    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    T* begin() const noexcept { return data_; }
    T* end() const noexcept { return data_ + size_; }
    ccnuma::schedule schedule() const noexcept { return sched_; }
    /// As vector's: how assignments to the view store (automatic unless set).
    ccnuma::stores store_mode() const noexcept { return stores_; }
    void set_store_mode(ccnuma::stores mode) noexcept { stores_ = mode; }

private:
    // An expression's leaf points at sched_ rather than copying it (detail::leaf).
    friend struct detail::as_node<vector_view>;
    T* data_;
    size_type size_;
    ccnuma::schedule sched_;
    ccnuma::stores stores_ = ccnuma::stores::automatic;
};

/// Views for expressions: a std::vector with any allocator, a span, or a pointer and a size.
/// `s` is the partition the evaluation uses; give the one the memory was placed by.
template <class T, class A>
vector_view<T> view(std::vector<T, A>& v, ccnuma::schedule s = {}) noexcept {
    return {v.data(), v.size(), s};
}
template <class T, class A>
vector_view<const T> view(const std::vector<T, A>& v, ccnuma::schedule s = {}) noexcept {
    return {v.data(), v.size(), s};
}
template <class T, std::size_t E>
vector_view<T> view(std::span<T, E> v, ccnuma::schedule s = {}) noexcept {
    return {v.data(), v.size(), s};
}
template <class T>
vector_view<T> view(T* p, std::size_t n, ccnuma::schedule s = {}) noexcept {
    return {p, n, s};
}

namespace detail {
template <class T>
struct as_node<vector_view<T>> {
    static leaf<T> make(const vector_view<T>& v) noexcept { return {v.data(), v.size(), &v.sched_}; }
};
}  // namespace detail

}  // namespace ccnuma
