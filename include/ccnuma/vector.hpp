#pragma once
/// @file
/// ccnuma::vector<T, Policy>: a fixed-size contiguous container whose elements are constructed,
/// computed on and destroyed in parallel, each by the thread that `schedule(static)` gives it
/// to, with valarray-style arithmetic evaluated in one fused parallel loop.
///
///     ccnuma::vector<double> a(n), b(n, 1.0), c(n, [](std::size_t i) { return 0.5 * i; }), d(n, 2.0);
///     a = b + c * d;                        // one parallel loop, no temporaries (the triad)
///     a += 2.0 * ccnuma::sqrt(c);
///     double s = ccnuma::sum(a), r = ccnuma::dot(a, b);
///     std::sort(a.begin(), a.end());        // contiguous iterators: every <algorithm> works
///     std::printf("%s\n", a.placement().to_string().c_str());
///
///     // Elements that own heap memory get it from the thread that computes on them:
///     ccnuma::vector<std::vector<double>> rows(n, std::vector<double>(4096));
///
/// Why not std::vector with ccnuma::allocator: std::vector constructs serially, so the heap
/// memory owned by its elements lands on one node, and its capacity outlives the placement the
/// allocation gave. Here size is capacity, there is no push_back, and resize() places again.
///
/// Threads: every parallel operation runs a team of policy().sched.threads threads (0: the
/// size of the next parallel region, omp_get_max_threads()), so element i always belongs to
/// the same thread, the one whose first touch placed its page. Called inside a parallel region
/// it runs serially on the calling thread (a nested region of one thread).

#include <ccnuma/detail/expression.hpp>
#include <ccnuma/detail/lane_sum.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/streaming.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/stores.hpp>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

template <class T, class Policy = first_touch>
class vector;
template <class T>
class vector_view;

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

/// dst[i] = at(i) for i in [0, n) with streaming stores, each thread on the range that
/// schedule(static[, chunk]) gives it (static_ranges), so every element is written by the thread
/// that placed its page. Returns false, writing nothing, when `mode` says not to stream
/// n elements (stores.hpp's streams() decides) or T has no streaming stores here.
template <class T, class At>
bool stream_write(T* dst, std::size_t n, const ccnuma::schedule& s, ccnuma::stores mode, bool aliases, const At& at) {
    if constexpr (streamable<T>) {
        if (n == 0 || mode == ccnuma::stores::regular || !ccnuma::streams(mode, n * sizeof(T), aliases, true))
            return false;
        in_team(s, "a streaming write", [&] {
            const auto t = static_cast<unsigned>(omp_get_thread_num());
            const auto threads = static_cast<unsigned>(omp_get_num_threads());
            static_ranges(n, s.chunk, t, threads, [&](std::size_t lo, std::size_t hi) { stream_range(dst, lo, hi, at); });
        });
        return true;
    } else {
        (void)dst, (void)n, (void)s, (void)mode, (void)aliases, (void)at;
        return false;
    }
}

/// Writes node[i] to dst[i] for i in [0, n) with the destination's partition. An operand that
/// overlaps the destination other than element for element (a view shifted by k, say) is read
/// before it is overwritten: the result goes through a temporary then. `mode` chooses regular
/// or streaming stores (an operand that is the destination itself counts as aliasing).
template <class T, class Node>
void assign_node(T* dst, std::size_t n, const Node& e, const ccnuma::schedule& s, const char* what,
                 ccnuma::stores mode = ccnuma::stores::automatic) {
    if (!Node::is_scalar && e.size() != n)
        throw_length_error(std::string("ccnuma: ") + what + ": the expression has " + std::to_string(e.size()) +
                           " elements and the destination " + std::to_string(n) +
                           " (elementwise assignment needs equal sizes; resize() first)");
    bool shifted = false, aliases = false;
    const auto d0 = reinterpret_cast<std::uintptr_t>(dst), d1 = reinterpret_cast<std::uintptr_t>(dst + n);
    e.for_each_leaf([&](const void* b, const void* end) {
        const auto b0 = reinterpret_cast<std::uintptr_t>(b), b1 = reinterpret_cast<std::uintptr_t>(end);
        if (b0 < d1 && b1 > d0) aliases = true;
        if (b0 != d0 && b0 < d1 && b1 > d0) shifted = true;
    });
    if (shifted) {
        std::vector<T> tmp(n);
        parallel_for(n, s, [&, t = tmp.data()](std::size_t i) noexcept(Node::nothrow) { t[i] = e[i]; });
        parallel_for(n, s, [&, t = tmp.data()](std::size_t i) noexcept(std::is_nothrow_copy_assignable_v<T>) {
            dst[i] = t[i];
        });
        return;
    }
    if constexpr (Node::nothrow)
        if (stream_write(dst, n, s, mode, aliases, [node = e](std::size_t i) noexcept { return node[i]; })) return;
    // A copy of the node in the closure: its pointers are then locals of the outlined region,
    // which helps the compiler keep them in registers.
    parallel_for(n, s, [dst, node = e](std::size_t i) noexcept(Node::nothrow) { dst[i] = node[i]; });
}

/// One thread's partial result, alone in its cache lines.
template <class V>
struct alignas(false_sharing_range) fold_slot {
    std::optional<V> value;
};

template <class Node, class Fold>
typename Node::value_type fold_node(const Node& e, Fold fold, const char* what, bool empty_ok) {
    using V = typename Node::value_type;
    const std::size_t n = e.size();
    if (n == 0) {
        if (empty_ok) return V{};
        throw_length_error(std::string("ccnuma: ") + what + " of an empty range (it needs at least one element)");
    }
    const ccnuma::schedule s = e.placed_by() ? *e.placed_by() : ccnuma::schedule{};
    const int requested = team_threads(s, what);
    std::vector<fold_slot<V>> partial(static_cast<std::size_t>(requested));
    unsigned threads = 1;
    std::atomic<bool> failed{false};
    std::exception_ptr error;
#pragma omp parallel num_threads(requested)
    {
        const auto t = static_cast<unsigned>(omp_get_thread_num());
#pragma omp single nowait
        threads = static_cast<unsigned>(omp_get_num_threads());
        try {
            auto& slot = partial[t];
            static_ranges(n, s.chunk, t, static_cast<unsigned>(omp_get_num_threads()),
                          [&](std::size_t lo, std::size_t hi) { fold(slot, e, lo, hi); });
        } catch (...) {
            if (!failed.exchange(true)) error = std::current_exception();
        }
    }
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
    template <class Slot, class Node>
    void operator()(Slot& slot, const Node& e, std::size_t lo, std::size_t hi) const {
        using V = typename Node::value_type;
        V acc{};
        if constexpr (lane_summable<V>) {
            // The node by value: its pointers are then locals the compiler keeps in registers.
            acc = lane_sum<V>(hi - lo, [node = e, lo](std::size_t i) noexcept(Node::nothrow) { return node[lo + i]; });
        } else {
            acc = e[lo];
            for (std::size_t i = lo + 1; i < hi; ++i) acc += e[i];
        }
        slot.value = slot.value ? combine(*slot.value, acc) : acc;
    }
};

template <bool Max>
struct extremum_fold {
    template <class V>
    static V combine(const V& a, const V& b) { return Max ? (a < b ? b : a) : (b < a ? b : a); }
    template <class Slot, class Node>
    void operator()(Slot& slot, const Node& e, std::size_t lo, std::size_t hi) const {
        using V = typename Node::value_type;
        V acc = e[lo];
        for (std::size_t i = lo + 1; i < hi; ++i) acc = combine(acc, V(e[i]));
        slot.value = slot.value ? combine(*slot.value, acc) : acc;
    }
};

/// The common part of vector and vector_view: elementwise assignment and compound assignment
/// from expressions and scalars, and the member reductions of std::valarray.
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
    T sum() const { return fold_node(node_of(self()), sum_fold{}, "sum", true); }
    T min() const { return fold_node(node_of(self()), extremum_fold<false>{}, "min", false); }
    T max() const { return fold_node(node_of(self()), extremum_fold<true>{}, "max", false); }
    /// The lazy expression f(x[i]) (std::valarray::apply, without the copy).
    template <class F>
    auto apply(F f) const {
        return make_mapped(self(), std::move(f));
    }

protected:
    template <class X>
    Derived& assign(const X& x, const char* what) {
        auto& d = self();
        assign_node(d.data(), d.size(), operand_node(x), d.schedule(), what, d.store_mode());
        return d;
    }

private:
    Derived& self() noexcept { return static_cast<Derived&>(*this); }
    const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace detail

/// A fixed-size contiguous container placed by `Policy` (any policy of placement.hpp, or the
/// run-time ccnuma::policy), whose elements are constructed, assigned and destroyed in
/// parallel with the policy's static schedule.
template <class T, class Policy>
class vector : public detail::arithmetic_base<vector<T, Policy>, T> {
public:
    using value_type = T;
    using policy_type = Policy;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using pointer = T*;
    using const_pointer = const T*;
    using iterator = T*;
    using const_iterator = const T*;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    vector() = default;
    explicit vector(const Policy& p) : policy_(p) {}
    /// n value-initialized elements.
    explicit vector(size_type n, const Policy& p = Policy{}) : policy_(p) {
        build(n, [](T* q, std::size_t) noexcept(std::is_nothrow_default_constructible_v<T>) { ::new (q) T(); });
    }
    /// n copies of value, each made by its own thread (so memory a T owns is local too).
    vector(size_type n, const T& value, const Policy& p = Policy{}) : policy_(p) {
        if constexpr (detail::streamable<T>) {  // float, double: the bytes are the objects
            T* q = place(n);
            bool streamed = false;
            try {  // a bad team size or CCNUMA_STREAMING_THRESHOLD throws before anything is written
                streamed = detail::stream_write(q, n, schedule(), stores_, false,
                                                [value](std::size_t) noexcept { return value; });
            } catch (...) {
                free_only(q, n);
                throw;
            }
            if (streamed) {
                data_ = q;
                size_ = n;
                return;
            }
            free_only(q, n);
        }
        build(n, [&value](T* q, std::size_t) noexcept(std::is_nothrow_copy_constructible_v<T>) { ::new (q) T(value); });
    }
    /// Element i is gen(i). gen is called concurrently from the team's threads.
    template <class G>
        requires std::invocable<G&, size_type> && (!std::is_convertible_v<const G&, T>) &&
                 std::is_constructible_v<T, std::invoke_result_t<G&, size_type>>
    vector(size_type n, G gen, const Policy& p = Policy{}) : policy_(p) {
        build(n, [&gen](T* q, std::size_t i) noexcept(std::is_nothrow_invocable_v<G&, size_type> &&
                                                      std::is_nothrow_constructible_v<T, std::invoke_result_t<G&, size_type>>) {
            ::new (q) T(gen(i));
        });
    }
    /// Copies [first, last): in parallel for random-access input, else read serially first.
    template <std::input_iterator It>
    vector(It first, It last, const Policy& p = Policy{}) : policy_(p) {
        if constexpr (std::random_access_iterator<It>) {
            build(static_cast<size_type>(last - first), [first](T* q, std::size_t i) { ::new (q) T(first[static_cast<std::iter_difference_t<It>>(i)]); });
        } else {
            std::vector<T> staged(first, last);
            build(staged.size(), [&staged](T* q, std::size_t i) noexcept(std::is_nothrow_move_constructible_v<T>) {
                ::new (q) T(std::move(staged[i]));
            });
        }
    }
    vector(std::initializer_list<T> init, const Policy& p = Policy{}) : vector(init.begin(), init.end(), p) {}
    /// Evaluates an expression (or copies another vector or view) in parallel: `vector r = b + c;`.
    template <class X>
        requires detail::operand<X> && (!std::is_same_v<X, vector>)
    vector(const X& x, const Policy& p = Policy{}) : policy_(p) {
        const auto e = detail::node_of(x);
        build(e.size(), [&e](T* q, std::size_t i) noexcept(decltype(e)::nothrow && std::is_nothrow_constructible_v<T, typename decltype(e)::value_type>) {
            ::new (q) T(e[i]);
        });
    }
    /// A copy with the same policy, made in parallel: it is placed as the original.
    vector(const vector& other) : policy_(other.policy_), stores_(other.stores_) {
        build(other.size_, [src = other.data_](T* q, std::size_t i) noexcept(std::is_nothrow_copy_constructible_v<T>) {
            ::new (q) T(src[i]);
        });
    }
    vector(vector&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)),
          policy_(other.policy_),
          stores_(other.stores_) {}

    /// Equal sizes: assigned element by element in parallel, keeping this placement. Otherwise
    /// a new block placed by this vector's policy. Strong guarantee.
    vector& operator=(const vector& other) {
        if (this == &other) return *this;
        if (size_ == other.size_) {
            if (detail::stream_write(data_, size_, schedule(), stores_, false,
                                     [src = other.data_](std::size_t i) noexcept { return src[i]; }))
                return *this;
            detail::parallel_for(size_, schedule(), [d = data_, src = other.data_](std::size_t i) noexcept(
                                                        std::is_nothrow_copy_assignable_v<T>) { d[i] = src[i]; });
        } else {
            vector copy(other.begin(), other.end(), policy_);
            copy.stores_ = stores_;  // like the policy, the store mode stays this vector's
            swap(copy);
        }
        return *this;
    }
    vector& operator=(vector&& other) noexcept {
        vector gone(std::move(*this));
        swap(other);
        return *this;
    }
    vector& operator=(std::initializer_list<T> init) {
        vector replacement(init, policy_);
        replacement.stores_ = stores_;
        swap(replacement);
        return *this;
    }
    /// Elementwise, in parallel, with this vector's partition: `a = b + c * d;`, `a = 0.0;`.
    /// An expression of another size throws std::length_error naming both sizes.
    template <class X>
        requires(detail::operand<X> && !std::is_same_v<X, vector>) ||
                (!detail::operand<X> && std::is_convertible_v<const X&, T>)
    vector& operator=(const X& x) {
        return this->assign(x, "ccnuma::vector assignment");
    }

    ~vector() { release(data_, size_); }

    // Element access. operator[] is the raw index; at() checks.
    T& operator[](size_type i) noexcept { return data_[i]; }
    const T& operator[](size_type i) const noexcept { return data_[i]; }
    T& at(size_type i) { return data_[check(i)]; }
    const T& at(size_type i) const { return data_[check(i)]; }
    T& front() noexcept { return data_[0]; }
    const T& front() const noexcept { return data_[0]; }
    T& back() noexcept { return data_[size_ - 1]; }
    const T& back() const noexcept { return data_[size_ - 1]; }
    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }

    iterator begin() noexcept { return data_; }
    iterator end() noexcept { return data_ + size_; }
    const_iterator begin() const noexcept { return data_; }
    const_iterator end() const noexcept { return data_ + size_; }
    const_iterator cbegin() const noexcept { return data_; }
    const_iterator cend() const noexcept { return data_ + size_; }
    reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
    reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    size_type max_size() const noexcept { return std::numeric_limits<size_type>::max() / sizeof(T); }

    /// n elements in a new block placed by the policy. Kept elements are moved in parallel
    /// (copied if T's move can throw and T is copyable), new ones value-initialized or copied
    /// from value, each by its thread of the new partition; the old block is destroyed in
    /// parallel by its own partition. Strong guarantee unless T's move constructor can throw
    /// and T is not copyable (then basic: the old elements may be moved-from).
    void resize(size_type n) {
        regrow(n, [](T* q, std::size_t) noexcept(std::is_nothrow_default_constructible_v<T>) { ::new (q) T(); });
    }
    void resize(size_type n, const T& value) {
        regrow(n, [&value](T* q, std::size_t) noexcept(std::is_nothrow_copy_constructible_v<T>) { ::new (q) T(value); });
    }
    /// Destroys every element and frees the block.
    void clear() noexcept {
        release(data_, size_);
        data_ = nullptr;
        size_ = 0;
    }

    void swap(vector& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        std::swap(policy_, other.policy_);
        std::swap(stores_, other.stores_);
    }
    friend void swap(vector& a, vector& b) noexcept { a.swap(b); }

    const Policy& policy() const noexcept { return policy_; }
    /// The partition every parallel operation on this vector uses.
    ccnuma::schedule schedule() const noexcept { return detail::schedule_of(policy_); }
    /// data() is aligned to at least this (or alignof(T) if larger): a cache line and an AVX-512
    /// vector, so a thread's part of a loop starts on whole vectors and lines when it starts on a
    /// multiple of 64 / sizeof(T) elements. Blocks of a page or more are page-aligned.
    static constexpr std::size_t data_alignment = 64;
    /// How whole-range writes to this vector store (stores.hpp): assignment from an expression,
    /// a scalar or an equal-sized vector. automatic unless set; moves and swaps carry it along.
    ccnuma::stores store_mode() const noexcept { return stores_; }
    void set_store_mode(ccnuma::stores mode) noexcept { stores_ = mode; }
    /// Pages per node and the fraction local to their threads (pages.hpp). For interleave,
    /// on_node and preferred the locality is against plain schedule(static).
    placement_report placement() const { return report_placement(data_, size_, sizeof(T), schedule()); }

private:
    static constexpr std::size_t alignment() noexcept { return alignof(T) > data_alignment ? alignof(T) : data_alignment; }
    size_type check(size_type i) const {
        if (i >= size_) detail::throw_index_out_of_range("ccnuma::vector::at", i, size_);
        return i;
    }
    T* place(size_type n) const {
        if (n == 0) return nullptr;
        if (n > max_size())
            detail::throw_length_error("ccnuma::vector: " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                                       " bytes exceed max_size() " + std::to_string(max_size()));
        return static_cast<T*>(ccnuma::allocate(n * sizeof(T), policy_, sizeof(T), alignment()));
    }
    void release(T* p, size_type n) noexcept {
        if (p == nullptr) return;
        detail::parallel_destroy(p, n, schedule());
        ccnuma::deallocate(p, n * sizeof(T), policy_, alignment());
    }
    void free_only(T* p, size_type n) const noexcept {
        if (p != nullptr) ccnuma::deallocate(p, n * sizeof(T), policy_, alignment());
    }
    template <class Make>
    void build(size_type n, Make&& make) {
        T* p = place(n);
        try {
            detail::parallel_construct(p, n, schedule(), make);
        } catch (...) {
            free_only(p, n);
            throw;
        }
        data_ = p;
        size_ = n;
    }
    template <class Make>
    void regrow(size_type n, Make&& make_new) {
        if (n == size_) return;
        T* p = place(n);
        const size_type kept = std::min(size_, n);
        const auto s = schedule();
        // New elements first: if one throws, the old block is untouched.
        try {
            detail::parallel_construct(p, n, s, make_new, kept, n);
        } catch (...) {
            free_only(p, n);
            throw;
        }
        try {
            detail::parallel_construct(
                p, n, s,
                [old = data_](T* q, std::size_t i) noexcept(noexcept(T(std::move_if_noexcept(std::declval<T&>())))) {
                    ::new (q) T(std::move_if_noexcept(old[i]));
                },
                0, kept);
        } catch (...) {
            detail::parallel_for(n, s, [p, kept](std::size_t i) noexcept {
                if (i >= kept) p[i].~T();
            });
            free_only(p, n);
            throw;
        }
        release(data_, size_);
        data_ = p;
        size_ = n;
    }

    T* data_ = nullptr;
    size_type size_ = 0;
    [[no_unique_address]] Policy policy_{};
    ccnuma::stores stores_ = ccnuma::stores::automatic;
};

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

    vector_view(T* p, size_type n, ccnuma::schedule s = {}) noexcept : data_(p), size_(n), sched_(s) {}
    vector_view(const vector_view&) = default;
    vector_view& operator=(const vector_view& other)
        requires(!std::is_const_v<T>)
    {
        return this->assign(other, "ccnuma::vector_view assignment");
    }
    template <class X>
        requires(!std::is_const_v<T>) && ((detail::operand<X> && !std::is_same_v<X, vector_view>) ||
                                          (!detail::operand<X> && std::is_convertible_v<const X&, value_type>))
    vector_view& operator=(const X& x) {
        return this->assign(x, "ccnuma::vector_view assignment");
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
template <class T, class P>
vector_view<T> view(vector<T, P>& v) noexcept {
    vector_view<T> r{v.data(), v.size(), v.schedule()};
    r.set_store_mode(v.store_mode());
    return r;
}
template <class T, class P>
vector_view<const T> view(const vector<T, P>& v) noexcept {
    return {v.data(), v.size(), v.schedule()};
}

namespace detail {
template <class T, class P>
struct as_node<vector<T, P>> {
    static leaf<T> make(const vector<T, P>& v) noexcept { return {v.data(), v.size(), v.schedule()}; }
};
template <class T>
struct as_node<vector_view<T>> {
    static leaf<T> make(const vector_view<T>& v) noexcept { return {v.data(), v.size(), v.schedule()}; }
};
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
