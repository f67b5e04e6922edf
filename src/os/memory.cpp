// Mappings: mmap, munmap, madvise and /proc/self/maps (see os.hpp).

#include "os.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace ccnuma::detail {

void* map_anonymous(std::size_t bytes, std::size_t align, std::size_t offset) noexcept {
    if (align <= page_bytes()) align = 0;  // mmap's own alignment suffices
    if (bytes == 0 || bytes > SIZE_MAX - align || offset % page_bytes() != 0) return nullptr;
    void* raw = ::mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    if (align == 0) return raw;
    // Mapped with `align` to spare, then trimmed to the aligned start: the kernel has no aligned mmap.
    auto* start = static_cast<char*>(raw);
    const auto at = reinterpret_cast<std::uintptr_t>(raw) + offset % align;
    auto* aligned = reinterpret_cast<char*>((at + align - 1) / align * align - offset % align);
    if (aligned > start) ::munmap(start, static_cast<std::size_t>(aligned - start));
    const std::size_t tail = static_cast<std::size_t>(start + bytes + align - (aligned + bytes));
    if (tail) ::munmap(aligned + bytes, tail);
    return aligned;
}

int unmap(void* addr, std::size_t bytes) noexcept { return ::munmap(addr, bytes) == 0 ? 0 : errno; }

int advise_huge(void* addr, std::size_t bytes, bool huge) noexcept {
    return ::madvise(addr, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) == 0 ? 0 : errno;
}

int populate_write(void* addr, std::size_t bytes) noexcept {
    return ::madvise(addr, bytes, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
}

std::optional<bool> maps_cover(std::uintptr_t begin, std::uintptr_t end, bool writable) noexcept {
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    if (maps == nullptr) return std::nullopt;
    std::uintptr_t covered = begin;
    char line[512];
    while (covered < end && std::fgets(line, sizeof line, maps) != nullptr) {
        unsigned long lo = 0, hi = 0;
        char perms[8] = {};
        if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
        if (hi <= covered) continue;
        if (lo > covered) break;  // a hole (the lines are sorted by address)
        if (writable && perms[1] != 'w') break;
        covered = hi;
    }
    std::fclose(maps);
    return covered >= end;
}

std::optional<std::vector<std::pair<std::uintptr_t, std::uintptr_t>>> no_huge_ranges(std::uintptr_t begin,
                                                                                      std::uintptr_t end) {
    std::ifstream smaps("/proc/self/smaps");
    if (!smaps) return std::nullopt;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
    std::string line;
    std::uintptr_t lo = 0, hi = 0;
    while (std::getline(smaps, line)) {
        unsigned long a = 0, b = 0;
        // A mapping's first line: "start-end perms offset dev inode [path]".
        if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2 && line.find(':') > line.find(' ')) {
            lo = a;
            hi = b;
            continue;
        }
        if (line.rfind("VmFlags:", 0) != 0 || hi <= begin || lo >= end) continue;
        std::istringstream flags(line.substr(8));
        std::string f;
        while (flags >> f)
            if (f == "nh") {
                const std::uintptr_t from = std::max<std::uintptr_t>(lo, begin), to = std::min<std::uintptr_t>(hi, end);
                if (!ranges.empty() && ranges.back().second == from) ranges.back().second = to;
                else ranges.emplace_back(from, to);
                break;
            }
    }
    return ranges;
}

}  // namespace ccnuma::detail
