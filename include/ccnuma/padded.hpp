#pragma once
/// @file
/// False sharing: values padded to their own cache lines, and one slot per OpenMP thread.
///
///     ccnuma::per_thread<double> partial;                 // one padded slot per thread
///     #pragma omp parallel for
///     for (std::size_t i = 0; i < n; ++i) partial.local() += a[i];
///     double sum = partial.reduce();                      // sum of the slots
///
/// 128 bytes by default, not 64: the adjacent-line prefetchers of Intel cores fetch cache lines
/// in pairs, so two threads writing neighbouring 64-byte lines still slow each other down.

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>

#include <omp.h>

#include <cstddef>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

inline constexpr std::size_t false_sharing_range = 128;

/// A T alone in its own `Align`-byte block (alignment and size are multiples of Align).
template <class T, std::size_t Align = false_sharing_range>
struct alignas(Align) padded {
    static_assert((Align & (Align - 1)) == 0, "Align must be a power of two");
    T value{};

    // Provided, not defaulted: value-initialization (`padded<T>()`, `new padded<T>[n]()`) would
    // otherwise zero the whole block, padding included, before the member's initializer runs,
    // which a reduction's per-segment partials paid on the calling thread before every fork
    // (issue 35).
    constexpr padded() noexcept(std::is_nothrow_default_constructible_v<T>) : value{} {}
    padded(const T& v) : value(v) {}  // NOLINT: implicit, like the T it wraps
    template <class... Args>
    explicit padded(std::in_place_t, Args&&... args) : value(std::forward<Args>(args)...) {}

    T& get() noexcept { return value; }
    const T& get() const noexcept { return value; }
    operator T&() noexcept { return value; }
    operator const T&() const noexcept { return value; }
};

/// One padded T per thread of a team, indexed by omp_get_thread_num().
template <class T, std::size_t Align = false_sharing_range>
class per_thread {
public:
    /// `threads` slots (0: omp_get_max_threads()), each a copy of `init`.
    explicit per_thread(unsigned threads = 0, const T& init = T{})
        : slots_(detail::requested_team_size(threads), padded<T, Align>(init)) {}

    /// The calling thread's slot. Throws std::out_of_range if the team is larger than the
    /// number of slots, which would otherwise make two threads share one.
    T& local() {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        if (t >= slots_.size())
            detail::throw_std_error(detail::std_error::out_of_range, {"ccnuma::per_thread", "local"},
                                    "thread " + std::to_string(t) + " of a team larger than its " +
                                        std::to_string(slots_.size()) + " slots",
                                    "expected at most " + std::to_string(slots_.size()) + " threads");
        return slots_[t].value;
    }
    T& operator[](std::size_t thread) noexcept { return slots_[thread].value; }
    const T& operator[](std::size_t thread) const noexcept { return slots_[thread].value; }
    std::size_t size() const noexcept { return slots_.size(); }

    /// Folds the slots in thread order: op(...op(op(init, s0), s1)..., sN).
    template <class BinaryOp>
    T combine(BinaryOp op, T init) const {
        for (const auto& s : slots_) init = op(std::move(init), s.value);
        return init;
    }
    /// The sum of the slots.
    T reduce() const { return combine(std::plus<>{}, T{}); }

private:
    std::vector<padded<T, Align>> slots_;
};

}  // namespace ccnuma
