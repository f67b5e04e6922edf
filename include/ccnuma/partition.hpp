#pragma once
/// @file
/// ccnuma::partition: one contiguous range of elements per thread, given by its boundaries. The
/// loop a program runs decides which thread touches which element; a partition says that once,
/// and the placement, the containers' loops and the placement reports all follow it.
///
///     // A CSR matrix: rows split so that each of 4 threads gets an equal share of the nonzeros,
///     // and the nonzeros (values, col_idx) split the same way through row_ptr.
///     auto rows = ccnuma::partition::balanced(row_ptr, 4);
///     auto nnz = rows.through(row_ptr);
///     ccnuma::vector<double> vals(nnz.elements(), ccnuma::first_touch{}.partition(nnz));
///     ccnuma::vector<double> x(rows.elements(), ccnuma::first_touch{}.partition(rows));
///     #pragma omp parallel num_threads(rows.parts())
///     {
///         const auto [begin, end] = rows.range(omp_get_thread_num());   // this thread's rows
///         for (std::size_t i = begin; i < end; ++i) ...
///     }
///
/// A partition without boundaries (the default) means "no partition of its own": the schedule
/// it sits in splits the elements as `schedule(static[, chunk])` does. Copies share the
/// boundaries, so a schedule that carries a partition is as cheap to pass as one that does not.

#include <cstddef>
#include <concepts>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

class partition {
public:
    /// No partition of its own: the enclosing schedule's static split.
    partition() noexcept = default;

    /// Part t is [bounds[t], bounds[t + 1]): bounds[0] must be 0 and the boundaries must not
    /// decrease (an empty part is a thread that owns nothing, as a row range without nonzeros
    /// gives). At least one part. Throws ccnuma::error naming the first bad boundary.
    explicit partition(std::vector<std::size_t> bounds);

    /// schedule(static)'s split of `elements` over `parts` threads (the first elements % parts
    /// parts one longer), as explicit boundaries. Throws ccnuma::error for 0 parts or more parts
    /// than elements.
    static partition equal(std::size_t elements, unsigned parts);

    /// The rows of a CSR matrix (offsets = row_ptr, rows + 1 entries, non-decreasing) split into
    /// `parts` contiguous ranges with equal shares of the nonzeros: boundary k is the row whose
    /// offset is nearest to k/parts of the nonzeros. Guarantee: every part's nonzeros are within
    /// the largest row's nonzeros of the ideal share nnz/parts (largest_share() says what it is).
    /// Throws ccnuma::error for 0 parts, more parts than rows, or offsets that decrease.
    static partition balanced(std::span<const std::size_t> offsets, unsigned parts);
    template <std::integral I>
        requires(!std::same_as<std::remove_cv_t<I>, std::size_t>)
    static partition balanced(std::span<I> offsets, unsigned parts) {
        return balanced(std::span<const std::size_t>(widen(offsets, "partition::balanced")), parts);
    }
    template <class Range>
        requires requires(const Range& r) { std::span(r); }
    static partition balanced(const Range& offsets, unsigned parts) {
        return balanced(std::span(offsets), parts);
    }

    /// The partition of what `offsets` index, part by part: the rows-to-threads partition gives,
    /// through row_ptr, the nonzeros-to-threads partition of values and col_idx. offsets has
    /// elements() + 1 entries, non-decreasing; element positions count from offsets[0] (so a
    /// 1-based row_ptr works too). Throws ccnuma::error otherwise, or on an empty partition.
    partition through(std::span<const std::size_t> offsets) const;
    template <std::integral I>
        requires(!std::same_as<std::remove_cv_t<I>, std::size_t>)
    partition through(std::span<I> offsets) const {
        return through(std::span<const std::size_t>(widen(offsets, "partition::through")));
    }
    template <class Range>
        requires requires(const Range& r) { std::span(r); }
    partition through(const Range& offsets) const {
        return through(std::span(offsets));
    }

    /// True for the default partition, which has no boundaries of its own.
    bool empty() const noexcept { return bounds_ == nullptr; }
    /// Number of parts (threads); 0 when empty().
    unsigned parts() const noexcept { return empty() ? 0u : static_cast<unsigned>(bounds_->size() - 1); }
    /// Number of elements partitioned; 0 when empty().
    std::size_t elements() const noexcept { return empty() ? 0 : bounds_->back(); }
    /// Part t's elements [first, second). t < parts().
    std::pair<std::size_t, std::size_t> range(unsigned t) const noexcept { return {(*bounds_)[t], (*bounds_)[t + 1]}; }
    /// The part that owns element i < elements(): the last part whose range starts at or before
    /// i, so an empty part never owns anything.
    unsigned owner(std::size_t i) const noexcept;
    /// The boundaries, parts() + 1 of them (none when empty()).
    std::span<const std::size_t> bounds() const noexcept {
        return empty() ? std::span<const std::size_t>{} : std::span<const std::size_t>(*bounds_);
    }
    /// Elements of the largest part.
    std::size_t largest_share() const noexcept;
    /// Elements of the smallest part.
    std::size_t smallest_share() const noexcept;

    friend bool operator==(const partition& a, const partition& b) noexcept {
        return a.bounds_ == b.bounds_ || (a.bounds_ && b.bounds_ && *a.bounds_ == *b.bounds_);
    }

private:
    template <class I>
    static std::vector<std::size_t> widen(std::span<I> offsets, const char* operation) {
        std::vector<std::size_t> w;
        w.reserve(offsets.size());
        for (std::size_t i = 0; i < offsets.size(); ++i) {
            if constexpr (std::is_signed_v<I>)
                if (offsets[i] < 0) negative_offset(operation, i, static_cast<long long>(offsets[i]));
            w.push_back(static_cast<std::size_t>(offsets[i]));
        }
        return w;
    }
    [[noreturn]] static void negative_offset(const char* operation, std::size_t i, long long value);

    std::shared_ptr<const std::vector<std::size_t>> bounds_;
};

/// "partition(0,250,500,750,1000)", or "partition()" for the empty one; boundaries beyond 16
/// parts are elided in the middle ("partition(0,10,...,990,1000; 100 parts)").
std::string to_string(const partition& p);

}  // namespace ccnuma
