#pragma once
// Counters of the in-process binding, so tests can check that bind_this_thread() caches.

#include <cstdint>

namespace ccnuma::detail {

/// Number of affinity system calls bind_this_thread() has made in this process.
std::uint64_t bind_syscalls() noexcept;

}  // namespace ccnuma::detail
