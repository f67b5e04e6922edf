// Placement: allocate, place and the policies' actions on a range. What a policy means is
// policy.cpp's (meaning_of), the team that owns each unit team.cpp's, the system calls the OS
// layer's (os/os.hpp).

#include "placement_internal.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

namespace ccnuma {

namespace {

// The nodes a policy may put pages on, checked against the allowed set.
std::vector<unsigned> target_nodes(const policy& p, std::size_t bytes) {
    const auto m = detail::meaning_of(p);
    return detail::policy_nodes(m, "placement " + m.name + " of " + detail::human_bytes(bytes));
}

// A first touch that is a write fault, whatever the page holds. A plain read and write of the
// same byte is two faults where the kernel maps the zero page on reads: the read maps the huge
// zero page, and the write then splits it into base pages, so a huge-page policy got no huge
// page on such kernels (Debian's 6.1 and 6.12 among them). MADV_POPULATE_WRITE (Linux 5.14)
// faults the range in writable, on the calling thread's node, and keeps the content; older
// kernels get a compare-and-swap of 0 with 0, a locked read-modify-write that faults as a write
// on x86 and on ARMv8.1 atomics and never changes a byte.
void touch_range(std::uintptr_t from, std::uintptr_t to) {
    const std::size_t page = detail::page_bytes();
    const std::uintptr_t first_page = from / page * page;
    if (detail::populate_write(reinterpret_cast<void*>(first_page), to - first_page) == 0) return;
    for (std::uintptr_t b = from; b < to; b = (b / page + 1) * page) {
        char expected = 0;
        std::atomic_ref<char>(*reinterpret_cast<char*>(b)).compare_exchange_strong(expected, 0);
    }
}

void touch_units(const detail::team_layout& team, unsigned t, const detail::unit_range& r) {
    // Consecutive units of this thread are touched as one range: one system call each.
    std::uintptr_t run_from = 0, run_to = 0;
    for (std::size_t i = 0; i < r.count(); ++i) {
        if (team.unit_owner(r, i) != t) continue;
        const std::uintptr_t from = r.from(i), to = r.to(i);
        if (run_to != from) {
            if (run_to != run_from) touch_range(run_from, run_to);
            run_from = from;
        }
        run_to = to;
    }
    if (run_to != run_from) touch_range(run_from, run_to);
}

void warn_small_chunks(const detail::team_layout& team, std::size_t bytes, std::size_t element_size, std::size_t unit,
                       const policy& p) {
    if (team.threads < 2 || team.elements == 0) return;
    const std::size_t smallest = team.smallest_share();
    if (smallest == 0) {
        // Threads that own no element have no chunk to be small: chunk(SIZE_MAX), or fewer
        // elements than threads. Say how many, and what the chunk is, in elements (a chunk's
        // bytes may be beyond the address space).
        unsigned idle = 0;
        for (unsigned t = 0; t < team.threads; ++t)
            idle += team.share(t) == 0 ? 1 : 0;
        detail::diagnose(to_string(p) + " of " + detail::human_bytes(bytes) + " over " +
                         std::to_string(team.threads) + " threads: " + std::to_string(idle) + " of them own no element (" +
                         std::to_string(team.elements) + " elements" +
                         (team.sched.chunk != 0 ? " in chunks of " + std::to_string(team.sched.chunk) : std::string()) +
                         (team.sched.partition.empty() ? "" : " by " + to_string(team.sched.partition)) +
                         "), so every page lands on the nodes of the others; use a smaller chunk or fewer threads");
        return;
    }
    const std::size_t share = smallest * element_size;
    if (share >= unit) return;
    detail::diagnose(to_string(p) + " of " + detail::human_bytes(bytes) + " over " + std::to_string(team.threads) +
                     " threads: a thread's chunk (" + detail::human_bytes(share) + ") is smaller than a " +
                     (unit > detail::page_bytes() ? "huge page" : "page") + " (" + detail::human_bytes(unit) +
                     "), so threads share pages and each page lands on one of their nodes; use larger blocks, "
                     "fewer threads, or interleave");
}

// The calling thread's memory policy, put back when a planned write ends, so the OpenMP pool
// threads leave an allocation with the policy they came with.
class thread_policy_guard {
public:
    explicit thread_policy_guard(const std::string& what) {
        if (const int err = detail::get_thread_policy(mode_, nodes_))
            detail::throw_system_error(err, what + ": get_mempolicy failed");
    }
    thread_policy_guard(const thread_policy_guard&) = delete;
    thread_policy_guard& operator=(const thread_policy_guard&) = delete;
    ~thread_policy_guard() { restore(); }
    void set(int mode, unsigned node, const std::string& what) {
        if (changed_ && node == node_) return;
        if (const int err = detail::set_thread_policy(mode, {node}))
            detail::throw_system_error(err, what + ": set_mempolicy to node " + std::to_string(node) + " failed");
        changed_ = true;
        node_ = node;
    }
    void restore() noexcept {
        if (changed_) (void)detail::set_thread_policy(mode_, nodes_);
        changed_ = false;
    }

private:
    int mode_ = 0;
    std::vector<unsigned> nodes_;
    bool changed_ = false;
    unsigned node_ = 0;
};

// Thread t writes its units, each run of one planned node under the thread policy `mode` on that
// node, so the page faults put them there. A thread policy and not one mbind per run: runs of
// different nodes alternate (2:1 weights make a run every two pages), and a mapping split into
// that many VMAs fails at vm.max_map_count (65530) after about 256 MiB.
void write_planned(const detail::team_layout& team, unsigned t, const std::vector<int>& plan, int mode,
                   const detail::unit_range& r, const std::string& what) {
    thread_policy_guard guard(what);
    std::uintptr_t run_from = 0, run_to = 0;
    int run_node = -1;
    auto flush = [&] {
        if (run_to == run_from) return;
        if (run_node >= 0) guard.set(mode, static_cast<unsigned>(run_node), what);
        else guard.restore();
        touch_range(run_from, run_to);
    };
    for (std::size_t i = 0; i < r.count(); ++i) {
        if (team.unit_owner(r, i) != t) continue;
        const std::uintptr_t from = r.from(i), to = r.to(i);
        const int node = plan[i];
        if (run_to != from || node != run_node) {
            flush();
            run_from = from;
            run_node = node;
        }
        run_to = to;
    }
    flush();
}

// Base-page units, where the kernel has THP: it may back an aligned huge-page frame of the
// mapping with one folio on the node of the first thread that writes any byte of it, a PMD one
// under THP "always" and, since Linux 6.8, a smaller one (mTHP: 16 KiB to 1 MiB) of every size
// whose hugepages-<size>kB/enabled says "always", in any top-level mode. So a frame whose base
// pages belong to two threads would go whole to one of them: in the 4-node guest, with
// hugepages-64kB "always" under "madvise", chunks of 300 KiB came out 89.1 to 91.4% local
// before this ran in every mode. The same holds for a frame whose units are planned for two
// nodes (the tier policies, weights). Those frames, where key(i) of unit i differs (the
// owning thread, or the planned node), and the ones the range covers only in part (their
// other part is someone else's), are opted out with MADV_NOHUGEPAGE, which opts out every
// folio size, before anything is written; a frame of one key stays eligible, since it lands
// on that thread's or that planned node either way. The frame is the PMD size, the
// largest an anonymous fault gets, so a smaller folio across a boundary lies in an opted-out
// frame too. It is done in every mode: which sizes may fault in unadvised is up to ten sysfs
// files, read at the first write rather than now (memory.cpp). Adjacent opted-out frames are
// advised as one range, so a team of T threads splits the mapping into at most about 2T + 2
// VMAs by owner (the planned-node key adds a boundary wherever the plan changes node inside a
// frame: up to one run per unit for a fine weight pattern). Returns how many frames were
// given up.
template <class Key>
std::size_t keep_base_units_exact(const detail::unit_range& r, const std::string& what, Key key) {
    const std::size_t huge = detail::huge_page_bytes();
    const std::size_t page = detail::page_bytes();
    if (huge <= page || r.unit >= huge || r.end == r.begin) return 0;
    const std::uintptr_t lo = r.begin / page * page, hi = (r.end + page - 1) / page * page;
    std::size_t given_up = 0;
    std::uintptr_t run_from = 0, run_to = 0;
    auto flush = [&] {
        if (run_to == run_from) return;
        if (const int err = detail::advise_huge(reinterpret_cast<void*>(run_from), run_to - run_from, false))
            detail::diagnose(what + ": madvise(MADV_NOHUGEPAGE) of " + detail::human_bytes(run_to - run_from) +
                             " failed (" + std::strerror(err) +
                             "), so transparent huge pages may put a neighbour's pages on one thread's node there");
        run_from = run_to = 0;
    };
    for (std::uintptr_t h = lo / huge * huge; h < hi; h += huge) {
        bool mixed = h < lo || h + huge > hi;
        if (!mixed) {
            // Units of this huge page: the base units from h to h + huge.
            const std::size_t i0 = (h - r.first) / r.unit, i1 = std::min(r.count(), (h + huge - r.first) / r.unit);
            const auto first = key(i0);
            for (std::size_t i = i0 + 1; i < i1 && !mixed; ++i) mixed = key(i) != first;
        }
        if (!mixed) continue;
        ++given_up;
        const std::uintptr_t from = std::max(h, lo), to = std::min<std::uintptr_t>(h + huge, hi);
        if (run_to != from) {
            flush();
            run_from = from;
        }
        run_to = to;
    }
    flush();
    return given_up;
}

// keep_base_units_exact by the owning thread (touch, bind_units).
std::size_t keep_base_units_exact(const detail::team_layout& team, const detail::unit_range& r, const std::string& what) {
    return keep_base_units_exact(r, what, [&](std::size_t i) { return team.unit_owner(r, i); });
}

}  // namespace

namespace {

void apply(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size) {
    if (bytes == 0) return;
    element_size = std::max<std::size_t>(element_size, 1);
    const detail::unit_range units(ptr, bytes, element_size, detail::unit_bytes(page_kind_of(p)));
    const std::size_t unit = units.unit;
    const std::string what = "placement " + to_string(p) + " of " + detail::human_bytes(bytes);
    if (page_kind_of(p) == page_kind::huge) (void)detail::advise_huge(ptr, bytes, true);
    auto fail = [&](int err, const std::string& call) {
        detail::throw_system_error(err, what + ": " + call + " failed");
    };
    const auto m = detail::meaning_of(p);
    const std::size_t n = bytes / element_size + (bytes % element_size ? 1 : 0);
    switch (m.act) {
        case detail::policy_meaning::action::touch: {
            // The team learns where its threads run first, so that the huge pages two of them
            // share are opted out before either writes.
            const auto learned = detail::run_team(n, m.sched, {}, what);
            warn_small_chunks(learned, bytes, element_size, unit, p);
            (void)keep_base_units_exact(learned, units, what);
            (void)detail::run_team(
                n, m.sched, [&](unsigned t, const detail::team_layout& layout) { touch_units(layout, t, units); }, what);
            return;
        }
        case detail::policy_meaning::action::bind_units: {
            const auto team = detail::run_team(n, m.sched, {}, what);
            warn_small_chunks(team, bytes, element_size, unit, p);
            (void)keep_base_units_exact(team, units, what);
            const auto nodes = detail::unit_nodes(team, units);
            // One mbind per run of units with the same node.
            const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
            const std::size_t page = detail::page_bytes();
            for (std::size_t i = 0, j = 0; i < nodes.size(); i = j) {
                for (j = i + 1; j < nodes.size() && nodes[j] == nodes[i]; ++j) {
                }
                const std::uintptr_t from = std::max<std::uintptr_t>(begin, (begin / unit + i) * unit);
                const std::uintptr_t to = std::min<std::uintptr_t>(begin + bytes, (begin / unit + j) * unit);
                const std::uintptr_t to_page = (to + page - 1) / page * page;
                if (nodes[i] < 0) continue;
                if (int err = detail::mbind_range(reinterpret_cast<void*>(from), to_page - from, m.mode,
                                                  {static_cast<unsigned>(nodes[i])}, 0))
                    fail(err, "mbind to node " + std::to_string(nodes[i]));
            }
            return;
        }
        case detail::policy_meaning::action::kernel_policy: {
            const auto nodes = detail::policy_nodes(m, what);
            const std::size_t len =
                (bytes + detail::page_bytes() - 1) / detail::page_bytes() * detail::page_bytes();
            // A spilling policy names its own nodes to the kernel, not every node it may spill to.
            if (int err = detail::mbind_range(ptr, len, m.mode, m.spills ? m.nodes : nodes, 0)) {
                // The nodes are checked above, so EINVAL for this mode means the kernel lacks it.
                if (err == EINVAL && m.mode == detail::mpol_weighted_interleave)
                    detail::throw_error(errc::not_supported,
                                        what + ": this kernel lacks MPOL_WEIGHTED_INTERLEAVE (Linux 6.9 or later); "
                                               "give the weights (.weights({...})) to place by weight on any kernel");
                fail(err, "mbind");
            }
            // The kernel interleaves a folio as one unit: under THP "always", or with a smaller
            // folio size "always" (mTHP), base-page interleave would step by 2 MiB or 64 KiB.
            // The pages stay base pages, as the policy says; .pages(page_kind::huge) interleaves
            // huge pages (aligned, advised MADV_HUGEPAGE above). After the mbind, so that a
            // refused policy leaves a place()d range as it was; nothing is written in between.
            if (m.interleaves && page_kind_of(p) == page_kind::base && detail::huge_page_bytes() > detail::page_bytes())
                if (const int err = detail::advise_huge(ptr, len, false))
                    detail::diagnose(what + ": madvise(MADV_NOHUGEPAGE) of " + detail::human_bytes(len) + " failed (" +
                                     std::strerror(err) + "), so transparent huge pages may interleave it by folios");
            return;
        }
        case detail::policy_meaning::action::write_planned: {
            const auto nodes = detail::policy_nodes(m, what);
            const auto learned = detail::run_team(n, m.sched, {}, what);
            warn_small_chunks(learned, bytes, element_size, unit, p);
            const auto plan = detail::plan_units(m, nodes, learned, units, what);
            // A folio goes to the node its first writer's run is planned for, whichever thread
            // writes; an unplanned unit (-1) is first-touched, on its owner's node.
            (void)keep_base_units_exact(units, what, [&](std::size_t i) {
                return plan[i] >= 0 ? static_cast<long long>(plan[i]) : -1 - static_cast<long long>(learned.unit_owner(units, i));
            });
            (void)detail::run_team(
                n, m.sched,
                [&](unsigned t, const detail::team_layout& layout) {
                    write_planned(layout, t, plan, m.mode, units, what);
                },
                what);
            return;
        }
    }
}

std::size_t mapping_length(std::size_t bytes, page_kind pg) {
    const std::size_t unit = detail::unit_bytes(pg);
    return (bytes + unit - 1) / unit * unit;
}

}  // namespace

namespace {

// The whole pages before the elements that hold a cookie of `cookie` bytes (none without one).
std::size_t cookie_pages(std::size_t cookie) {
    const std::size_t page = detail::page_bytes();
    return (cookie + page - 1) / page * page;
}

// allocate() and allocate_with_cookie(): the elements begin `cookie` bytes into the block.
void* allocate_block(const char* operation, std::size_t cookie, std::size_t bytes, const policy& p,
                     std::size_t element_size, std::size_t alignment) {
    const std::size_t page = detail::page_bytes();
    const std::string what = std::string(operation) + " of " + detail::human_bytes(bytes);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > page)
        detail::throw_error(errc::invalid_argument, what + ": alignment " + std::to_string(alignment) +
                                                        " is not a power of two up to the page size (" +
                                                        std::to_string(page) + ")");
    if (cookie > bytes)
        detail::throw_error(errc::invalid_argument, what + ": a cookie of " + std::to_string(cookie) +
                                                        " bytes does not fit in the block (valid: at most " +
                                                        std::to_string(bytes) + " bytes)");
    // Validate nodes first, so that a bad node is reported as such even for small blocks.
    const auto nodes = target_nodes(p, bytes);
    if (bytes < page) return ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{alignment});

    // More than the policy's nodes hold can never be placed; refusing here is better than the
    // OOM killer later, when the pages are touched.
    std::uint64_t capacity = 0;
    std::string held;
    for (unsigned n : nodes) {
        const auto memory = detail::node_memory(n);
        capacity += memory;
        held += (held.empty() ? "node " : ", node ") + std::to_string(n) + ": " + detail::human_bytes(memory);
    }
    if (capacity != 0 && bytes > capacity)
        detail::throw_error(errc::infeasible, "placement " + to_string(p) + " of " + detail::human_bytes(bytes) +
                                                  ": more memory than the policy's nodes hold (" + held +
                                                  "; valid: at most " + detail::human_bytes(capacity) + ")");
    if (bytes > std::numeric_limits<std::size_t>::max() - 2 * detail::huge_page_bytes()) throw std::bad_alloc();

    const page_kind pg = page_kind_of(p);
    const std::size_t pad = cookie_pages(cookie);
    const std::size_t len = pad + mapping_length(bytes - cookie, pg);
    // The elements start on the placement unit, so that huge pages line up with them and the
    // partition's chunks begin where a page does, as for an array without a cookie.
    auto* start = static_cast<char*>(detail::map_anonymous(len, detail::unit_bytes(pg), pad));
    if (start == nullptr) throw std::bad_alloc();
    try {
        apply(start + pad, bytes - cookie, p, element_size);
    } catch (...) {
        (void)detail::unmap(start, len);
        throw;
    }
    return start + pad - cookie;
}

void deallocate_block(void* ptr, std::size_t cookie, std::size_t bytes, const policy& p,
                      std::size_t alignment) noexcept {
    if (ptr == nullptr) return;
    if (bytes < detail::page_bytes()) {
        ::operator delete(ptr, std::align_val_t{alignment});
        return;
    }
    const std::size_t pad = cookie_pages(cookie);
    (void)detail::unmap(static_cast<char*>(ptr) + cookie - pad, pad + mapping_length(bytes - cookie, page_kind_of(p)));
}

}  // namespace

void* allocate(std::size_t bytes, const policy& p, std::size_t element_size, std::size_t alignment) {
    return allocate_block("allocate", 0, bytes, p, element_size, alignment);
}

void deallocate(void* ptr, std::size_t bytes, const policy& p, std::size_t alignment) noexcept {
    deallocate_block(ptr, 0, bytes, p, alignment);
}

void* allocate_with_cookie(std::size_t cookie, std::size_t bytes, const policy& p, std::size_t element_size,
                           std::size_t alignment) {
    return allocate_block("allocate_with_cookie", cookie, bytes, p, element_size, alignment);
}

void deallocate_with_cookie(void* ptr, std::size_t cookie, std::size_t bytes, const policy& p,
                            std::size_t alignment) noexcept {
    deallocate_block(ptr, cookie, bytes, p, alignment);
}

void place(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size) {
    char at[32];
    std::snprintf(at, sizeof at, "%p", ptr);
    const std::string what = "place " + to_string(p) + " of " + detail::human_bytes(bytes) + " at " + at;
    const std::size_t page = detail::page_bytes();
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    if (begin % page != 0)
        detail::throw_error(errc::invalid_argument, what + ": the address is not page-aligned (expected a multiple of " +
                                                        std::to_string(page) + ")");
    if (bytes == 0) return;
    // The range must end inside the address space, its last page included.
    if (bytes > std::numeric_limits<std::uintptr_t>::max() - begin - (page - 1))
        detail::throw_error(errc::invalid_argument,
                            what + ": the range runs past the end of the address space (valid: at most " +
                                std::to_string(std::numeric_limits<std::uintptr_t>::max() - begin - (page - 1)) +
                                " bytes from this address)");
    if (ptr == nullptr) detail::throw_error(errc::invalid_argument, what + ": the address is null");
    (void)target_nodes(p, bytes);
    const bool writes = detail::meaning_of(p).writes();
    // /proc/self/maps, because first_touch and the tier policies write every page (a fault there
    // is a SIGSEGV, not an errno), and mbind reports a hole only for part of the policies.
    // Without procfs the kernel calls still report EFAULT.
    if (!detail::maps_cover(begin, begin + bytes, writes).value_or(true))
        detail::throw_error(errc::invalid_argument,
                            what + (writes ? ": the range is not (entirely) mapped writable memory (this policy "
                                             "writes every page; expected memory from mmap or allocate)"
                                           : ": the range is not (entirely) mapped memory (expected memory from mmap "
                                             "or allocate)"));
    apply(ptr, bytes, p, element_size);
}

}  // namespace ccnuma
