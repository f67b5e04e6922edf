// Mappings: mmap, munmap, madvise and /proc/self/maps (see os.hpp).

#include "os.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>

namespace ccnuma::detail {

void* map_anonymous(std::size_t bytes, std::size_t align) noexcept {
    if (align <= page_bytes()) align = 0;  // mmap's own alignment suffices
    if (bytes == 0 || bytes > SIZE_MAX - align) return nullptr;
    void* raw = ::mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    if (align == 0) return raw;
    // Mapped with `align` to spare, then trimmed to the aligned start: the kernel has no aligned mmap.
    auto* start = static_cast<char*>(raw);
    auto* aligned = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + align - 1) / align * align);
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

}  // namespace ccnuma::detail
