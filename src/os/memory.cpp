// Mappings: mmap, munmap, madvise and /proc/self/maps (see os.hpp).

#include "os.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace ccnuma::detail {

namespace {

// A new anonymous mapping with the flags of the one next to it is merged with it into one VMA,
// and the kernel may then give a huge-page frame that straddles the two to one of them whole:
// under THP "always" khugepaged collapses it (with max_ptes_none at its default, 511, one
// present page of the neighbour's suffices) and fills this mapping's untouched pages on the
// node that holds most of the frame's present pages; and a neighbour's first write into an
// untouched frame may fault in a whole folio, a PMD one under "always" or, since Linux 6.8, a
// smaller one (mTHP) wherever a hugepages-<size>kB/enabled says "always", whatever the
// top-level mode. First touch then finds those pages placed already. In the 4-node guest
// (ccnuma-vm --thp always, vm_partition_4nodes_thp_always) 17 of 60 boots under host load
// failed; in the 7 failures whose pages were read back before the first touch, 275 to 476 of a
// fresh 6.5 MiB vector's 1,664 pages were on node 0 already (docs/placement.md). So the frames
// that the mapping's two ends fill only in part are opted out of huge pages before it is
// usable: it is mapped PROT_NONE, behind which no page can be present, its end frames are
// advised MADV_NOHUGEPAGE (which opts out every folio size, PMD and mTHP), and only then is it
// made writable. The end pieces then form VMAs that neither khugepaged nor a fault gives a
// folio across (they merge only with neighbours advised the same). A partial end frame could
// only have become a huge page together with a neighbour's pages, which this rules out; a
// frame wholly inside the mapping is unaffected. This is done in every THP mode of a kernel
// that has THP: which folio sizes may fault in unadvised depends on up to ten sysfs files
// (about 8 us each to read here, where an allocation of 64 KiB costs 170), and on their values
// when the pages are first written, which may be after an administrator changed them.
bool isolate_end_frames() noexcept { return huge_page_bytes() > page_bytes(); }

void advise_end_frames(char* p, std::size_t bytes) noexcept {
    const std::size_t huge = huge_page_bytes();
    const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + bytes;
    const std::uintptr_t head_end = std::min(hi, (lo + huge - 1) / huge * huge);
    const std::uintptr_t tail_begin = std::max(lo, hi / huge * huge);
    // Advice only, and silent where it fails (a kernel without THP, vm.max_map_count): the
    // mapping is then as it was before this step. The base-page policies that touch or plan
    // their pages advise the same frames again (keep_base_units_exact) and say so where that
    // fails; the others (interleave, bind, huge pages) do not.
    if (head_end > lo) (void)::madvise(p, head_end - lo, MADV_NOHUGEPAGE);
    if (hi > tail_begin && tail_begin >= head_end) (void)::madvise(reinterpret_cast<void*>(tail_begin), hi - tail_begin, MADV_NOHUGEPAGE);
}

}  // namespace

void* map_anonymous(std::size_t bytes, std::size_t align, std::size_t offset) noexcept {
    const std::size_t page = page_bytes();
    if (align <= page) align = 0;  // mmap's own alignment suffices
    if (bytes == 0 || bytes > SIZE_MAX - align - page || offset % page != 0) return nullptr;
    // Whole pages: the trimmed tail then starts on a page, as munmap needs, and the end frame
    // is the last page's.
    bytes = (bytes + page - 1) / page * page;
    const bool isolate = isolate_end_frames();
    void* raw = ::mmap(nullptr, bytes + align, isolate ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto* start = static_cast<char*>(raw);
    char* aligned = start;
    if (align != 0) {
        // Mapped with `align` to spare, then trimmed to the aligned start: the kernel has no aligned mmap.
        const auto at = reinterpret_cast<std::uintptr_t>(raw) + offset % align;
        aligned = reinterpret_cast<char*>((at + align - 1) / align * align - offset % align);
        if (aligned > start) ::munmap(start, static_cast<std::size_t>(aligned - start));
        const std::size_t tail = static_cast<std::size_t>(start + bytes + align - (aligned + bytes));
        if (tail) ::munmap(aligned + bytes, tail);
    }
    if (isolate) {
        advise_end_frames(aligned, bytes);
        // Writable only now; this is also where the kernel charges a private mapping's commit.
        if (::mprotect(aligned, bytes, PROT_READ | PROT_WRITE) != 0) {
            ::munmap(aligned, bytes);
            return nullptr;
        }
    }
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
