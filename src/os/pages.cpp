// Pages: move_pages, mincore, /proc/self/pagemap with its PAGEMAP_SCAN ioctl, /proc/kpageflags,
// /proc/self/smaps and /proc/swaps (see os.hpp). What a page's state is, is pages/query.cpp's.

#include "os.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

namespace ccnuma::detail {

namespace {

constexpr std::size_t batch_pages = 16384;  // per mincore call or pagemap read, to bound the arrays


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
constexpr std::uint64_t page_is_pfnzero = pagemap_scan_pfnzero;
constexpr std::uint64_t page_is_huge = pagemap_scan_huge;

std::string pagemap_path(pid_t pid) {
    return pid == 0 ? std::string("/proc/self/pagemap") : "/proc/" + std::to_string(pid) + "/pagemap";
}

class file {
public:
    explicit file(const char* path) noexcept : fd_(::open(path, O_RDONLY | O_CLOEXEC)) {}
    explicit file(const std::string& path) noexcept : file(path.c_str()) {}
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

}  // namespace

bool has_move_pages() noexcept { return ::syscall(SYS_move_pages, 0, 0, nullptr, nullptr, nullptr, 0) == 0; }

int move_pages(std::size_t count, void** pages, const int* to, int* status, int flags, std::size_t* not_migrated,
               pid_t pid) {
    const long rc = ::syscall(SYS_move_pages, pid, count, pages, to, status, flags);
    if (rc < 0) return errno;
    if (not_migrated) *not_migrated = static_cast<std::size_t>(rc);
    return 0;
}

int pages_mapped(std::uintptr_t first, std::size_t count) noexcept {
    try {
        std::vector<unsigned char> residency(std::min(count, batch_pages));
        const std::size_t page = page_bytes();
        for (std::size_t done = 0; done < count; done += batch_pages) {
            const std::size_t n = std::min(batch_pages, count - done);
            if (::mincore(reinterpret_cast<void*>(first + done * page), n * page, residency.data()) != 0) return errno;
        }
    } catch (...) {
        return ENOMEM;
    }
    return 0;
}

page_table_access probe_page_tables() noexcept {
    page_table_access r;
    volatile char here = 1;
    const auto page = page_bytes();
    const auto addr = reinterpret_cast<std::uintptr_t>(&here) / page * page;
    file pm("/proc/self/pagemap");
    std::uint64_t e = 0;
    r.pagemap = pm && pm.read_entries(addr / page, &e, 1);
    if (!r.pagemap) return r;
    // PFNs read as 0 without CAP_SYS_ADMIN (Linux >= 4.2), even for present pages.
    r.pfn_visible = (e & pagemap_present) && (e & pagemap_pfn_mask) != 0;
    pm_page_region region{};
    pm_scan_arg arg{sizeof(pm_scan_arg), 0, addr, addr + page, 0, reinterpret_cast<std::uint64_t>(&region), 1, 0, 0,
                    0, 0, page_is_pfnzero | page_is_huge};
    r.pagemap_scan = ::ioctl(pm.fd(), pagemap_scan_request, &arg) >= 0;
    // Read, not just opened: the flags of the probe page's own frame.
    std::uint64_t flags = 0;
    r.kpageflags = r.pfn_visible && file("/proc/kpageflags").read_entries(e & pagemap_pfn_mask, &flags, 1);
    return r;
}

int read_pagemap(std::uintptr_t first, std::size_t count, std::uint64_t* entries, pid_t pid) noexcept {
    const std::size_t page = page_bytes();
    std::string path;
    try {
        path = pagemap_path(pid);
    } catch (...) {
        return ENOMEM;
    }
    file pm(path);
    if (!pm) return errno ? errno : EIO;
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        errno = 0;
        if (!pm.read_entries(first / page + done, entries + done, n)) return errno ? errno : EIO;
    }
    return 0;
}

std::optional<std::uint64_t> zero_page_pfn() noexcept {
    const std::size_t page = page_bytes();
    void* p = map_anonymous(page);
    if (p == nullptr) return std::nullopt;
    // A read of an untouched private page maps the zero page on every kernel that has one.
    const char c = *static_cast<volatile const char*>(p);
    static_cast<void>(c);
    std::uint64_t e = 0;
    std::optional<std::uint64_t> pfn;
    if (read_pagemap(reinterpret_cast<std::uintptr_t>(p), 1, &e) == 0 && (e & pagemap_present) && (e & pagemap_pfn_mask) != 0)
        pfn = e & pagemap_pfn_mask;
    unmap(p, page);
    return pfn;
}

// PAGEMAP_SCAN returns the regions whose pages have any of the asked categories.
int pagemap_scan(pid_t pid, std::uintptr_t first, std::uintptr_t end, std::uint64_t categories,
                 const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& region) {
    file pm(pagemap_path(pid));
    if (!pm) return errno ? errno : EIO;
    std::vector<pm_page_region> regions(256);
    std::uint64_t start = first;
    while (start < end) {
        pm_scan_arg arg{sizeof(pm_scan_arg), 0, start, end, 0, reinterpret_cast<std::uint64_t>(regions.data()),
                        regions.size(), 0, 0, 0, categories, categories};
        const int n = ::ioctl(pm.fd(), pagemap_scan_request, &arg);
        if (n < 0) return errno;
        for (int r = 0; r < n; ++r) {
            const auto& found = regions[static_cast<std::size_t>(r)];
            region(found.start, found.end, found.categories);
        }
        if (arg.walk_end <= start) break;  // no progress: a kernel bug; what was read stands
        start = arg.walk_end;
    }
    return 0;
}

int page_flags_from_pagemap_scan(std::uintptr_t first, std::size_t count, page_flags& f) {
    const std::size_t page = page_bytes();
    const int err = pagemap_scan(0, first, first + count * page, page_is_pfnzero | page_is_huge,
                                 [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t categories) {
                                     for (std::uint64_t a = lo; a < hi; a += page) {
                                         const std::size_t i = (a - first) / page;
                                         if (categories & page_is_pfnzero) f.zero[i] = 1;
                                         if (categories & page_is_huge) f.huge[i] = 1;
                                     }
                                 });
    if (err) return err;
    std::fill(f.huge_known.begin(), f.huge_known.end(), 1);
    return 0;
}

// Indexed by PFN; runs of consecutive frames are read at once.
void page_flags_from_kpageflags(const std::vector<std::uint64_t>& entries, page_flags& f) {
    file kpf("/proc/kpageflags");
    if (!kpf) return;
    std::vector<std::uint64_t> buf;
    for (std::size_t i = 0; i < entries.size();) {
        if (!(entries[i] & pagemap_present)) {
            f.huge_known[i++] = 1;
            continue;
        }
        const std::uint64_t pfn = entries[i] & pagemap_pfn_mask;
        std::size_t run = 1;
        while (i + run < entries.size() && run < batch_pages && (entries[i + run] & pagemap_present) &&
               (entries[i + run] & pagemap_pfn_mask) == pfn + run)
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

void page_flags_from_smaps(const std::vector<std::uint64_t>& entries, std::uintptr_t first, page_flags& f) {
    const std::size_t page = page_bytes();
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
            const bool present = (entries[i] & pagemap_present) != 0;
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

std::size_t swap_areas() {
    std::ifstream swaps("/proc/swaps");
    std::string line;
    std::size_t n = 0;
    while (std::getline(swaps, line)) ++n;
    return n == 0 ? 0 : n - 1;  // minus the header
}

}  // namespace ccnuma::detail
