#include "placement_internal.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/format.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>
#include <omp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <new>
#include <set>

namespace ccnuma {

namespace detail {

std::size_t base_page_bytes() noexcept {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

std::size_t unit_bytes(pages p) noexcept { return p == pages::huge ? huge_page_bytes : base_page_bytes(); }

std::string human_bytes(std::uint64_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    unsigned u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 && u > 0 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

node_mask mask_of(const std::vector<unsigned>& nodes) {
    node_mask m(max_node_bits / (8 * sizeof(unsigned long)), 0);
    for (unsigned n : nodes)
        if (n < max_node_bits) m[n / (8 * sizeof(unsigned long))] |= 1ul << (n % (8 * sizeof(unsigned long)));
    return m;
}

std::vector<unsigned> nodes_of(const node_mask& m) {
    std::vector<unsigned> nodes;
    for (unsigned n = 0; n < max_node_bits && n / (8 * sizeof(unsigned long)) < m.size(); ++n)
        if (m[n / (8 * sizeof(unsigned long))] & (1ul << (n % (8 * sizeof(unsigned long))))) nodes.push_back(n);
    return nodes;
}

namespace {
const topology& machine() {
    // Placement acts on this machine, whatever CCNUMA_TOPOLOGY says for planning.
    static const topology t = [] {
        topology_options o;
        o.use_environment = false;
        return topology::load(o);
    }();
    return t;
}
}  // namespace

std::vector<unsigned> allowed_memory_nodes() {
    node_mask m(max_node_bits / (8 * sizeof(unsigned long)), 0);
    int mode = 0;
    if (::syscall(SYS_get_mempolicy, &mode, m.data(), syscall_max_node, nullptr, MPOL_F_MEMS_ALLOWED) != 0) {
        std::vector<unsigned> nodes;
        for (const auto& n : machine().numa_nodes()) nodes.push_back(n.os_index);
        return nodes;
    }
    return nodes_of(m);
}

std::uint64_t node_memory(unsigned node) {
    for (const auto& n : machine().numa_nodes())
        if (n.os_index == node) return n.memory_bytes;
    return 0;
}

void check_node(unsigned node, const std::string& what) { check_node(node, what, allowed_memory_nodes()); }

void check_node(unsigned node, const std::string& what, std::span<const unsigned> allowed) {
    if (std::find(allowed.begin(), allowed.end(), node) == allowed.end())
        throw_error(errc::invalid_argument, what + ": node " + std::to_string(node) + " is not in the allowed set {" +
                                                format_list(allowed) + "}");
}

int mbind_range(void* addr, std::size_t len, int mode, const std::vector<unsigned>& nodes, unsigned flags) {
    if (len == 0) return 0;
    const node_mask m = mask_of(nodes);
    const long rc = ::syscall(SYS_mbind, addr, len, mode, nodes.empty() ? nullptr : m.data(),
                              nodes.empty() ? 0 : syscall_max_node, flags);
    return rc == 0 ? 0 : errno;
}

unsigned team_layout::owner(std::size_t element) const noexcept {
    if (chunk != 0) return static_cast<unsigned>((element / chunk) % threads);
    for (unsigned t = 0; t < threads; ++t)
        if (element >= first[t] && element < last_plus_one[t]) return t;
    return 0;
}

std::size_t team_layout::smallest_share() const noexcept {
    std::size_t smallest = std::numeric_limits<std::size_t>::max();
    for (unsigned t = 0; t < threads; ++t) {
        std::size_t share = 0;
        if (chunk == 0) {
            share = last_plus_one[t] > first[t] ? last_plus_one[t] - first[t] : 0;
        } else {
            // Whole chunks of thread t, and its part of the last one.
            const std::size_t chunks = (elements + chunk - 1) / chunk;
            const std::size_t mine = chunks / threads + (t < chunks % threads ? 1 : 0);
            share = std::min(mine * chunk, elements);
        }
        smallest = std::min(smallest, share);
    }
    return smallest;
}

int max_team_threads() noexcept {
    const int per_cpu = 64 * std::max(1, omp_get_num_procs());
    return std::max(1, std::min(omp_get_thread_limit(), std::max(256, per_cpu)));
}

int team_size(const schedule& s, std::string_view operation) {
    if (s.threads == 0) return std::max(1, omp_get_max_threads());
    const int limit = max_team_threads();
    if (s.threads > static_cast<unsigned>(limit))
        throw_error(errc::invalid_argument,
                    std::string(operation) + ": a team of " + std::to_string(s.threads) +
                        " threads is more than this process can start (valid: threads(1) to threads(" +
                        std::to_string(limit) + "), 64 per available CPU and at most OMP_THREAD_LIMIT, or 0 for "
                        "the OpenMP default of " + std::to_string(std::max(1, omp_get_max_threads())) + ")");
    return static_cast<int>(s.threads);
}

team_layout run_team(std::size_t elements, const schedule& s,
                     const std::function<void(unsigned, const team_layout&)>& in_thread, std::string_view operation) {
    const auto requested = static_cast<unsigned>(team_size(s, operation));
    team_layout team;
    team.elements = elements;
    team.chunk = s.chunk;
    team.first.assign(requested, 0);
    team.last_plus_one.assign(requested, 0);
    team.node.assign(requested, -1);
    const bool plan = !current_plan().empty();
    std::exception_ptr error;
    std::once_flag error_once;
#pragma omp parallel num_threads(static_cast<int>(requested))
    {
        const auto t = static_cast<unsigned>(omp_get_thread_num());
#pragma omp single
        team.threads = static_cast<unsigned>(omp_get_num_threads());
        if (plan) {
            try {
                (void)bind_this_thread();
            } catch (...) {
                // The plan does not cover this team (another size or nesting level): the
                // threads stay where the runtime put them, and their real nodes are used.
            }
        }
        unsigned cpu = 0, node = 0;
        if (::getcpu(&cpu, &node) == 0) team.node[t] = static_cast<int>(node);
        if (s.chunk == 0) {
            // The runtime's own partition, measured: no memory is touched, so this is cheap.
            // Locals, stored once: writing the shared vectors per iteration would false-share.
            std::size_t lo = 0, hi = 0;
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < elements; ++i) {
                if (hi == 0) lo = i;
                hi = i + 1;
            }
            team.first[t] = lo;
            team.last_plus_one[t] = hi;
        }
#pragma omp barrier
        if (in_thread) {
            try {
                in_thread(t, team);
            } catch (...) {
                std::call_once(error_once, [&] { error = std::current_exception(); });
            }
        }
    }
    if (error) std::rethrow_exception(error);
    return team;
}

std::vector<int> unit_nodes(const team_layout& team, const void* ptr, std::size_t bytes, std::size_t element_size,
                            std::size_t unit) {
    std::vector<int> nodes;
    if (bytes == 0) return nodes;
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    const auto end = begin + bytes;
    for (std::uintptr_t u = begin / unit * unit; u < end; u += unit)
        nodes.push_back(team.node[team.owner(unit_owner_element(u, unit, begin, end, element_size, team.elements))]);
    return nodes;
}

std::size_t unit_owner_element(std::uintptr_t unit_start, std::size_t unit, std::uintptr_t begin, std::uintptr_t end,
                               std::size_t element_size, std::size_t elements) {
    // The element in the middle of the unit's part of the range: a unit goes to the thread that
    // owns most of it, so a chunk boundary a few bytes into a huge page (an array cookie, an
    // odd element size) does not hand the whole huge page to the wrong thread.
    const std::uintptr_t from = std::max(unit_start, begin), to = std::min<std::uintptr_t>(unit_start + unit, end);
    const std::size_t element = (from + (to - from) / 2 - begin) / element_size;
    return std::min(element, elements == 0 ? 0 : elements - 1);
}

namespace {
std::mutex diagnostics_mutex;
std::function<void(std::string_view)> diagnostics_handler = [](std::string_view message) {
    static std::set<std::string, std::less<>> seen;
    if (!seen.insert(std::string(message)).second) return;
    std::fprintf(stderr, "ccnuma: warning: %.*s\n", static_cast<int>(message.size()), message.data());
};
}  // namespace

void diagnose(const std::string& message) {
    std::lock_guard lock(diagnostics_mutex);
    if (diagnostics_handler) diagnostics_handler(message);
}

}  // namespace detail

void set_diagnostic_handler(std::function<void(std::string_view)> handler) {
    std::lock_guard lock(detail::diagnostics_mutex);
    detail::diagnostics_handler = std::move(handler);
}

namespace detail {

namespace {
std::string with_args(const std::string& name, const std::string& args) {
    return args.empty() ? name : name + "(" + (args[0] == ',' ? args.substr(1) : args) + ")";
}
std::string schedule_args(const schedule& s) {
    std::string r;
    if (s.chunk) r += "chunk=" + std::to_string(s.chunk);
    if (s.threads) r += std::string(r.empty() ? "" : ",") + "threads=" + std::to_string(s.threads);
    return r;
}
std::string page_args(pages pg) { return pg == pages::huge ? ",huge" : ""; }

// One overload per policy type, and no generic one: std::visit then refuses to compile a policy
// variant with an alternative that is not handled here.
struct meaning_visitor {
    policy_meaning operator()(const first_touch& x) const {
        return {policy_meaning::action::touch, 0, {}, false, x.sched, x.page,
                with_args("first_touch", schedule_args(x.sched) + page_args(x.page))};
    }
    policy_meaning operator()(const blocked& x) const {
        return {policy_meaning::action::bind_units, MPOL_BIND, {}, false, x.sched, x.page,
                with_args("blocked", schedule_args(x.sched) + page_args(x.page))};
    }
    policy_meaning operator()(const interleave& x) const {
        return {policy_meaning::action::kernel_policy, MPOL_INTERLEAVE, x.node_set, false, {}, x.page,
                with_args("interleave", (x.node_set.empty() ? std::string("all") : format_list(x.node_set)) +
                                            page_args(x.page))};
    }
    policy_meaning operator()(const on_node& x) const {
        return {policy_meaning::action::kernel_policy, MPOL_BIND, {x.node}, false, {}, x.page,
                with_args("on_node", std::to_string(x.node) + page_args(x.page))};
    }
    policy_meaning operator()(const preferred& x) const {
        return {policy_meaning::action::kernel_policy, MPOL_PREFERRED, {x.node}, true, {}, x.page,
                with_args("preferred", std::to_string(x.node) + page_args(x.page))};
    }
};
}  // namespace

policy_meaning meaning_of(const policy& p) { return std::visit(meaning_visitor{}, p); }

std::vector<unsigned> target_nodes(const policy_meaning& m, const std::string& what) {
    for (unsigned n : m.nodes) check_node(n, what);
    return m.nodes.empty() || m.spills ? allowed_memory_nodes() : m.nodes;
}

}  // namespace detail

std::string to_string(const policy& p) { return detail::meaning_of(p).name; }

pages page_kind(const policy& p) noexcept {
    return std::visit([](const auto& x) { return x.page; }, p);
}

namespace {

// The nodes a policy may put pages on, checked against the allowed set.
std::vector<unsigned> target_nodes(const policy& p, std::size_t bytes) {
    const auto m = detail::meaning_of(p);
    return detail::target_nodes(m, "placement " + m.name + " of " + detail::human_bytes(bytes));
}

// A first touch that is a write fault, whatever the page holds. A plain read and write of the
// same byte is two faults where the kernel maps the zero page on reads: the read maps the huge
// zero page, and the write then splits it into base pages, so a huge-page policy got no huge
// page on such kernels (Debian's 6.1 and 6.12 among them). MADV_POPULATE_WRITE (Linux 5.14)
// faults the range in writable, on the calling thread's node, and keeps the content; older
// kernels get a compare-and-swap of 0 with 0, a locked read-modify-write that faults as a write
// on x86 and on ARMv8.1 atomics and never changes a byte.
void touch_range(std::uintptr_t from, std::uintptr_t to) {
    const std::size_t page = detail::base_page_bytes();
    const std::uintptr_t first_page = from / page * page;
    if (::madvise(reinterpret_cast<void*>(first_page), to - first_page, MADV_POPULATE_WRITE) == 0) return;
    for (std::uintptr_t b = from; b < to; b = (b / page + 1) * page) {
        char expected = 0;
        std::atomic_ref<char>(*reinterpret_cast<char*>(b)).compare_exchange_strong(expected, 0);
    }
}

void touch_units(const detail::team_layout& team, unsigned t, char* base, std::size_t bytes, std::size_t element_size,
                 std::size_t unit) {
    const auto begin = reinterpret_cast<std::uintptr_t>(base);
    const auto end = begin + bytes;
    // Consecutive units of this thread are touched as one range: one system call each.
    std::uintptr_t run_from = 0, run_to = 0;
    for (std::uintptr_t u = begin / unit * unit; u < end; u += unit) {
        if (team.owner(detail::unit_owner_element(u, unit, begin, end, element_size, team.elements)) != t) continue;
        const std::uintptr_t from = std::max(u, begin), to = std::min<std::uintptr_t>(u + unit, end);
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
    const std::size_t share = team.smallest_share() * element_size;
    if (share >= unit) return;
    detail::diagnose(to_string(p) + " of " + detail::human_bytes(bytes) + " over " + std::to_string(team.threads) +
                     " threads: a thread's chunk (" + detail::human_bytes(share) + ") is smaller than a " +
                     (unit == detail::huge_page_bytes ? "huge page" : "page") + " (" + detail::human_bytes(unit) +
                     "), so threads share pages and each page lands on one of their nodes; use larger blocks, "
                     "fewer threads, or interleave");
}

void apply(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size) {
    if (bytes == 0) return;
    element_size = std::max<std::size_t>(element_size, 1);
    const std::size_t unit = detail::unit_bytes(page_kind(p));
    const std::string what = "placement " + to_string(p) + " of " + detail::human_bytes(bytes);
    if (page_kind(p) == pages::huge) (void)::madvise(ptr, bytes, MADV_HUGEPAGE);
    auto fail = [&](int err, const std::string& call) {
        detail::throw_system_error(err, what + ": " + call + " failed");
    };
    const auto m = detail::meaning_of(p);
    const std::size_t n = bytes / element_size + (bytes % element_size ? 1 : 0);
    switch (m.act) {
        case detail::policy_meaning::action::touch: {
            auto team = detail::run_team(
                n, m.sched,
                [&](unsigned t, const detail::team_layout& layout) {
                    touch_units(layout, t, static_cast<char*>(ptr), bytes, element_size, unit);
                },
                what);
            warn_small_chunks(team, bytes, element_size, unit, p);
            return;
        }
        case detail::policy_meaning::action::bind_units: {
            const auto team = detail::run_team(n, m.sched, {}, what);
            warn_small_chunks(team, bytes, element_size, unit, p);
            const auto nodes = detail::unit_nodes(team, ptr, bytes, element_size, unit);
            // One mbind per run of units with the same node.
            const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
            const std::size_t page = detail::base_page_bytes();
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
            const auto nodes = detail::target_nodes(m, what);
            const std::size_t len =
                (bytes + detail::base_page_bytes() - 1) / detail::base_page_bytes() * detail::base_page_bytes();
            // A spilling policy names its own nodes to the kernel, not every node it may spill to.
            if (int err = detail::mbind_range(ptr, len, m.mode, m.spills ? m.nodes : nodes, 0)) fail(err, "mbind");
            return;
        }
    }
}

std::size_t mapping_length(std::size_t bytes, pages pg) {
    const std::size_t unit = detail::unit_bytes(pg);
    return (bytes + unit - 1) / unit * unit;
}

}  // namespace

void* allocate(std::size_t bytes, const policy& p, std::size_t element_size, std::size_t alignment) {
    const std::size_t page = detail::base_page_bytes();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > page)
        detail::throw_error(errc::invalid_argument, "allocate of " + detail::human_bytes(bytes) + ": alignment " +
                                                        std::to_string(alignment) +
                                                        " is not a power of two up to the page size (" +
                                                        std::to_string(page) + ")");
    // Validate nodes first, so that a bad node is reported as such even for small blocks.
    const auto nodes = target_nodes(p, bytes);
    if (bytes < page) return ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{alignment});


    // More than the policy's nodes hold can never be placed; refusing here is better than the
    // OOM killer later, when the pages are touched.
    std::uint64_t capacity = 0;
    for (unsigned n : nodes) capacity += detail::node_memory(n);
    if (capacity != 0 && bytes > capacity) throw std::bad_alloc();
    if (bytes > std::numeric_limits<std::size_t>::max() - 2 * detail::huge_page_bytes) throw std::bad_alloc();

    const pages pg = page_kind(p);
    const std::size_t len = mapping_length(bytes, pg);
    const std::size_t slack = pg == pages::huge ? detail::huge_page_bytes : 0;
    void* raw = ::mmap(nullptr, len + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    auto* start = static_cast<char*>(raw);
    if (slack) {
        // Trim to a 2 MiB boundary so that huge pages line up with the placement units.
        auto* aligned = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + slack - 1) / slack * slack);
        if (aligned > start) ::munmap(start, static_cast<std::size_t>(aligned - start));
        const std::size_t tail = static_cast<std::size_t>(start + len + slack - (aligned + len));
        if (tail) ::munmap(aligned + len, tail);
        start = aligned;
    }
    try {
        apply(start, bytes, p, element_size);
    } catch (...) {
        ::munmap(start, len);
        throw;
    }
    return start;
}

void deallocate(void* ptr, std::size_t bytes, const policy& p, std::size_t alignment) noexcept {
    if (ptr == nullptr) return;
    if (bytes < detail::base_page_bytes()) {
        ::operator delete(ptr, std::align_val_t{alignment});
        return;
    }
    ::munmap(ptr, mapping_length(bytes, page_kind(p)));
}

namespace {

// Whether [begin, end) is covered by mappings without a gap, each writable where `writable`:
// /proc/self/maps, because first_touch writes every page (a fault there is a SIGSEGV, not an
// errno), and mbind reports a hole only for part of the policies.
bool mapped(std::uintptr_t begin, std::uintptr_t end, bool writable) {
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    if (maps == nullptr) return true;  // no procfs: the kernel calls still report EFAULT
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

}  // namespace

void place(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size) {
    char at[32];
    std::snprintf(at, sizeof at, "%p", ptr);
    const std::string what = "place " + to_string(p) + " of " + detail::human_bytes(bytes) + " at " + at;
    const std::size_t page = detail::base_page_bytes();
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
    const bool writes = detail::meaning_of(p).act == detail::policy_meaning::action::touch;
    if (!mapped(begin, begin + bytes, writes))
        detail::throw_error(errc::invalid_argument,
                            what + (writes ? ": the range is not (entirely) mapped writable memory (first_touch writes "
                                             "every page; expected memory from mmap or allocate)"
                                           : ": the range is not (entirely) mapped memory (expected memory from mmap "
                                             "or allocate)"));
    apply(ptr, bytes, p, element_size);
}

}  // namespace ccnuma
