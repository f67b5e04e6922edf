// ccnuma::partition (partition.hpp): boundaries, their checks, the balanced split by offsets
// and the partition through offsets.

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/partition.hpp>

#include <algorithm>
#include <limits>

namespace ccnuma {

namespace {

void check_parts(const char* operation, unsigned parts, std::size_t elements, const char* what) {
    if (parts == 0)
        detail::throw_error(errc::invalid_argument, operation, "a team of 0 threads", "expected at least 1 part");
    if (parts > elements)
        detail::throw_error(errc::invalid_argument, operation,
                            std::to_string(parts) + " parts of " + std::to_string(elements) + " " + what,
                            "expected at most one part per " + std::string(what).substr(0, std::string(what).size() - 1) +
                                ": at most " + std::to_string(elements) + " parts, or fewer threads");
}

// The first index where offsets decrease, or offsets.size() where none does.
std::size_t first_decrease(std::span<const std::size_t> offsets) {
    for (std::size_t i = 1; i < offsets.size(); ++i)
        if (offsets[i] < offsets[i - 1]) return i;
    return offsets.size();
}

void check_offsets(const char* operation, std::span<const std::size_t> offsets) {
    if (offsets.empty())
        detail::throw_error(errc::invalid_argument, operation, "no offsets",
                            "expected rows + 1 offsets, as a CSR row_ptr has");
    if (const std::size_t i = first_decrease(offsets); i != offsets.size())
        detail::throw_error(errc::invalid_argument, operation,
                            "offset " + std::to_string(i) + " (" + std::to_string(offsets[i]) + ") is below offset " +
                                std::to_string(i - 1) + " (" + std::to_string(offsets[i - 1]) + ")",
                            "expected non-decreasing offsets, as a CSR row_ptr has");
}

}  // namespace

partition::partition(std::vector<std::size_t> bounds) {
    const char* op = "ccnuma::partition";
    if (bounds.size() < 2)
        detail::throw_error(errc::invalid_argument, op, std::to_string(bounds.size()) + " boundaries",
                            "expected parts + 1 boundaries, at least 2: 0 and the number of elements");
    if (bounds.front() != 0)
        detail::throw_error(errc::invalid_argument, op, "the first boundary is " + std::to_string(bounds.front()),
                            "expected 0: the first part starts at element 0");
    if (bounds.size() - 1 > std::numeric_limits<unsigned>::max())
        detail::throw_error(errc::invalid_argument, op, std::to_string(bounds.size() - 1) + " parts",
                            "expected at most " + std::to_string(std::numeric_limits<unsigned>::max()));
    if (const std::size_t i = first_decrease(bounds); i != bounds.size())
        detail::throw_error(errc::invalid_argument, op,
                            "boundary " + std::to_string(i) + " (" + std::to_string(bounds[i]) + ") is below boundary " +
                                std::to_string(i - 1) + " (" + std::to_string(bounds[i - 1]) + ")",
                            "expected non-decreasing boundaries from 0 to the number of elements");
    bounds_ = std::make_shared<const std::vector<std::size_t>>(std::move(bounds));
}

partition partition::equal(std::size_t elements, unsigned parts) {
    check_parts("ccnuma::partition::equal", parts, elements, "elements");
    std::vector<std::size_t> b(std::size_t{parts} + 1);
    const std::size_t q = elements / parts, r = elements % parts;
    for (unsigned t = 0; t < parts; ++t) b[t + 1] = b[t] + q + (t < r ? 1 : 0);
    return partition(std::move(b));
}

partition partition::balanced(std::span<const std::size_t> offsets, unsigned parts) {
    const char* op = "ccnuma::partition::balanced";
    check_offsets(op, offsets);
    const std::size_t rows = offsets.size() - 1;
    check_parts(op, parts, rows, "rows");
    const std::size_t base = offsets.front(), total = offsets.back() - base;
    std::vector<std::size_t> b(std::size_t{parts} + 1);
    b[parts] = rows;
    for (unsigned k = 1; k < parts; ++k) {
        // k/parts of the nonzeros, in exact integer arithmetic (total * k may not fit).
        const std::size_t target = total / parts * k + total % parts * k / parts;
        // The first row boundary at or past the target, or the one before it where that is
        // nearer: each boundary is within half a row of its target, so every part is within
        // one row of the ideal share.
        auto at = std::lower_bound(offsets.begin(), offsets.end(), base + target);
        std::size_t r = static_cast<std::size_t>(at - offsets.begin());
        if (r > 0 && offsets[r] - base - target > target - (offsets[r - 1] - base)) --r;
        b[k] = std::max(r, b[k - 1]);
    }
    return partition(std::move(b));
}

partition partition::through(std::span<const std::size_t> offsets) const {
    const char* op = "ccnuma::partition::through";
    if (empty())
        detail::throw_error(errc::invalid_argument, op, "an empty partition",
                            "expected a partition with boundaries (partition::balanced, equal or explicit)");
    check_offsets(op, offsets);
    if (offsets.size() != elements() + 1)
        detail::throw_error(errc::invalid_argument, op,
                            std::to_string(offsets.size()) + " offsets for a partition of " + std::to_string(elements()) +
                                " elements",
                            "expected " + std::to_string(elements() + 1) + " offsets, one per element and the end");
    std::vector<std::size_t> b;
    b.reserve(bounds_->size());
    for (std::size_t x : *bounds_) b.push_back(offsets[x] - offsets.front());
    return partition(std::move(b));
}

unsigned partition::owner(std::size_t i) const noexcept {
    const auto& b = *bounds_;
    // The last boundary at or before i: parts that are empty share it with the next part.
    const auto it = std::upper_bound(b.begin(), b.end() - 1, i);
    return static_cast<unsigned>(it - b.begin() - 1);
}

std::size_t partition::largest_share() const noexcept {
    std::size_t m = 0;
    for (unsigned t = 0; t < parts(); ++t) m = std::max(m, range(t).second - range(t).first);
    return m;
}

std::size_t partition::smallest_share() const noexcept {
    if (empty()) return 0;
    std::size_t m = std::numeric_limits<std::size_t>::max();
    for (unsigned t = 0; t < parts(); ++t) m = std::min(m, range(t).second - range(t).first);
    return m;
}

void partition::negative_offset(const char* operation, std::size_t i, long long value) {
    detail::throw_error(errc::invalid_argument, operation,
                        "offset " + std::to_string(i) + " is negative (" + std::to_string(value) + ")",
                        "expected non-negative, non-decreasing offsets, as a CSR row_ptr has");
}

std::string to_string(const partition& p) {
    std::string s = "partition(";
    const auto b = p.bounds();
    const std::size_t shown = 8;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (b.size() > 2 * shown + 1 && i == shown) {
            s += "...,";
            i = b.size() - shown - 1;
            continue;
        }
        s += std::to_string(b[i]);
        if (i + 1 < b.size()) s += ',';
    }
    if (b.size() > 2 * shown + 1) s += "; " + std::to_string(p.parts()) + " parts";
    return s + ")";
}

}  // namespace ccnuma
