// migrate and try_migrate: every page of a range to the node its policy gives it, by move_pages,
// and the report of what stayed and why.

#include "pages_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace ccnuma {

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
    const auto [first, count] = detail::page_span(ptr, bytes, what);
    detail::require_mapped(first, count, what);
    report.pages = count;
    // The target node of every page, then move_pages. mbind's MPOL_MF_MOVE is not enough: it
    // moves only pages outside the new node set, so a page on node 0 stays put under
    // interleave(0,1) even where round-robin wants it on node 1.
    const std::size_t unit = detail::unit_bytes(page_kind_of(p));
    std::vector<int> targets;
    const auto m = detail::meaning_of(p);
    if (m.act != detail::policy_meaning::action::kernel_policy) {
        // Pages as the elements: the page decides anyway, and a loop over bytes would cost
        // O(bytes) for nothing. A partition names elements, whose size follows from it.
        std::size_t elements = count, element_size = page;
        if (const auto& part = m.sched.partition; !part.empty()) {
            if (part.elements() == 0 || bytes % part.elements() != 0)
                detail::throw_error(errc::invalid_argument,
                                    what + ": " + to_string(part) + " of " + std::to_string(part.elements()) +
                                        " elements does not divide the range's " + std::to_string(bytes) +
                                        " bytes (expected a partition of the range's elements)");
            elements = part.elements();
            element_size = bytes / elements;
        }
        const auto team = detail::run_team(elements, m.sched, {}, what);
        const detail::unit_range units(ptr, bytes, element_size, unit);
        auto per_unit = detail::unit_nodes(team, units);
        // The tier policies plan each unit's node (weights, tiers, free memory); a unit they
        // leave to plain first touch goes to its owner's node.
        if (m.act == detail::policy_meaning::action::write_planned) {
            const auto planned = detail::plan_units(m, detail::policy_nodes(m, what), team, units, what);
            for (std::size_t k = 0; k < per_unit.size(); ++k)
                if (planned[k] >= 0) per_unit[k] = planned[k];
        }
        for (std::size_t i = 0; i < count; ++i)
            targets.push_back(per_unit[(first + i * page) / unit - reinterpret_cast<std::uintptr_t>(ptr) / unit]);
    } else {
        // A spilling policy's pages move to its own nodes.
        const std::vector<unsigned> set = m.spills ? m.nodes : detail::policy_nodes(m, what);
        for (unsigned n : set) detail::check_node(n, what);
        // The kernel's own interleave order: by page (or huge page) number modulo the set.
        for (std::size_t i = 0; i < count; ++i)
            targets.push_back(static_cast<int>(set[((first + i * page) / unit) % set.size()]));
    }
    // Every page's node before the move: a page already on its target is not asked to move,
    // and one without a frame cannot be. Only pages on another node go to the kernel.
    const auto before = detail::move_pages_status(first, count, what);
    std::size_t nodes = 0;
    for (const auto& n : topology::current().numa_nodes()) nodes = std::max<std::size_t>(nodes, n.os_index + 1);
    std::vector<void*> addrs;
    std::vector<int> to, status, after;
    for (std::size_t done = 0; done < count; done += detail::move_batch_pages) {
        const std::size_t n = std::min(detail::move_batch_pages, count - done);
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
    return "migrate of " + detail::range_text(ptr, bytes) + " to " + to_string(p);
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

}  // namespace ccnuma
