#pragma once
// What the units of src/pages/ share: the page-table access of this process, the page span of a
// range and the move_pages query that every report and migrate starts from. The system calls are
// the OS layer's (os/os.hpp); what a page's state is, is decided here and in query.cpp.

#include "../placement_internal.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ccnuma::detail {

/// Pages per move_pages call, to bound the arrays.
inline constexpr std::size_t move_batch_pages = 16384;

/// The page-table access of this process (probe_page_tables(), once), weakened where
/// CCNUMA_PAGE_FLAGS names a weaker source than the best one this kernel offers: it shows what a
/// user on an older kernel or without CAP_SYS_ADMIN would get, and tests those paths.
struct page_access : page_table_access {
    std::string bad_override;  ///< a CCNUMA_PAGE_FLAGS value that names no source
};
const page_access& page_access_here();

/// "1.0 MiB at 0x7f..." for messages.
std::string range_text(const void* ptr, std::size_t bytes);
/// First page and page count covering [ptr, ptr + bytes); throws, naming `what`, if the range
/// wraps around.
std::pair<std::uintptr_t, std::size_t> page_span(const void* ptr, std::size_t bytes, const std::string& what);
/// Throws, naming `what`, unless the pages are all mapped (pages_mapped()).
void require_mapped(std::uintptr_t first, std::size_t count, const std::string& what);
/// move_pages without targets: the node of each page, or a negative errno (-ENOENT, -EFAULT)
/// where there is no normal page (never faulted, the zero page, swapped). Throws on failure.
std::vector<int> move_pages_status(std::uintptr_t first, std::size_t count, const std::string& what);

}  // namespace ccnuma::detail
