#pragma once
/// @file
/// Placement for C++ containers and classes: a standard allocator, a pmr memory resource, and
/// a CRTP base with a placing class-level operator new[] (the poster's overloaded new[]).
///
///     std::vector<double, ccnuma::allocator<double>> a(n);   // pages first-touched in parallel
///     ccnuma::allocator<double, ccnuma::blocked> al;          // pages bound per thread by mbind
///     std::vector<double, decltype(al)> b(n, 0.0, al);        // serial fill, placement holds
///
///     ccnuma::memory_resource res{ccnuma::interleave{}};
///     std::pmr::vector<double> c(n, &res);                    // pages round-robin over the nodes
///
///     struct cell : ccnuma::parallel_new<cell> { double v[8]; };
///     cell* cells = new cell[n];                              // storage placed before construction
///
/// The allocation places the pages; the container then constructs its elements serially, which
/// writes pages that are already placed. Elements that own heap memory of their own get that
/// memory from the constructing thread; ccnuma::vector constructs in parallel for that reason.

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/placement.hpp>

#include <cstddef>
#include <limits>
#include <memory_resource>
#include <new>
#include <type_traits>

namespace ccnuma {

/// A standard allocator whose blocks are placed by `Policy` (any type of placement.hpp), with
/// the static partition taken over elements of type T.
namespace detail {
// A wrong policy type says so in one line; as a base, so that the allocator itself stays a
// complete class and the container using it adds no cascade of errors.
template <class Policy>
struct allocator_policy_check {
    static_assert(placement_policy<Policy>,
                  "ccnuma::allocator<T, Policy>: Policy must be a placement policy: " CCNUMA_POLICY_NAMES
                  " or ccnuma::policy");
};
}  // namespace detail

template <class T, class Policy = first_touch>
class allocator : detail::allocator_policy_check<Policy> {
public:
    using value_type = T;
    using policy_type = Policy;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;
    template <class U>
    struct rebind {
        using other = allocator<U, Policy>;
    };

    allocator() = default;
    explicit allocator(Policy p) : policy_(std::move(p)) {}
    template <class U>
    allocator(const allocator<U, Policy>& other) noexcept(std::is_nothrow_copy_constructible_v<Policy>)
        : policy_(other.policy()) {}

    [[nodiscard]] T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) detail::throw_bad_array_new_length();
        return static_cast<T*>(ccnuma::allocate(n * sizeof(T), policy_, sizeof(T), alignment()));
    }
    void deallocate(T* p, std::size_t n) noexcept { ccnuma::deallocate(p, n * sizeof(T), policy_, alignment()); }

    const Policy& policy() const noexcept { return policy_; }

    /// Equal allocators place alike, so either may free what the other allocated.
    template <class U>
    friend bool operator==(const allocator& a, const allocator<U, Policy>& b) noexcept {
        return a.policy() == b.policy();
    }

private:
    static constexpr std::size_t alignment() noexcept {
        return alignof(T) > alignof(std::max_align_t) ? alignof(T) : alignof(std::max_align_t);
    }
    Policy policy_{};
};

/// A std::pmr::memory_resource that places every block by a policy. The static partition is
/// taken over elements of the requested alignment, which is sizeof(T) for scalars, so that a
/// std::pmr::vector<double> is split as a `schedule(static)` loop over its doubles.
class memory_resource : public std::pmr::memory_resource {
public:
    memory_resource() = default;
    explicit memory_resource(ccnuma::policy p) : policy_(std::move(p)) {}
    const ccnuma::policy& policy() const noexcept { return policy_; }

private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override {
        return ccnuma::allocate(bytes, policy_, alignment, alignment < alignof(std::max_align_t) ? alignof(std::max_align_t) : alignment);
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
        ccnuma::deallocate(p, bytes, policy_, alignment < alignof(std::max_align_t) ? alignof(std::max_align_t) : alignment);
    }
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        const auto* o = dynamic_cast<const memory_resource*>(&other);
        return o != nullptr && o->policy_ == policy_;
    }
    ccnuma::policy policy_ = first_touch{};
};

namespace detail {
// The Itanium C++ ABI's array cookie (section 2.7): a new-expression for a class whose usual
// operator delete[] is sized, as parallel_new's is, asks for max(sizeof(size_t), alignof(T))
// bytes more and stores the element count there, before the elements.
template <class T>
inline constexpr std::size_t array_cookie_bytes = alignof(T) > sizeof(std::size_t) ? alignof(T) : sizeof(std::size_t);
}  // namespace detail

/// CRTP base: `struct cell : ccnuma::parallel_new<cell> {...};` makes `new cell[n]` place its
/// storage by `Policy` (partitioned over cells) before the cells are constructed, and
/// `delete[]` free it. From one page up, the cells start on a page (huge page), as an
/// allocate()d array does, with the array cookie just before, and the partition is over the
/// cells alone (except for an odd count of 8-byte cells; see cookie()). Single-object new and
/// delete are left to the global operators.
template <class Derived, class Policy = first_touch>
struct parallel_new {
    static void* operator new[](std::size_t bytes) {
        return ccnuma::allocate_with_cookie(cookie(bytes, std::align_val_t{0}), bytes, Policy{}, sizeof(Derived), align());
    }
    static void operator delete[](void* p, std::size_t bytes) noexcept {
        ccnuma::deallocate_with_cookie(p, cookie(bytes, std::align_val_t{0}), bytes, Policy{}, align());
    }
    // Over-aligned classes (alignas(64) cells, say) come here.
    static void* operator new[](std::size_t bytes, std::align_val_t al) {
        return ccnuma::allocate_with_cookie(cookie(bytes, al), bytes, Policy{}, sizeof(Derived), align(al));
    }
    static void operator delete[](void* p, std::size_t bytes, std::align_val_t al) noexcept {
        ccnuma::deallocate_with_cookie(p, cookie(bytes, al), bytes, Policy{}, align(al));
    }

private:
    static constexpr std::size_t align(std::align_val_t al = std::align_val_t{0}) noexcept {
        const auto a = static_cast<std::size_t>(al);
        return a > alignof(std::max_align_t) ? a : alignof(std::max_align_t);
    }
    // The bytes the new-expression puts before the elements, so that they start on a page: the
    // cookie of the class allocated, Derived or a class derived from it (which inherits these
    // operators), max(sizeof(size_t), its alignment). The over-aligned overload is told that
    // alignment. The plain one knows only that it is at most __STDCPP_DEFAULT_NEW_ALIGNMENT__
    // (16), and a block 8 bytes before a page suits only classes aligned to 8: it takes
    // Derived's 8-byte cookie where the size rules out a class aligned to 16 (whose arrays ask
    // for a multiple of 16), and none otherwise (an odd count of 8-byte cells: the block on the
    // page, the elements 8 bytes in). None either for a size that is not whole cells after the
    // cookie (a direct call of operator new[], a derived class, another ABI). New and delete
    // see the same size, so they agree.
    static constexpr std::size_t cookie(std::size_t bytes, std::align_val_t al) noexcept {
        constexpr std::size_t most = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
        const auto told = static_cast<std::size_t>(al);
        const std::size_t c = told != 0 ? (told > sizeof(std::size_t) ? told : sizeof(std::size_t))
                                        : detail::array_cookie_bytes<Derived>;
        if (told == 0 && c < most && bytes % most == 0) return 0;
        return bytes >= c && (bytes - c) % sizeof(Derived) == 0 ? c : 0;
    }
};

}  // namespace ccnuma
