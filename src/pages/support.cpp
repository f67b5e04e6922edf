// support(): what this kernel offers (mbind, move_pages, THP, page-table access) and how it
// answers a read fault, probed once.

#include "pages_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>

#include <string>

namespace ccnuma {

std::string_view to_string(read_fault_kind k) noexcept {
    switch (k) {
        case read_fault_kind::zero_page: return "zero page";
        case read_fault_kind::private_frame: return "private frame";
        case read_fault_kind::unknown: return "unknown";
    }
    return "?";
}

namespace {

struct read_fault_probe {
    read_fault_kind kind = read_fault_kind::unknown;
    bool huge = false, huge_known = false;  // whether the page is huge, and whether the source could tell
};

// Reads the first byte of a fresh private mapping of `bytes` (aligned to `align`, advised for
// huge pages if asked) and says what the kernel put behind it. The mapping is the probe's own.
read_fault_probe probe_read_fault(std::size_t bytes, std::size_t align, bool advise_huge) noexcept {
    read_fault_probe r;
    void* raw = detail::map_anonymous(bytes, align);
    if (raw == nullptr) return r;
    try {
        auto* p = static_cast<volatile const char*>(raw);
        if (!advise_huge || detail::advise_huge(raw, bytes, true) == 0) {
            (void)*p;
            const auto st = page_states(const_cast<const char*>(p), 1).at(0);
            if (st.state == page_state::zero_page) r.kind = read_fault_kind::zero_page;
            else if (st.state == page_state::on_node) r.kind = read_fault_kind::private_frame;
            if (r.kind != read_fault_kind::unknown) {
                r.huge_known = st.huge_known;
                r.huge = st.huge && st.huge_known;
            }
        }
    } catch (...) {
        r = {};
    }
    (void)detail::unmap(raw, bytes);
    return r;
}

}  // namespace

const support_info& support() {
    static const support_info info = [] {
        support_info s;
        s.page_size = detail::page_bytes();
        s.mbind = detail::has_mempolicy();
        s.move_pages = detail::has_move_pages();
        s.thp_mode = detail::thp_mode();
        // The huge page size where the kernel tells it, 0 where not: from the same read as
        // placement's unit (huge_page_bytes()), which is then a base page, the size seg_array
        // pads to for 0.
        s.huge_page_size = detail::huge_page_bytes_told().value_or(0);
        s.huge_page_size_problem = detail::huge_page_size_here().rejected;
        s.thp = !s.thp_mode.empty() && s.thp_mode != "never";
        const auto& acc = detail::page_access_here();
        s.pagemap = acc.pagemap;
        s.pfn_visible = acc.pfn_visible;
        s.pagemap_scan = acc.pagemap_scan;
        s.kpageflags = acc.kpageflags;
        s.page_flags_valid = acc.bad_override.empty();
        s.page_flags = !s.page_flags_valid ? "invalid CCNUMA_PAGE_FLAGS=" + detail::quote(acc.bad_override)
                       : acc.pagemap_scan  ? "PAGEMAP_SCAN"
                       : acc.kpageflags    ? "kpageflags"
                                           : "smaps";
        // Every page query throws under a bad CCNUMA_PAGE_FLAGS: no probe, the faults stay unknown.
        if (s.pagemap && s.move_pages && s.page_flags_valid) {
            s.read_fault = probe_read_fault(s.page_size, s.page_size, false).kind;
            if (s.thp && s.huge_page_size != 0) {
                const auto huge = probe_read_fault(s.huge_page_size, s.huge_page_size, true);
                s.huge_read_fault = huge.kind;
                s.huge_read_fault_is_huge = huge.huge;
                s.huge_read_fault_size_known = huge.huge_known;
            }
        }
        return s;
    }();
    return info;
}

std::string support_info::to_string() const {
    std::string s = std::string("mbind ") + (mbind ? "yes" : "no") + ", move_pages " + (move_pages ? "yes" : "no") +
                    ", THP " + (thp_mode.empty() ? "not available" : thp_mode) +
                    (huge_page_size ? " (" + detail::human_bytes(huge_page_size) + ")"
                     : !huge_page_size_problem.empty()
                         ? " (huge page size unknown: " + huge_page_size_problem + "; huge pages fall back to base pages)"
                         : std::string()) +
                    ", page " +
                    detail::human_bytes(page_size);
    if (!pagemap) return s + ", pagemap not readable";
    if (!page_flags_valid)
        return s + ", page flags: " + page_flags +
               " names no source (expected pagemap_scan, kpageflags or smaps): every page query fails, read fault: "
               "unknown" +
               (pfn_visible ? "" : ", PFNs hidden");
    s += ", read fault: " + std::string(ccnuma::to_string(read_fault));
    if (huge_read_fault != read_fault_kind::unknown)
        s += ", in THP regions: " + std::string(ccnuma::to_string(huge_read_fault)) +
             (!huge_read_fault_size_known ? " (huge or base page: unknown from " + page_flags + ")"
              : huge_read_fault_is_huge   ? " (huge)"
                                          : " (base page)");
    return s + ", page flags: " + page_flags + (pfn_visible ? "" : ", PFNs hidden");
}

}  // namespace ccnuma
