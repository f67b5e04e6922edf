#include "placement_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ccnuma {

namespace {

constexpr std::size_t batch_pages = 16384;  // per move_pages call, to bound the arrays

std::string range_text(const void* ptr, std::size_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%p", ptr);
    return detail::human_bytes(bytes) + " at " + buf;
}

// First page and page count covering [ptr, ptr + bytes).
std::pair<std::uintptr_t, std::size_t> page_span(const void* ptr, std::size_t bytes) {
    const std::size_t page = detail::base_page_bytes();
    const auto begin = reinterpret_cast<std::uintptr_t>(ptr) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(ptr) + bytes + page - 1) / page * page;
    return {begin, bytes == 0 ? 0 : (end - begin) / page};
}

// mincore() fails with ENOMEM exactly when part of the range is unmapped: that is the check
// move_pages lacks (it reports unmapped and untouched pages alike).
void require_mapped(std::uintptr_t first, std::size_t count, const std::string& what) {
    if (count == 0) return;
    std::vector<unsigned char> residency(count);
    if (::mincore(reinterpret_cast<void*>(first), count * detail::base_page_bytes(), residency.data()) != 0) {
        if (errno == ENOMEM)
            detail::throw_error(errc::invalid_argument, what + ": the range is not (entirely) mapped memory");
        detail::throw_system_error(errno, what + ": mincore failed");
    }
}

}  // namespace

std::vector<int> page_nodes(const void* ptr, std::size_t bytes) {
    const std::string what = "page query of " + range_text(ptr, bytes);
    const auto [first, count] = page_span(ptr, bytes);
    require_mapped(first, count, what);
    std::vector<int> nodes(count, page_not_present);
    std::vector<void*> addrs;
    std::vector<int> status;
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        addrs.resize(n);
        status.assign(n, 0);
        for (std::size_t i = 0; i < n; ++i)
            addrs[i] = reinterpret_cast<void*>(first + (done + i) * detail::base_page_bytes());
        if (::syscall(SYS_move_pages, 0, n, addrs.data(), nullptr, status.data(), 0) != 0) {
            if (errno == ENOSYS) detail::throw_error(errc::not_supported, what + ": this kernel has no move_pages");
            detail::throw_system_error(errno, what + ": move_pages failed");
        }
        // A negative status is -ENOENT (no page yet) or -EFAULT (never faulted in, or the shared
        // zero page); the range is mapped, so both mean "not present".
        for (std::size_t i = 0; i < n; ++i) nodes[done + i] = status[i] >= 0 ? status[i] : page_not_present;
    }
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
    if (not_present != 0 || pages.empty())
        s << (pages.empty() ? "" : ", ") << "not present: " << not_present << " pages";
    return s.str();
}

page_histogram node_histogram(const std::vector<int>& nodes) {
    page_histogram h;
    h.total = nodes.size();
    std::size_t max_node = 0;
    for (int n : nodes)
        if (n >= 0) max_node = std::max(max_node, static_cast<std::size_t>(n));
    for (const auto& n : topology::current().numa_nodes()) max_node = std::max<std::size_t>(max_node, n.os_index);
    h.pages.assign(max_node + 1, 0);
    for (int n : nodes) {
        if (n < 0) ++h.not_present;
        else ++h.pages[static_cast<std::size_t>(n)];
    }
    return h;
}

page_histogram node_histogram(const void* ptr, std::size_t bytes) { return node_histogram(page_nodes(ptr, bytes)); }

namespace {
double locality_of(const std::vector<int>& nodes, const void* ptr, std::size_t count, std::size_t element_size,
                   schedule s) {
    if (nodes.empty()) return 1.0;
    const auto team = detail::run_team(count, s, {}, "locality of " + std::to_string(count) + " elements");
    const auto expected = detail::unit_nodes(team, ptr, count * element_size, element_size, detail::base_page_bytes());
    std::size_t local = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i] >= 0 && nodes[i] == expected[i]) ++local;
    return static_cast<double>(local) / static_cast<double>(nodes.size());
}
}  // namespace

double locality(const void* ptr, std::size_t count, std::size_t element_size, schedule s) {
    if (count == 0 || element_size == 0) return 1.0;
    return locality_of(page_nodes(ptr, count * element_size), ptr, count, element_size, s);
}

std::string placement_report::to_string() const {
    char head[48];
    std::snprintf(head, sizeof head, "locality %.1f%%: ", 100.0 * locality);
    return head + pages.to_string();
}

placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, schedule s) {
    placement_report r;
    if (count == 0 || element_size == 0) {
        r.pages = node_histogram(std::vector<int>{});
        return r;
    }
    const auto nodes = page_nodes(ptr, count * element_size);
    r.pages = node_histogram(nodes);
    r.locality = locality_of(nodes, ptr, count, element_size, s);
    return r;
}

void migrate(void* ptr, std::size_t bytes, const policy& p) {
    const std::string what = "migrate of " + range_text(ptr, bytes) + " to " + to_string(p);
    const std::size_t page = detail::base_page_bytes();
    if (reinterpret_cast<std::uintptr_t>(ptr) % page != 0)
        detail::throw_error(errc::invalid_argument, what + ": the address is not page-aligned");
    if (bytes == 0) return;
    const auto [first, count] = page_span(ptr, bytes);
    require_mapped(first, count, what);
    // The target node of every page, then move_pages. mbind's MPOL_MF_MOVE is not enough: it
    // moves only pages outside the new node set, so a page on node 0 stays put under
    // interleave(0,1) even where round-robin wants it on node 1.
    const std::size_t unit = detail::unit_bytes(page_kind(p));
    std::vector<int> targets;
    if (std::holds_alternative<first_touch>(p) || std::holds_alternative<blocked>(p)) {
        const schedule s = std::holds_alternative<first_touch>(p) ? std::get<first_touch>(p).sched : std::get<blocked>(p).sched;
        // Pages as the elements: the page decides anyway, and a loop over bytes would cost
        // O(bytes) for nothing.
        const auto team = detail::run_team(count, s, {}, what);
        const auto per_unit = detail::unit_nodes(team, ptr, bytes, page, unit);
        for (std::size_t i = 0; i < count; ++i)
            targets.push_back(per_unit[(first + i * page) / unit - reinterpret_cast<std::uintptr_t>(ptr) / unit]);
    } else {
        std::vector<unsigned> set;
        if (const auto* il = std::get_if<interleave>(&p)) set = il->node_set.empty() ? detail::allowed_memory_nodes() : il->node_set;
        else if (const auto* on = std::get_if<on_node>(&p)) set = {on->node};
        else set = {std::get<preferred>(p).node};
        for (unsigned n : set) detail::check_node(n, what);
        // The kernel's own interleave order: by page (or huge page) number modulo the set.
        for (std::size_t i = 0; i < count; ++i)
            targets.push_back(static_cast<int>(set[((first + i * page) / unit) % set.size()]));
    }
    std::vector<void*> addrs;
    std::vector<int> to, status;
    for (std::size_t done = 0; done < count; done += batch_pages) {
        const std::size_t n = std::min(batch_pages, count - done);
        addrs.clear();
        to.clear();
        for (std::size_t i = 0; i < n; ++i) {
            if (targets[done + i] < 0) continue;
            addrs.push_back(reinterpret_cast<void*>(first + (done + i) * page));
            to.push_back(targets[done + i]);
        }
        status.assign(addrs.size(), 0);
        if (!addrs.empty() &&
            ::syscall(SYS_move_pages, 0, addrs.size(), addrs.data(), to.data(), status.data(), MPOL_MF_MOVE) < 0)
            detail::throw_system_error(errno, what + ": move_pages failed");
    }
    // Pages written from now on follow the new policy too (first_touch has none to set).
    if (!std::holds_alternative<first_touch>(p)) place(ptr, bytes, p, page);
}

const support_info& support() {
    static const support_info info = [] {
        support_info s;
        s.page_size = detail::base_page_bytes();
        int mode = 0;
        s.mbind = ::syscall(SYS_get_mempolicy, &mode, nullptr, 0, nullptr, 0) == 0;
        // A query of zero pages succeeds where move_pages exists.
        s.move_pages = ::syscall(SYS_move_pages, 0, 0, nullptr, nullptr, nullptr, 0) == 0;
        std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
        std::string line;
        if (std::getline(enabled, line)) {
            const auto open = line.find('['), close = line.find(']');
            if (open != std::string::npos && close != std::string::npos) s.thp_mode = line.substr(open + 1, close - open - 1);
        }
        std::ifstream pmd("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
        pmd >> s.huge_page_size;
        s.thp = !s.thp_mode.empty() && s.thp_mode != "never";
        return s;
    }();
    return info;
}

std::string support_info::to_string() const {
    return std::string("mbind ") + (mbind ? "yes" : "no") + ", move_pages " + (move_pages ? "yes" : "no") + ", THP " +
           (thp_mode.empty() ? "not available" : thp_mode) +
           (huge_page_size ? " (" + detail::human_bytes(huge_page_size) + ")" : std::string()) + ", page " +
           detail::human_bytes(page_size);
}

}  // namespace ccnuma
