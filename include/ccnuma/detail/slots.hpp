#pragma once
// The per-call arrays of a parallel reduction (a partial result per thread or segment, the
// parts of a segmented range): n value-initialized Ts, inside the object up to 4 KiB and on the
// heap beyond. A reduction over a few hundred KB runs for a few microseconds, and an aligned
// heap allocation and its free cost up to 0.4 us of that per call (issue 35: a hand-written
// 2-thread sum of 512 KB with its partials on the heap ran at 0.87 to 0.95 of the same region
// with them on the stack).

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace ccnuma::detail {

template <class T, std::size_t InlineBytes = 4096>
class slots {
    static_assert(std::is_nothrow_default_constructible_v<T> && std::is_nothrow_destructible_v<T>,
                  "slots value-initializes its elements in place, which must not throw");

public:
    explicit slots(std::size_t n) : size_(n) {
        if (n > inline_count)
            heap_ = std::make_unique<T[]>(n);
        else
            for (std::size_t i = 0; i < n; ++i) ::new (static_cast<void*>(inline_data() + i)) T();
    }
    ~slots() {
        if (!heap_) std::destroy_n(inline_data(), size_);
    }
    slots(const slots&) = delete;
    slots& operator=(const slots&) = delete;

    T& operator[](std::size_t i) noexcept { return data()[i]; }
    const T& operator[](std::size_t i) const noexcept { return data()[i]; }
    std::size_t size() const noexcept { return size_; }
    T* begin() noexcept { return data(); }
    T* end() noexcept { return data() + size_; }
    const T* begin() const noexcept { return data(); }
    const T* end() const noexcept { return data() + size_; }

private:
    static constexpr std::size_t inline_count = InlineBytes / sizeof(T);

    T* data() noexcept { return heap_ ? heap_.get() : inline_data(); }
    const T* data() const noexcept { return heap_ ? heap_.get() : inline_data(); }
    T* inline_data() noexcept { return reinterpret_cast<T*>(buffer_); }
    const T* inline_data() const noexcept { return reinterpret_cast<const T*>(buffer_); }

    alignas(T) std::byte buffer_[inline_count != 0 ? inline_count * sizeof(T) : 1];
    std::unique_ptr<T[]> heap_;
    std::size_t size_;
};

}  // namespace ccnuma::detail
