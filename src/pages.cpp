#include "placement_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>

#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

namespace ccnuma {

namespace {

constexpr std::size_t batch_pages = 16384;  // per move_pages call or pagemap read, to bound the arrays

// /proc/self/pagemap: one 64-bit entry per virtual page (Documentation/admin-guide/mm/pagemap.rst).
constexpr std::uint64_t pm_present = std::uint64_t{1} << 63;
constexpr std::uint64_t pm_swapped = std::uint64_t{1} << 62;
constexpr std::uint64_t pm_exclusive = std::uint64_t{1} << 56;  // Linux >= 4.2
constexpr std::uint64_t pm_pfn_mask = (std::uint64_t{1} << 55) - 1;
constexpr std::uint64_t pm_swap_type_mask = 0x1f;  // bits 0-4 of a swap entry, where PFNs are visible

// /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h).
constexpr std::uint64_t kpf_huge = std::uint64_t{1} << 17;  // hugetlb
constexpr std::uint64_t kpf_thp = std::uint64_t{1} << 22;
constexpr std::uint64_t kpf_zero_page = std::uint64_t{1} << 24;  // the zero page and the huge zero page

// The PAGEMAP_SCAN ioctl of Linux 6.7 (include/uapi/linux/fs.h). Debian 12's kernel headers
// predate it, so the ABI is spelled out here; older kernels answer ENOTTY.
struct pm_page_region {
    std::uint64_t start, end, categories;
};
struct pm_scan_arg {
    std::uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
        category_anyof_mask, return_mask;
};
constexpr unsigned long pagemap_scan_request = _IOWR('f', 16, pm_scan_arg);
constexpr std::uint64_t page_is_pfnzero = 1u << 5;
constexpr std::uint64_t page_is_huge = 1u << 6;

class file {
public:
    explicit file(const char* path) noexcept : fd_(::open(path, O_RDONLY | O_CLOEXEC)) {}
    file(const file&) = delete;
    file& operator=(const file&) = delete;
    ~file() {
        if (fd_ >= 0) ::close(fd_);
    }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    int fd() const noexcept { return fd_; }
    // The 64-bit entries [index, index + n) of a table file; false on a short or failed read.
    bool read_entries(std::uint64_t index, std::uint64_t* out, std::size_t n) const noexcept {
        auto* bytes = reinterpret_cast<char*>(out);
        std::size_t want = n * sizeof(std::uint64_t), got = 0;
        while (got < want) {
            const ssize_t r = ::pread(fd_, bytes + got, want - got, static_cast<off_t>(index * sizeof(std::uint64_t) + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return false;
            got += static_cast<std::size_t>(r);
        }
        return true;
    }

private:
    int fd_;
};

// What this kernel lets a process read about its page tables. Probed once on a page of the
// prober's own stack, which is always present.
struct page_table_access {
    bool pagemap = false, pfn_visible = false, pagemap_scan = false, kpageflags = false;
    std::string bad_override;  // a CCNUMA_PAGE_FLAGS value that names no source
};

// CCNUMA_PAGE_FLAGS names a weaker source than the best one this kernel offers, to see what a
// user on an older kernel or without CAP_SYS_ADMIN would get (and to test those paths).
void apply_override(page_table_access& r) {
    const char* v = std::getenv("CCNUMA_PAGE_FLAGS");
    if (!v || !*v) return;
    const std::string_view want = v;
    if (want == "smaps") r.pagemap_scan = r.kpageflags = false;
    else if (want == "kpageflags") r.pagemap_scan = false;
    else if (want != "pagemap_scan") r.bad_override = want;
}

const page_table_access& access() {
    static const page_table_access a = [] {
        page_table_access r;
        volatile char here = 1;
        const auto page = detail::page_bytes();
        const auto addr = reinterpret_cast<std::uintptr_t>(&here) / page * page;
        file pm("/proc/self/pagemap");
        std::uint64_t e = 0;
        r.pagemap = pm && pm.read_entries(addr / page, &e, 1);
        if (!r.pagemap) return r;
        // PFNs read as 0 without CAP_SYS_ADMIN (Linux >= 4.2), even for present pages.
        r.pfn_visible = (e & pm_present) && (e & pm_pfn_mask) != 0;
        pm_page_region region{};
        pm_scan_arg arg{sizeof(pm_scan_arg), 0, addr, addr + page, 0, reinterpret_cast<std::uint64_t>(&region), 1, 0, 0,
                        0, 0, page_is_pfnzero | page_is_huge};
        r.pagemap_scan = ::ioctl(pm.fd(), pagemap_scan_request, &arg) >= 0;
        // Read, not just opened: the flags of the probe page's own frame.
        std::uint64_t flags = 0;
        r.kpageflags = r.pfn_visible && file("/proc/kpageflags").read_entries(e & pm_pfn_mask, &flags, 1);
        apply_override(r);
        return r;
    }();
    return a;
}

std::string range_text(const void* ptr, std::size_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%p", ptr);
    return detail::human_bytes(bytes) + " at " + buf;
}

// First page and page count covering [ptr, ptr + bytes); throws if the range wraps around.
std::pair<std::uintptr_t, std::size_t> page_span(const void* ptr, std::size_t bytes, const std::string& what) {
    const std::size_t page = detail::page_bytes();
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    if (bytes > std::numeric_limits<std::uintptr_t>::max() - p - (page - 1))
        detail::throw_error(errc::invalid_argument,
                            what + ": the range of " + std::to_string(bytes) +
                                " bytes wraps around the address space (expected a range inside mapped memory)");
    const auto begin = p / page * page;
    const auto end = (p + bytes + page - 1) / page * page;
    return {begin, bytes == 0 ? 0 : (end - begin) / page};
}

// mincore() fails with ENOMEM exactly when part of the range is unmapped: that is the check
// move_pages lacks (it reports unmapped and untouched pages alike). In batches, so that a
// huge bogus range costs no huge buffer.
void require_mapped(std::uintptr_t first, std::size_t count, const std::string& what) {
    std::vector<unsigned char> residency(std::min(count, batch_pages));
    const std::size_t page = detail::page_bytes();
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        if (::mincore(reinterpret_cast<void*>(first + done * page), n * page, residency.data()) != 0) {
            if (errno == ENOMEM)
                detail::throw_error(errc::invalid_argument, what + ": the range is not (entirely) mapped memory");
            detail::throw_system_error(errno, what + ": mincore failed");
        }
    }
}

// move_pages without targets: the node of each page, or a negative errno (-ENOENT, -EFAULT)
// where there is no normal page (never faulted, the zero page, swapped).
std::vector<int> move_pages_status(std::uintptr_t first, std::size_t count, const std::string& what) {
    std::vector<int> status(count, 0);
    std::vector<void*> addrs;
    const std::size_t page = detail::page_bytes();
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        addrs.resize(n);
        for (std::size_t i = 0; i < n; ++i) addrs[i] = reinterpret_cast<void*>(first + (done + i) * page);
        if (const int err = detail::move_pages(n, addrs.data(), nullptr, status.data() + done, 0)) {
            if (err == ENOSYS) detail::throw_error(errc::not_supported, what + ": this kernel has no move_pages");
            detail::throw_system_error(err, what + ": move_pages failed");
        }
    }
    return status;
}

// Per page: known to be on the zero page, known huge, and whether "huge" is known at all.
struct page_flags {
    std::vector<unsigned char> zero, huge, huge_known;
};

// PAGEMAP_SCAN returns the regions whose pages have any of the asked categories.
void flags_from_pagemap_scan(const file& pm, std::uintptr_t first, std::size_t count, page_flags& f,
                             const std::string& what) {
    const std::size_t page = detail::page_bytes();
    std::vector<pm_page_region> regions(256);
    std::uint64_t start = first;
    const std::uint64_t end = first + count * page;
    while (start < end) {
        pm_scan_arg arg{sizeof(pm_scan_arg), 0, start, end, 0, reinterpret_cast<std::uint64_t>(regions.data()),
                        regions.size(), 0, 0, 0, page_is_pfnzero | page_is_huge, page_is_pfnzero | page_is_huge};
        const int n = ::ioctl(pm.fd(), pagemap_scan_request, &arg);
        if (n < 0) detail::throw_system_error(errno, what + ": PAGEMAP_SCAN failed");
        for (int r = 0; r < n; ++r)
            for (std::uint64_t a = regions[static_cast<std::size_t>(r)].start; a < regions[static_cast<std::size_t>(r)].end;
                 a += page) {
                const std::size_t i = (a - first) / page;
                if (regions[static_cast<std::size_t>(r)].categories & page_is_pfnzero) f.zero[i] = 1;
                if (regions[static_cast<std::size_t>(r)].categories & page_is_huge) f.huge[i] = 1;
            }
        if (arg.walk_end <= start) break;  // no progress: a kernel bug; what was read stands
        start = arg.walk_end;
    }
    std::fill(f.huge_known.begin(), f.huge_known.end(), 1);
}

// /proc/kpageflags, indexed by PFN; runs of consecutive frames are read at once.
void flags_from_kpageflags(const std::vector<std::uint64_t>& entries, page_flags& f) {
    file kpf("/proc/kpageflags");
    if (!kpf) return;
    std::vector<std::uint64_t> buf;
    for (std::size_t i = 0; i < entries.size();) {
        if (!(entries[i] & pm_present)) {
            f.huge_known[i++] = 1;
            continue;
        }
        const std::uint64_t pfn = entries[i] & pm_pfn_mask;
        std::size_t run = 1;
        while (i + run < entries.size() && run < batch_pages && (entries[i + run] & pm_present) &&
               (entries[i + run] & pm_pfn_mask) == pfn + run)
            ++run;
        buf.resize(run);
        if (kpf.read_entries(pfn, buf.data(), run))
            for (std::size_t k = 0; k < run; ++k) {
                f.zero[i + k] = (buf[k] & kpf_zero_page) != 0;
                f.huge[i + k] = (buf[k] & (kpf_thp | kpf_huge)) != 0;
                f.huge_known[i + k] = 1;
            }
        i += run;
    }
}

// Without either: /proc/self/smaps says per mapping how much of it is huge. Exact where a
// mapping has no huge page, or is hugetlb; unknown for present pages in between.
void flags_from_smaps(const std::vector<std::uint64_t>& entries, std::uintptr_t first, page_flags& f) {
    const std::size_t page = detail::page_bytes();
    const std::uintptr_t end = first + entries.size() * page;
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    std::uintptr_t lo = 0, hi = 0;
    std::uint64_t huge_kb = 0, kernel_page_kb = 0;
    auto finish = [&] {
        if (hi <= first || lo >= end) return;
        const bool all_huge = kernel_page_kb * 1024 > page || huge_kb * 1024 >= hi - lo;
        for (std::uintptr_t a = std::max(lo, first); a < std::min(hi, end); a += page) {
            const std::size_t i = (a - first) / page;
            const bool present = (entries[i] & pm_present) != 0;
            f.huge[i] = present && all_huge;
            f.huge_known[i] = !present || huge_kb == 0 || all_huge;
        }
    };
    while (std::getline(smaps, line)) {
        unsigned long long a = 0, b = 0;
        char dash = 0;
        std::istringstream head(line);
        if (line.find(':') == std::string::npos || line.find('-') < line.find(':')) {
            if (head >> std::hex >> a >> dash >> b && dash == '-') {
                finish();
                if (a >= end) return;
                lo = a;
                hi = b;
                huge_kb = kernel_page_kb = 0;
                continue;
            }
        }
        std::string key;
        std::uint64_t kb = 0;
        std::istringstream field(line);
        if (!(field >> key >> kb)) continue;
        if (key == "AnonHugePages:" || key == "ShmemPmdMapped:" || key == "FilePmdMapped:" ||
            key == "Shared_Hugetlb:" || key == "Private_Hugetlb:")
            huge_kb += kb;
        else if (key == "KernelPageSize:")
            kernel_page_kb = kb;
    }
    finish();
}

// The number of active swap areas: a swap entry of a higher type is a migration (or other
// non-swap) entry.
std::size_t swap_areas() {
    std::ifstream swaps("/proc/swaps");
    std::string line;
    std::size_t n = 0;
    while (std::getline(swaps, line)) ++n;
    return n == 0 ? 0 : n - 1;  // minus the header
}

}  // namespace

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
    const std::string what = "page state query of " + range_text(ptr, bytes);
    const auto [first, count] = page_span(ptr, bytes, what);
    require_mapped(first, count, what);
    const auto& acc = access();
    if (!acc.bad_override.empty())
        detail::throw_error(errc::invalid_argument, what + ": CCNUMA_PAGE_FLAGS=" + detail::quote(acc.bad_override) +
                                                        " names no source (expected pagemap_scan, kpageflags or smaps)");
    if (!acc.pagemap)
        detail::throw_error(errc::not_supported,
                            what + ": /proc/self/pagemap is not readable here (needs CONFIG_PROC_PAGE_MONITOR); "
                                   "page_nodes() still works with move_pages alone");
    std::vector<page_info> info(count);
    if (count == 0) return info;
    const std::size_t page = detail::page_bytes();
    // pagemap first, move_pages second: a page that faults in between is then seen on its node.
    file pm("/proc/self/pagemap");
    std::vector<std::uint64_t> entries(count);
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        if (!pm || !pm.read_entries(first / page + done, entries.data() + done, n))
            detail::throw_system_error(errno ? errno : EIO, what + ": reading /proc/self/pagemap failed");
    }
    const auto status = move_pages_status(first, count, what);
    page_flags flags{std::vector<unsigned char>(count, 0), std::vector<unsigned char>(count, 0),
                     std::vector<unsigned char>(count, 0)};
    if (acc.pagemap_scan) flags_from_pagemap_scan(pm, first, count, flags, what);
    else if (acc.kpageflags) flags_from_kpageflags(entries, flags);
    else flags_from_smaps(entries, first, flags);

    std::optional<std::size_t> areas;
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t e = entries[i];
        page_info& p = info[i];
        p.exclusive = (e & pm_exclusive) != 0;
        p.huge = flags.huge[i] != 0;
        p.huge_known = flags.huge_known[i] != 0;
        if (status[i] >= 0) {
            p.state = page_state::on_node;
            p.node = status[i];
        } else if (e & pm_present) {
            // Present, yet no normal page for move_pages: the zero page (flagged where the kernel
            // tells, else recognised by not being exclusively mapped, which also covers the
            // huge zero page) or a special mapping.
            p.state = flags.zero[i] || !p.exclusive ? page_state::zero_page : page_state::unplaceable;
            // smaps counts no anonymous huge page for the huge zero page: huge or not is unknown.
            if (p.state == page_state::zero_page && !acc.pagemap_scan && !acc.kpageflags && !p.huge) p.huge_known = false;
        } else if (e & pm_swapped) {
            p.state = page_state::swapped;
            if (acc.pfn_visible) {
                if (!areas) areas = swap_areas();
                if ((e & pm_swap_type_mask) >= *areas) p.state = page_state::migrating;
            }
        } else {
            p.state = page_state::not_faulted;
        }
    }
    return info;
}

std::vector<int> page_nodes(const void* ptr, std::size_t bytes) {
    const std::string what = "page query of " + range_text(ptr, bytes);
    const auto [first, count] = page_span(ptr, bytes, what);
    require_mapped(first, count, what);
    std::vector<int> nodes(count, page_not_present);
    if (access().pagemap) {
        const auto states = page_states(ptr, bytes);
        for (std::size_t i = 0; i < count; ++i) nodes[i] = states[i].node;
        return nodes;
    }
    // Without pagemap, move_pages alone: it finds no normal page for the never-faulted, the
    // zero page and the swapped alike, which are all page_not_present.
    const auto status = move_pages_status(first, count, what);
    for (std::size_t i = 0; i < count; ++i) nodes[i] = status[i] >= 0 ? status[i] : page_not_present;
    return nodes;
}

double page_histogram::share(unsigned node) const noexcept {
    return total == 0 || node >= pages.size() ? 0.0 : static_cast<double>(pages[node]) / static_cast<double>(total);
}

std::string page_histogram::to_string() const {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    for (std::size_t n = 0; n < pages.size(); ++n)
        s << (n ? ", " : "") << "node " << n << ": " << pages[n] << " pages (" << 100.0 * share(static_cast<unsigned>(n))
          << "%)";
    const char* sep = pages.empty() ? "" : ", ";
    auto part = [&](const char* label, std::size_t n, bool always = false) {
        if (n == 0 && !always) return;
        s << sep << label << ": " << n << " pages";
        sep = ", ";
    };
    part("not present", not_present, pages.empty() && zero_page == 0);
    part("read but never written (zero page)", zero_page);
    part("in transparent huge pages", huge);
    part("huge pages unknown", huge_unknown);
    return s.str();
}

namespace {
// Every node of this machine gets a bin, so that an empty node shows as 0 pages.
page_histogram empty_histogram(std::size_t total, int max_seen) {
    page_histogram h;
    h.total = total;
    std::size_t max_node = max_seen < 0 ? 0 : static_cast<std::size_t>(max_seen);
    for (const auto& n : topology::current().numa_nodes()) max_node = std::max<std::size_t>(max_node, n.os_index);
    h.pages.assign(max_node + 1, 0);
    return h;
}
}  // namespace

page_histogram node_histogram(const std::vector<int>& nodes) {
    const int max_seen = nodes.empty() ? -1 : *std::max_element(nodes.begin(), nodes.end());
    page_histogram h = empty_histogram(nodes.size(), max_seen);
    for (int n : nodes) {
        if (n < 0) ++h.not_present;
        else ++h.pages[static_cast<std::size_t>(n)];
    }
    return h;
}

page_histogram node_histogram(const std::vector<page_info>& states) {
    int max_seen = -1;
    for (const auto& p : states) max_seen = std::max(max_seen, p.node);
    page_histogram h = empty_histogram(states.size(), max_seen);
    for (const auto& p : states) {
        if (p.node >= 0) ++h.pages[static_cast<std::size_t>(p.node)];
        else if (p.state == page_state::zero_page) ++h.zero_page;
        else ++h.not_present;
        if (!p.huge_known) ++h.huge_unknown;
        else if (p.huge) ++h.huge;
    }
    return h;
}

page_histogram node_histogram(const void* ptr, std::size_t bytes) {
    if (!access().pagemap) return node_histogram(page_nodes(ptr, bytes));
    return node_histogram(page_states(ptr, bytes));
}

namespace {
double locality_of(const std::vector<int>& nodes, const void* ptr, std::size_t count, std::size_t element_size,
                   schedule s) {
    if (nodes.empty()) return 1.0;
    const auto team = detail::run_team(count, s, {}, "locality of " + std::to_string(count) + " elements");
    const auto expected = detail::unit_nodes(team, ptr, count * element_size, element_size, detail::page_bytes());
    std::size_t local = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i] >= 0 && nodes[i] == expected[i]) ++local;
    return static_cast<double>(local) / static_cast<double>(nodes.size());
}
}  // namespace

namespace {
// count * element_size, or a ccnuma::error naming `op` where it does not fit in size_t.
std::size_t checked_bytes(const char* op, const void* ptr, std::size_t count, std::size_t element_size) {
    if (element_size != 0 && count > std::numeric_limits<std::size_t>::max() / element_size) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%p", ptr);
        detail::throw_error(errc::invalid_argument, std::string(op) + " of " + std::to_string(count) + " elements of " +
                                                        std::to_string(element_size) + " bytes at " + buf +
                                                        ": the size overflows (expected count * element_size to fit "
                                                        "in the address space)");
    }
    return count * element_size;
}
}  // namespace

double locality(const void* ptr, std::size_t count, std::size_t element_size, schedule s) {
    const std::size_t bytes = checked_bytes("locality", ptr, count, element_size);
    if (bytes == 0) return 1.0;
    return locality_of(page_nodes(ptr, bytes), ptr, count, element_size, s);
}

std::string placement_report::to_string() const {
    char head[48];
    std::snprintf(head, sizeof head, "locality %.1f%%: ", 100.0 * locality);
    return head + pages.to_string();
}

placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, schedule s) {
    placement_report r;
    const std::size_t bytes = checked_bytes("placement report", ptr, count, element_size);
    if (bytes == 0) {
        r.pages = node_histogram(std::vector<int>{});
        return r;
    }
    std::vector<int> nodes;
    if (access().pagemap) {
        const auto states = page_states(ptr, bytes);
        r.pages = node_histogram(states);
        nodes.reserve(states.size());
        for (const auto& p : states) nodes.push_back(p.node);
    } else {
        nodes = page_nodes(ptr, bytes);
        r.pages = node_histogram(nodes);
    }
    r.locality = locality_of(nodes, ptr, count, element_size, s);
    return r;
}

std::string_view to_string(stay_reason r) noexcept {
    switch (r) {
        case stay_reason::shared: return "shared with another process";
        case stay_reason::busy: return "busy";
        case stay_reason::no_memory: return "no memory on the target node";
        case stay_reason::not_migrated: return "not migrated";
        case stay_reason::moved_away: return "moved away again";
        case stay_reason::other: return "refused";
    }
    return "?";
}

std::size_t migrate_report::stayed_count() const noexcept {
    std::size_t n = 0;
    for (const auto& s : stayed) n += s.pages;
    return n;
}

namespace {

// "node 0: 60, node 1: 4" of a per-node count.
std::string node_counts(const std::vector<std::size_t>& on_node) {
    std::string s;
    for (std::size_t n = 0; n < on_node.size(); ++n)
        if (on_node[n] != 0) s += (s.empty() ? "node " : ", node ") + std::to_string(n) + ": " + std::to_string(on_node[n]);
    return s;
}

const char* errno_name(int e) noexcept {
    switch (e) {
        case EACCES: return "EACCES";
        case EBUSY: return "EBUSY";
        case ENOMEM: return "ENOMEM";
        case EFAULT: return "EFAULT";
        case ENOENT: return "ENOENT";
        case EAGAIN: return "EAGAIN";
        case EIO: return "EIO";
        case EINVAL: return "EINVAL";
        case EPERM: return "EPERM";
        case ENOSYS: return "ENOSYS";
        case ENODEV: return "ENODEV";
        default: return nullptr;
    }
}

// What the kernel's answer means, for the message.
std::string why(const migrate_report::stayed_pages& g) {
    const char* name = errno_name(g.error);
    const std::string code = name ? name : "errno " + std::to_string(g.error);
    switch (g.reason) {
        case stay_reason::shared:
            return "EACCES: copy-on-write after fork, KSM or shared memory; MPOL_MF_MOVE moves only pages this "
                   "process maps alone";
        case stay_reason::busy: return "EBUSY: the kernel could not isolate them (pinned for I/O or RDMA, or in use)";
        case stay_reason::no_memory: return "ENOMEM: the target node has no free memory for them";
        case stay_reason::not_migrated:
            return "move_pages counted them as not migrated and gave no per-page reason: a migration that failed "
                   "(a page in use or pinned) stops the rest of the call";
        case stay_reason::moved_away: return "move_pages reported them moved, yet they were elsewhere when checked";
        case stay_reason::other: return code + ": " + std::strerror(g.error);
    }
    return code;
}

constexpr int status_unwritten = std::numeric_limits<int>::min();

stay_reason reason_of(int status) noexcept {
    if (status == status_unwritten) return stay_reason::not_migrated;
    if (status >= 0) return stay_reason::moved_away;
    switch (-status) {
        case EACCES: return stay_reason::shared;
        case EBUSY: return stay_reason::busy;
        case ENOMEM: return stay_reason::no_memory;
        default: return stay_reason::other;
    }
}

void add_stayed(migrate_report& r, int status, int node, std::size_t nodes) {
    const stay_reason reason = reason_of(status);
    const int error = status < 0 && status != status_unwritten ? -status : 0;
    auto it = std::find_if(r.stayed.begin(), r.stayed.end(),
                           [&](const auto& g) { return g.reason == reason && g.error == error; });
    if (it == r.stayed.end()) {
        r.stayed.push_back({reason, error, 0, std::vector<std::size_t>(nodes, 0)});
        it = r.stayed.end() - 1;
    }
    ++it->pages;
    if (static_cast<std::size_t>(node) >= it->on_node.size()) it->on_node.resize(static_cast<std::size_t>(node) + 1, 0);
    ++it->on_node[static_cast<std::size_t>(node)];
}

// Where the stayed pages are, all reasons together.
std::vector<std::size_t> stayed_on(const migrate_report& r) {
    std::vector<std::size_t> on;
    for (const auto& g : r.stayed) {
        if (g.on_node.size() > on.size()) on.resize(g.on_node.size(), 0);
        for (std::size_t n = 0; n < g.on_node.size(); ++n) on[n] += g.on_node[n];
    }
    return on;
}

// "64 shared with another process (EACCES: ...)", or with more than one reason, where each
// group is: "60 shared with another process (EACCES: ...) on node 0: 60; 3 busy (...) on node 1: 3".
std::string stayed_text(const migrate_report& r) {
    std::string s;
    for (const auto& g : r.stayed)
        s += (s.empty() ? "" : "; ") + std::to_string(g.pages) + " " + std::string(ccnuma::to_string(g.reason)) + " (" +
             why(g) + ")" + (r.stayed.size() > 1 ? " on " + node_counts(g.on_node) : std::string());
    return s;
}

migrate_report migrate_range(void* ptr, std::size_t bytes, const policy& p, const std::string& what) {
    migrate_report report;
    const std::size_t page = detail::page_bytes();
    if (reinterpret_cast<std::uintptr_t>(ptr) % page != 0)
        detail::throw_error(errc::invalid_argument, what + ": the address is not page-aligned");
    if (bytes == 0) return report;
    const auto [first, count] = page_span(ptr, bytes, what);
    require_mapped(first, count, what);
    report.pages = count;
    // The target node of every page, then move_pages. mbind's MPOL_MF_MOVE is not enough: it
    // moves only pages outside the new node set, so a page on node 0 stays put under
    // interleave(0,1) even where round-robin wants it on node 1.
    const std::size_t unit = detail::unit_bytes(page_kind(p));
    std::vector<int> targets;
    const auto m = detail::meaning_of(p);
    if (m.act != detail::policy_meaning::action::kernel_policy) {
        // Pages as the elements: the page decides anyway, and a loop over bytes would cost
        // O(bytes) for nothing.
        const auto team = detail::run_team(count, m.sched, {}, what);
        const auto per_unit = detail::unit_nodes(team, ptr, bytes, page, unit);
        for (std::size_t i = 0; i < count; ++i)
            targets.push_back(per_unit[(first + i * page) / unit - reinterpret_cast<std::uintptr_t>(ptr) / unit]);
    } else {
        // A spilling policy's pages move to its own nodes.
        const std::vector<unsigned> set = m.spills ? m.nodes : detail::target_nodes(m, what);
        for (unsigned n : set) detail::check_node(n, what);
        // The kernel's own interleave order: by page (or huge page) number modulo the set.
        for (std::size_t i = 0; i < count; ++i)
            targets.push_back(static_cast<int>(set[((first + i * page) / unit) % set.size()]));
    }
    // Every page's node before the move: a page already on its target is not asked to move,
    // and one without a frame cannot be. Only pages on another node go to the kernel.
    const auto before = move_pages_status(first, count, what);
    std::size_t nodes = 0;
    for (const auto& n : topology::current().numa_nodes()) nodes = std::max<std::size_t>(nodes, n.os_index + 1);
    std::vector<void*> addrs;
    std::vector<int> to, status, after;
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        addrs.clear();
        to.clear();
        for (std::size_t i = done; i < done + n; ++i) {
            if (targets[i] < 0) ++report.no_target;
            else if (before[i] < 0) ++report.not_present;
            else if (before[i] == targets[i]) ++report.already_there;
            else {
                addrs.push_back(reinterpret_cast<void*>(first + i * page));
                to.push_back(targets[i]);
            }
        }
        if (addrs.empty()) continue;
        // The kernel leaves the status of pages it did not get to unwritten: the sentinel marks them.
        status.assign(addrs.size(), status_unwritten);
        std::size_t not_migrated = 0;
        if (const int err =
                detail::move_pages(addrs.size(), addrs.data(), to.data(), status.data(), MPOL_MF_MOVE, &not_migrated)) {
            // Out of memory on the target ends the call: the pages it did not reach stayed for that
            // reason. Anything else is about the call itself (a target the cpuset does not allow).
            if (err != ENOMEM) detail::throw_system_error(err, what + ": move_pages failed");
            for (auto& st : status)
                if (st == status_unwritten) st = -ENOMEM;
        }
        // Where the pages are now decides, not what the status promised: the second base page of a
        // huge page moved with the first may read EBUSY, and a page may be moved again meanwhile.
        after.assign(addrs.size(), 0);
        if (const int err = detail::move_pages(addrs.size(), addrs.data(), nullptr, after.data(), 0))
            detail::throw_system_error(err, what + ": move_pages (query after the move) failed");
        for (std::size_t k = 0; k < addrs.size(); ++k) {
            if (after[k] == to[k]) ++report.moved;
            else if (after[k] < 0) ++report.not_present;  // dropped or swapped out meanwhile: on no node
            else add_stayed(report, status[k], after[k], nodes);
        }
    }
    // Pages written from now on follow the new policy too (first_touch has none to set).
    if (m.act != detail::policy_meaning::action::touch) place(ptr, bytes, p, page);
    return report;
}

std::string migrate_what(void* ptr, std::size_t bytes, const policy& p) {
    return "migrate of " + range_text(ptr, bytes) + " to " + to_string(p);
}

}  // namespace

std::string migrate_report::to_string() const {
    std::string s = std::to_string(pages) + " pages: " + std::to_string(moved) + " moved, " +
                    std::to_string(already_there) + " already there";
    if (not_present) s += ", " + std::to_string(not_present) + " not present (no frame: nothing to move)";
    if (no_target) s += ", " + std::to_string(no_target) + " without a target node";
    const std::size_t n = stayed_count();
    if (n == 0) return s;
    return s + ", " + std::to_string(n) + " stayed (" + node_counts(stayed_on(*this)) + "): " + stayed_text(*this);
}

migrate_report migrate(void* ptr, std::size_t bytes, const policy& p) {
    const std::string what = migrate_what(ptr, bytes, p);
    auto r = migrate_range(ptr, bytes, p, what);
    if (!r.complete())
        detail::throw_error(errc::infeasible,
                            what + ": " + std::to_string(r.stayed_count()) + " of " + std::to_string(r.pages) +
                                " pages stayed (" + node_counts(stayed_on(r)) + "): " + stayed_text(r) + "; " +
                                std::to_string(r.moved) + " moved, " + std::to_string(r.already_there) +
                                " already there" +
                                (r.not_present ? ", " + std::to_string(r.not_present) + " not present" : std::string()));
    return r;
}

migrate_report try_migrate(void* ptr, std::size_t bytes, const policy& p) {
    return migrate_range(ptr, bytes, p, migrate_what(ptr, bytes, p));
}

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
    const std::size_t len = bytes + align;
    void* raw = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return r;
    try {
        const auto base = (reinterpret_cast<std::uintptr_t>(raw) + align - 1) / align * align;
        auto* p = reinterpret_cast<volatile const char*>(base);
        if (!advise_huge || ::madvise(const_cast<char*>(p), bytes, MADV_HUGEPAGE) == 0) {
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
    ::munmap(raw, len);
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
        // The huge page size where the kernel tells it (placement's unit falls back to 2 MiB,
        // a default that is not reported as a fact).
        s.huge_page_size = s.thp_mode.empty() ? 0 : detail::huge_page_bytes_told().value_or(0);
        s.thp = !s.thp_mode.empty() && s.thp_mode != "never";
        const auto& acc = access();
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
                    (huge_page_size ? " (" + detail::human_bytes(huge_page_size) + ")" : std::string()) + ", page " +
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
