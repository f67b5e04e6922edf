// Page queries: where each page of a range is, and in what state (page_states, page_nodes),
// from pagemap, move_pages and the page flags the OS layer reads.

#include "pages_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace ccnuma {

namespace detail {

namespace {

// CCNUMA_PAGE_FLAGS names a weaker source than the best one this kernel offers.
void apply_override(page_access& r) {
    const char* v = std::getenv("CCNUMA_PAGE_FLAGS");
    if (!v || !*v) return;
    const std::string_view want = v;
    if (want == "smaps") r.pagemap_scan = r.kpageflags = false;
    else if (want == "kpageflags") r.pagemap_scan = false;
    else if (want != "pagemap_scan") r.bad_override = want;
}

}  // namespace

const page_access& page_access_here() {
    static const page_access a = [] {
        page_access r;
        static_cast<page_table_access&>(r) = probe_page_tables();
        if (r.pagemap) apply_override(r);
        return r;
    }();
    return a;
}

std::string range_text(const void* ptr, std::size_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%p", ptr);
    return human_bytes(bytes) + " at " + buf;
}

std::pair<std::uintptr_t, std::size_t> page_span(const void* ptr, std::size_t bytes, const std::string& what) {
    const std::size_t page = page_bytes();
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    if (bytes > std::numeric_limits<std::uintptr_t>::max() - p - (page - 1))
        throw_error(errc::invalid_argument,
                    what + ": the range of " + std::to_string(bytes) +
                        " bytes wraps around the address space (expected a range inside mapped memory)");
    const auto begin = p / page * page;
    const auto end = (p + bytes + page - 1) / page * page;
    return {begin, bytes == 0 ? 0 : (end - begin) / page};
}

void require_mapped(std::uintptr_t first, std::size_t count, const std::string& what) {
    if (const int err = pages_mapped(first, count)) {
        if (err == ENOMEM) throw_error(errc::invalid_argument, what + ": the range is not (entirely) mapped memory");
        throw_system_error(err, what + ": mincore failed");
    }
}

std::vector<int> move_pages_status(std::uintptr_t first, std::size_t count, const std::string& what) {
    std::vector<int> status(count, 0);
    std::vector<void*> addrs;
    const std::size_t page = page_bytes();
    for (std::size_t done = 0; done < count; done += move_batch_pages) {
        const std::size_t n = std::min(move_batch_pages, count - done);
        addrs.resize(n);
        for (std::size_t i = 0; i < n; ++i) addrs[i] = reinterpret_cast<void*>(first + (done + i) * page);
        if (const int err = move_pages(n, addrs.data(), nullptr, status.data() + done, 0)) {
            if (err == ENOSYS) throw_error(errc::not_supported, what + ": this kernel has no move_pages");
            throw_system_error(err, what + ": move_pages failed");
        }
    }
    return status;
}

}  // namespace detail

std::string_view to_string(page_state s) noexcept {
    switch (s) {
        case page_state::not_faulted: return "not faulted";
        case page_state::zero_page: return "zero page";
        case page_state::on_node: return "on node";
        case page_state::swapped: return "swapped";
        case page_state::migrating: return "migrating";
        case page_state::unplaceable: return "unplaceable";
    }
    return "?";
}

std::vector<page_info> page_states(const void* ptr, std::size_t bytes) {
    const std::string what = "page state query of " + detail::range_text(ptr, bytes);
    const auto [first, count] = detail::page_span(ptr, bytes, what);
    detail::require_mapped(first, count, what);
    const auto& acc = detail::page_access_here();
    if (!acc.bad_override.empty())
        detail::throw_error(errc::invalid_argument, what + ": CCNUMA_PAGE_FLAGS=" + detail::quote(acc.bad_override) +
                                                        " names no source (expected pagemap_scan, kpageflags or smaps)");
    if (!acc.pagemap)
        detail::throw_error(errc::not_supported,
                            what + ": /proc/self/pagemap is not readable here (needs CONFIG_PROC_PAGE_MONITOR); "
                                   "page_nodes() still works with move_pages alone");
    std::vector<page_info> info(count);
    if (count == 0) return info;
    // pagemap first, move_pages second: a page that faults in between is then seen on its node.
    std::vector<std::uint64_t> entries(count);
    if (const int err = detail::read_pagemap(first, count, entries.data()))
        detail::throw_system_error(err, what + ": reading /proc/self/pagemap failed");
    const auto status = detail::move_pages_status(first, count, what);
    detail::page_flags flags{std::vector<unsigned char>(count, 0), std::vector<unsigned char>(count, 0),
                             std::vector<unsigned char>(count, 0)};
    if (acc.pagemap_scan) {
        if (const int err = detail::page_flags_from_pagemap_scan(first, count, flags))
            detail::throw_system_error(err, what + ": PAGEMAP_SCAN failed");
    } else if (acc.kpageflags) {
        detail::page_flags_from_kpageflags(entries, flags);
    } else {
        detail::page_flags_from_smaps(entries, first, flags);
    }

    std::optional<std::size_t> areas;
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t e = entries[i];
        page_info& p = info[i];
        p.exclusive = (e & detail::pagemap_exclusive) != 0;
        p.huge = flags.huge[i] != 0;
        p.huge_known = flags.huge_known[i] != 0;
        if (status[i] >= 0) {
            p.state = page_state::on_node;
            p.node = status[i];
        } else if (e & detail::pagemap_present) {
            // Present, yet no normal page for move_pages: the zero page (flagged where the kernel
            // tells, else recognised by not being exclusively mapped, which also covers the
            // huge zero page) or a special mapping.
            p.state = flags.zero[i] || !p.exclusive ? page_state::zero_page : page_state::unplaceable;
            // smaps counts no anonymous huge page for the huge zero page: huge or not is unknown.
            if (p.state == page_state::zero_page && !acc.pagemap_scan && !acc.kpageflags && !p.huge) p.huge_known = false;
        } else if (e & detail::pagemap_swapped) {
            p.state = page_state::swapped;
            if (acc.pfn_visible) {
                if (!areas) areas = detail::swap_areas();
                if ((e & detail::pagemap_swap_type_mask) >= *areas) p.state = page_state::migrating;
            }
        } else {
            p.state = page_state::not_faulted;
        }
    }
    return info;
}

std::vector<int> page_nodes(const void* ptr, std::size_t bytes) {
    const std::string what = "page query of " + detail::range_text(ptr, bytes);
    const auto [first, count] = detail::page_span(ptr, bytes, what);
    detail::require_mapped(first, count, what);
    std::vector<int> nodes(count, page_not_present);
    if (detail::page_access_here().pagemap) {
        const auto states = page_states(ptr, bytes);
        for (std::size_t i = 0; i < count; ++i) nodes[i] = states[i].node;
        return nodes;
    }
    // Without pagemap, move_pages alone: it finds no normal page for the never-faulted, the
    // zero page and the swapped alike, which are all page_not_present.
    const auto status = detail::move_pages_status(first, count, what);
    for (std::size_t i = 0; i < count; ++i) nodes[i] = status[i] >= 0 ? status[i] : page_not_present;
    return nodes;
}

std::size_t physical_runs(const void* ptr, std::size_t bytes) {
    const std::string what = "physical_runs of " + detail::range_text(ptr, bytes);
    const auto [first, count] = detail::page_span(ptr, bytes, what);
    detail::require_mapped(first, count, what);
    if (!detail::page_access_here().pfn_visible)
        detail::throw_error(errc::not_supported, what + ": this process cannot read frame numbers (pagemap shows them "
                                                        "to CAP_SYS_ADMIN; support().pfn_visible is false)");
    const std::size_t page = detail::page_bytes();
    constexpr std::size_t batch = 16384;  // pages per read, to bound the buffer
    std::vector<std::uint64_t> entries(std::min(count, batch));
    std::size_t runs = 0;
    std::optional<std::uint64_t> previous;  // the frame of the page before, if it has one
    for (std::size_t done = 0; done < count; done += batch) {
        const std::size_t k = std::min(batch, count - done);
        if (const int err = detail::read_pagemap(first + done * page, k, entries.data()))
            detail::throw_system_error(err, what + ": reading /proc/self/pagemap");
        for (std::size_t i = 0; i < k; ++i) {
            const std::uint64_t e = entries[i];
            if (!(e & detail::pagemap_present)) {
                previous.reset();
                continue;
            }
            const std::uint64_t frame = e & detail::pagemap_pfn_mask;
            if (!previous || frame != *previous + 1) ++runs;
            previous = frame;
        }
    }
    return runs;
}

}  // namespace ccnuma
