#pragma once
// What the kernel has behind a page, read here without the library: the raw /proc/self/pagemap
// entry, a bare move_pages call, /proc/kpageflags where PFNs are visible and /proc/self/smaps.
// The page-state tests take their expectations from this reading, never from one kernel's habit
// (Linux 6.1 maps the shared zero page on a read fault; other kernels give a private frame).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace test_support {

/// A private anonymous mapping of a test's own, so that nothing else touches its pages.
struct mapping {
    explicit mapping(std::size_t b) : bytes(b) {
        p = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    }
    mapping(const mapping&) = delete;
    mapping& operator=(const mapping&) = delete;
    ~mapping() {
        if (p != MAP_FAILED) ::munmap(p, bytes);
    }
    std::size_t bytes;
    char* p;
};

struct raw_page {
    bool present = false, swapped = false, exclusive = false;
    std::uint64_t pfn = 0;      // 0 where the kernel hides it (no CAP_SYS_ADMIN)
    int move_pages_status = 0;  // node, or -errno
    bool kpageflags_read = false;
    bool kpf_zero_page = false, kpf_thp = false;
};

inline std::uint64_t read_u64(const char* path, std::uint64_t index, bool& ok) {
    std::uint64_t v = 0;
    const int fd = ::open(path, O_RDONLY);
    ok = fd >= 0 && ::pread(fd, &v, sizeof v, static_cast<off_t>(index * sizeof v)) == static_cast<ssize_t>(sizeof v);
    if (fd >= 0) ::close(fd);
    return v;
}

inline raw_page read_raw_page(const void* addr) {
    const auto page_bytes = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    raw_page r;
    bool ok = false;
    const std::uint64_t e = read_u64("/proc/self/pagemap", reinterpret_cast<std::uintptr_t>(addr) / page_bytes, ok);
    r.present = ok && (e >> 63 & 1);
    r.swapped = ok && (e >> 62 & 1);
    r.exclusive = ok && (e >> 56 & 1);
    r.pfn = r.present ? e & ((std::uint64_t{1} << 55) - 1) : 0;
    void* a = const_cast<void*>(addr);
    int status = 0;
    if (::syscall(SYS_move_pages, 0, 1, &a, nullptr, &status, 0) != 0) status = -1000;
    r.move_pages_status = status;
    if (r.pfn != 0) {
        const std::uint64_t f = read_u64("/proc/kpageflags", r.pfn, r.kpageflags_read);
        r.kpf_zero_page = r.kpageflags_read && (f >> 24 & 1);
        r.kpf_thp = r.kpageflags_read && (f >> 22 & 1);
    }
    return r;
}

/// The page is on the shared zero page by this independent reading: kpageflags says so where it
/// is readable; otherwise present, not exclusively mapped, and no normal page for move_pages.
inline bool on_zero_page(const raw_page& r) {
    if (r.kpageflags_read) return r.kpf_zero_page;
    return r.present && !r.exclusive && r.move_pages_status < 0;
}

/// AnonHugePages of the mapping that contains addr, in kB (-1 if not found).
inline long anon_huge_kb(const void* addr) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    const auto a = reinterpret_cast<std::uintptr_t>(addr);
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long long lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (line.find(':') > line.find('-') && head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
    }
    return -1;
}

/// AnonHugePages summed over the mappings that overlap [addr, addr + bytes), in kB: exact for
/// memory the library mapped itself, whose mappings (split by mbind or not) lie inside it.
inline long anon_huge_kb_in(const void* addr, std::size_t bytes) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    const auto a = reinterpret_cast<std::uintptr_t>(addr);
    bool inside = false;
    long sum = 0;
    while (std::getline(smaps, line)) {
        unsigned long long lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (line.find(':') > line.find('-') && head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = lo < a + bytes && hi > a;
            continue;
        }
        if (inside && line.rfind("AnonHugePages:", 0) == 0) sum += std::stol(line.substr(14));
    }
    return sum;
}

}  // namespace test_support
