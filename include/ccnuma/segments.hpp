#pragma once
/// @file
/// ccnuma::segments(v): a ccnuma::vector (or any contiguous elements) seen as the segments of
/// its static schedule, one per thread's chunk, so that the hierarchical algorithms of
/// algorithm.hpp run each chunk as a raw loop, and ccnuma::par:: on the thread that
/// constructed it and placed its pages.
///
///     ccnuma::vector<double> v(n, 1.0);
///     auto segs = ccnuma::segments(v);                                // one segment per thread's chunk
///     double s = ccnuma::par::reduce(segs.begin(), segs.end(), 0.0);  // chunk t on thread t

#include <ccnuma/placement.hpp>
#include <ccnuma/segmented_iterator.hpp>
#include <ccnuma/vector.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>

namespace ccnuma {

/// A segmented view of contiguous elements split into the chunks of a static schedule: what
/// ccnuma::segments(v) returns. It owns its layout (iterators point into it), so it must
/// outlive its iterators; moving it keeps them valid.
template <class V>
class segmented_view {
    using layout_type = detail::segment_layout<std::remove_const_t<V>>;

public:
    using iterator = segmented_iterator<V>;
    using segment_iterator = ccnuma::segment_iterator<V>;
    using local_iterator = V*;
    using value_type = std::remove_const_t<V>;
    using size_type = std::size_t;

    segmented_view(V* data, std::size_t n, const ccnuma::schedule& s)
        : layout_(std::make_unique<layout_type>(
              detail::chunks_of(const_cast<std::remove_const_t<V>*>(data), n, s))) {}

    iterator begin() const noexcept { return detail::segment_access::at<V>(*layout_, 0); }
    iterator end() const noexcept { return detail::segment_access::at<V>(*layout_, layout_->n); }
    segment_iterator segment_begin() const noexcept { return {layout_.get(), 0}; }
    segment_iterator segment_end() const noexcept { return {layout_.get(), layout_->segments}; }
    size_type size() const noexcept { return layout_->n; }
    bool empty() const noexcept { return layout_->n == 0; }
    size_type segment_count() const noexcept { return layout_->segments; }
    /// The schedule over segments that gives segment s to its thread.
    ccnuma::schedule schedule() const noexcept { return layout_->owners; }

private:
    std::unique_ptr<const layout_type> layout_;
};

/// A ccnuma::vector seen as segments: one per thread's chunk of its schedule(static) (or one
/// per chunk of schedule(static, c)), so that algorithm.hpp runs each chunk on the thread that
/// constructed it and placed its pages.
///
///     ccnuma::vector<double> v(n, 1.0);
///     auto segs = ccnuma::segments(v);
///     double s = ccnuma::par::reduce(segs.begin(), segs.end(), 0.0);
template <class T, class P>
segmented_view<T> segments(vector<T, P>& v) {
    return {v.data(), v.size(), v.schedule()};
}
template <class T, class P>
segmented_view<const T> segments(const vector<T, P>& v) {
    return {v.data(), v.size(), v.schedule()};
}
/// Any contiguous elements, split as `s` would split them.
template <class T, std::size_t E>
segmented_view<T> segments(std::span<T, E> data, const ccnuma::schedule& s = {}) {
    return {data.data(), data.size(), s};
}

}  // namespace ccnuma
