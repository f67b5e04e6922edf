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
///
/// The parts live where their concept does: the lazy arithmetic and its operators in
/// detail/expression.hpp, evaluation and streaming dispatch in detail/evaluate.hpp, the
/// reductions (sum, min, max, dot, norm2) in detail/reduce.hpp, views in vector_view.hpp. This
/// header is the container, and includes them all, so `#include <ccnuma/vector.hpp>` is all a
/// user writes.

#include <ccnuma/detail/arithmetic_base.hpp>
#include <ccnuma/detail/evaluate.hpp>
#include <ccnuma/detail/expression.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/reduce.hpp>
#include <ccnuma/detail/streaming.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/schedule.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/vector_view.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

template <class T, class Policy = first_touch>
class vector;

/// A fixed-size contiguous container placed by `Policy` (any policy of placement.hpp, or the
/// run-time ccnuma::policy), whose elements are constructed, assigned and destroyed in
/// parallel with the policy's static schedule.
template <class T, class Policy>
class vector : public detail::arithmetic_base<vector<T, Policy>, T> {
public:
    static constexpr std::string_view type_name = "ccnuma::vector";
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
        if constexpr (detail::streamable<T>)
            fill_build(n, T());
        else
            build(n, [](T* q, std::size_t) noexcept(std::is_nothrow_default_constructible_v<T>) { ::new (q) T(); });
    }
    /// n copies of value, each made by its own thread (so memory a T owns is local too).
    vector(size_type n, const T& value, const Policy& p = Policy{}) : policy_(p) {
        if constexpr (detail::streamable<T>)
            fill_build(n, value);
        else
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
        if constexpr (detail::streamable<T> && std::contiguous_iterator<It> && std::is_same_v<std::iter_value_t<It>, T>) {
            const auto n = static_cast<size_type>(last - first);
            place_and_write(n, [&](T* q) { copy_into(q, std::to_address(first), n, {type_name, "vector(first, last)"}); });
        } else if constexpr (std::random_access_iterator<It>) {
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
        using node = std::remove_const_t<decltype(e)>;
        if constexpr (detail::streamable<T> && node::nothrow && std::is_nothrow_assignable_v<T&, typename node::value_type>)
            place_and_write(e.size(), [&](T* q) { detail::assign_node(q, e.size(), e, schedule(), {type_name, "vector(expr)"}, stores_); });
        else
            build(e.size(), [&e](T* q, std::size_t i) noexcept(node::nothrow && std::is_nothrow_constructible_v<T, typename node::value_type>) {
                ::new (q) T(e[i]);
            });
    }
    /// A copy with the same policy, made in parallel: it is placed as the original.
    vector(const vector& other) : policy_(other.policy_), stores_(other.stores_) {
        if constexpr (detail::streamable<T>)
            place_and_write(other.size_, [&](T* q) { copy_into(q, other.data_, other.size_, {type_name, "vector(const vector&)"}); });
        else
            build(other.size_, [src = other.data_](T* q, std::size_t i) noexcept(std::is_nothrow_copy_constructible_v<T>) {
                ::new (q) T(src[i]);
            });
    }
    vector(vector&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)),
          policy_(other.policy_),
          stores_(other.stores_) {}

    /// Equal sizes: assigned in parallel, each thread its part of this vector's partition,
    /// keeping this placement; if an element's assignment throws, the elements assigned stay
    /// assigned (basic guarantee). Otherwise a new block placed by this vector's policy (strong
    /// guarantee).
    vector& operator=(const vector& other) {
        if (this == &other) return *this;
        if (size_ == other.size_) {
            copy_into(data_, other.data_, size_, {type_name, "operator="});
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
        return this->assign(x, "operator=");
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
            detail::throw_std_error(detail::std_error::length_error, type_name,
                                    std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
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
    /// float and double, whose bytes are the objects (construction by value, from an expression,
    /// by copy, from a contiguous range of T): places a block of n elements and has
    /// write(q) write all of them with the whole-range writers of assignment (streaming stores
    /// where the mode says so, otherwise one loop per thread over its part of the partition, an
    /// `omp simd` loop or a memmove). Through build()'s element-by-element construction these
    /// loops ran scalar at GCC's -O2 (its cost model vectorizes no loop that needs an epilogue or
    /// an alias check). What write throws (a bad team size, CCNUMA_STREAMING_THRESHOLD) it throws
    /// before anything is written, and the block is freed.
    template <class Write>
    void place_and_write(size_type n, Write&& write) {
        static_assert(detail::streamable<T>, "only bytes that are the objects are written without construction");
        T* q = place(n);
        try {
            write(q);
        } catch (...) {
            free_only(q, n);
            throw;
        }
        data_ = q;
        size_ = n;
    }
    /// n copies of value, written as `v = value` writes them (assign_node of a scalar). The block
    /// that a fill which did not stream gave back had been placed already, so vector(n, value)
    /// placed two and took 1.9 to 3.2 times as long as an expert's mmap and simd fill (2 threads).
    void fill_build(size_type n, T value) {
        place_and_write(n, [&](T* q) { detail::assign_node(q, n, detail::scalar<T>{value}, schedule(), {type_name, "vector(n, value)"}, stores_); });
    }
    /// dst[i] = src[i] for i < n, each thread its part of this vector's partition:
    /// streaming where the mode says so, otherwise whole ranges through std::copy, a memmove for
    /// trivially copyable T (an element loop ran scalar at GCC's -O2, 0.22 of the expert's
    /// STREAM copy at 128 KB on 2 threads). If an element's assignment throws, what was assigned
    /// stays assigned.
    void copy_into(T* dst, const T* src, size_type n, detail::operation_name what) {
        if (detail::stream_write(dst, n, detail::moved_bytes<T>(n, 0), schedule(), stores_, false,
                                 [src](std::size_t i) noexcept { return src[i]; }))
            return;
        detail::parallel_ranges(n, schedule(), what,
                                [dst, src](std::size_t lo, std::size_t hi) noexcept(std::is_nothrow_copy_assignable_v<T>) {
                                    std::copy(src + lo, src + hi, dst + lo);
                                });
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
        if constexpr (detail::streamable<T>) {
            // Bytes that are the objects: one region, in which each thread copies the kept
            // elements of its part of the new partition and fills the rest, as whole ranges
            // (a memcpy, the two blocks being distinct, and an `omp simd` loop). The two
            // element-by-element regions of regrow_elements ran scalar at GCC's -O2, each testing
            // every index of the block against its range.
            // Nothing here throws once the team has started; a bad team size throws before.
            T value{};
            make_new(&value, kept);
            try {
                detail::parallel_ranges(n, s, {type_name, "resize"}, [p, old = data_, kept, value](std::size_t lo, std::size_t hi) noexcept {
                    const std::size_t k = std::clamp(kept, lo, hi);  // [lo, k) kept, [k, hi) new
                    if (k > lo) std::memcpy(p + lo, old + lo, (k - lo) * sizeof(T));
                    CCNUMA_DETAIL_ELEMENTWISE_SIMD
                    for (std::size_t i = k; i < hi; ++i) p[i] = value;
                });
            } catch (...) {
                free_only(p, n);
                throw;
            }
            release(data_, size_);
            data_ = p;
            size_ = n;
        } else {
            regrow_elements(p, n, kept, s, make_new);
        }
    }
    /// regrow for other types: the new elements built first, then the kept ones moved, each
    /// by its thread of the new partition.
    template <class Make>
    void regrow_elements(T* p, size_type n, size_type kept, const ccnuma::schedule& s, Make& make_new) {
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
            // New elements exist only when the block grew; then the first construction above
            // has checked the schedule against n, and this loop cannot throw. A shrink whose
            // schedule cannot cover n throws from the construction just above, before any
            // element is built, and must not call into the same check again.
            if (kept < n)
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

/// A view of a ccnuma::vector: the vector's own partition, and its store mode.
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
    static leaf<T> make(const vector<T, P>& v) noexcept { return {v.data(), v.size(), &schedule_of(v.policy())}; }
};
}  // namespace detail

}  // namespace ccnuma
