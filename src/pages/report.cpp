// Reports of a range's placement: the per-node histogram, locality against the schedule's owners
// (which starts a team to ask who owns each element) and placement_report.

#include "pages_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

namespace ccnuma {

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
    if (!detail::page_access_here().pagemap) return node_histogram(page_nodes(ptr, bytes));
    return node_histogram(page_states(ptr, bytes));
}

namespace {
// The page measures against the owners that `s` gives the pages to, from one team. Pages
// without a frame (never written, or read only: the zero page) are counted apart: locality and
// near are fractions of the placed pages.
struct owner_measures {
    double locality = 1.0, near = 1.0;
    std::size_t spilled = 0, placed = 0, not_placed = 0;
};

owner_measures measure_owners(const std::vector<int>& nodes, const void* ptr, std::size_t count,
                              std::size_t element_size, schedule s) {
    owner_measures r;
    if (nodes.empty()) return r;
    const auto team = detail::run_team(count, s, {}, "locality of " + std::to_string(count) + " elements");
    std::vector<std::vector<unsigned>> local(team.threads);
    for (unsigned t = 0; t < team.threads; ++t) local[t] = detail::thread_local_nodes(team, t);
    const detail::unit_range pages(ptr, count * element_size, element_size, detail::page_bytes());
    std::size_t on_own = 0, on_near = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i] < 0) {
            ++r.not_placed;
            continue;
        }
        ++r.placed;
        const unsigned t = team.unit_owner(pages, i);
        const auto n = static_cast<unsigned>(nodes[i]);
        if (nodes[i] == team.node[t]) ++on_own;
        const auto& l = local[t];
        if (std::find(l.begin(), l.end(), n) != l.end()) ++on_near;
        if (l.empty() || l.front() != n) ++r.spilled;
    }
    // No page placed yet: none of them is local (0 of 0), and placed says why.
    const double placed = static_cast<double>(std::max<std::size_t>(r.placed, 1));
    r.locality = static_cast<double>(on_own) / placed;
    r.near = static_cast<double>(on_near) / placed;
    return r;
}

// Huge pages of [begin, begin + bytes) in mappings advised MADV_NOHUGEPAGE: each aligned huge
// page that such a mapping overlaps counts once.
std::size_t huge_pages_given_up(std::uintptr_t begin, std::size_t bytes) {
    const std::size_t huge = detail::huge_page_bytes();
    if (huge <= detail::page_bytes()) return 0;
    const auto ranges = detail::no_huge_ranges(begin, begin + bytes);
    if (!ranges) return 0;
    std::size_t count = 0;
    std::uintptr_t counted_to = 0;  // huge pages below it are counted
    for (const auto& [from, to] : *ranges) {
        const std::uintptr_t first = std::max(from / huge * huge, counted_to);
        const std::uintptr_t last = (to + huge - 1) / huge * huge;
        if (last > first) count += (last - first) / huge;
        counted_to = std::max(counted_to, last);
    }
    return count;
}

double locality_of(const std::vector<int>& nodes, const void* ptr, std::size_t count, std::size_t element_size,
                   schedule s) {
    return measure_owners(nodes, ptr, count, element_size, s).locality;
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
    char head[96];
    // near and spilled only where tiers make them differ from locality: the outputs of untiered
    // machines stay as they were.
    bool tiered = false;
    try {
        tiered = topology::current().is_tiered();
    } catch (const error&) {
    }
    if (placed == 0 && not_placed != 0)
        std::snprintf(head, sizeof head, "locality: no page placed yet (%zu not placed): ", not_placed);
    else if (tiered)
        std::snprintf(head, sizeof head, "locality %.1f%%, near %.1f%%, spilled %zu pages: ", 100.0 * locality,
                      100.0 * near, spilled);
    else
        std::snprintf(head, sizeof head, "locality %.1f%%: ", 100.0 * locality);
    std::string r = head + pages.to_string();
    // Only where they happened, so that the common report stays one short line.
    if (placed != 0 && not_placed != 0)
        r += "; " + std::to_string(not_placed) + " pages not placed yet (locality is over the " + std::to_string(placed) +
             " placed)";
    if (huge_given_up != 0 && thp_unadvised)
        r += "; " + std::to_string(huge_given_up) + (huge_given_up == 1 ? " huge-page frame" : " huge-page frames") +
             " opted out of THP (MADV_NOHUGEPAGE: shared by two threads' parts or planned nodes, interleaved page by "
             "page, or only partly in this range)";
    return r;
}

placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, const partition& owners) {
    schedule s;
    s.partition = owners;
    return report_placement(ptr, count, element_size, s);
}

placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, schedule s) {
    placement_report r;
    const std::size_t bytes = checked_bytes("placement report", ptr, count, element_size);
    if (bytes == 0) {
        r.pages = node_histogram(std::vector<int>{});
        return r;
    }
    std::vector<int> nodes;
    if (detail::page_access_here().pagemap) {
        const auto states = page_states(ptr, bytes);
        r.pages = node_histogram(states);
        nodes.reserve(states.size());
        for (const auto& p : states) nodes.push_back(p.node);
    } else {
        nodes = page_nodes(ptr, bytes);
        r.pages = node_histogram(nodes);
    }
    const auto m = measure_owners(nodes, ptr, count, element_size, s);
    r.locality = m.locality;
    r.near = m.near;
    r.spilled = m.spilled;
    r.placed = m.placed;
    r.not_placed = m.not_placed;
    r.huge_given_up = huge_pages_given_up(reinterpret_cast<std::uintptr_t>(ptr), bytes);
    r.thp_unadvised =
        !detail::thp_unadvised_sizes(detail::thp_mode(), detail::thp_size_modes(), detail::huge_page_bytes()).empty();
    return r;
}

}  // namespace ccnuma
