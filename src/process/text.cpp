// process_snapshot::to_string(): the tables of ccnuma-ps, laid out as numastat lays out its own
// (a column per node, a totals row in MiB).

#include "process_internal.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/process.hpp>

#include <cstdio>

namespace ccnuma {

namespace {

std::string cell(const std::string& s, std::size_t width, bool right = false) {
    if (s.size() >= width) return s + " ";
    const std::string pad(width - s.size(), ' ');
    return (right ? pad + s : s + pad) + " ";
}

std::string opt(const std::optional<std::size_t>& v) { return v ? std::to_string(*v) : "-"; }

}  // namespace

std::string process_snapshot::to_string() const {
    std::string out;
    char buf[160];
    std::snprintf(buf, sizeof buf, "PID %d (%s), state %c, %zu thread%s, ", static_cast<int>(pid), command.c_str(),
                  state, threads.size(), threads.size() == 1 ? "" : "s");
    out += buf;
    out += (nodes.size() == 1 ? "node " : "nodes ") + format_list(nodes) + ", NUMA balancing ";
    out += !numa_balancing ? "not in this kernel" : (*numa_balancing & 1) ? "on" : "off";
    out += "\n";

    out += "\nthreads\n  " + cell("TID", 8, true) + cell("name", 16) + cell("state", 5) + cell("CPU", 4, true) +
           cell("node", 4, true) + " " + cell("allowed", 12) + cell("preferred", 9) + "hinting faults per node (local)\n";
    for (const auto& t : threads) {
        std::string faults = "-";
        if (t.balancing != balancing_stats::available) {
            faults = std::string(ccnuma::to_string(t.balancing));
        } else if (!t.faults.empty()) {
            faults.clear();
            for (std::size_t n = 0; n < t.faults.size(); ++n)
                faults += (n ? " " : "") + std::to_string(n) + ":" + std::to_string(t.faults[n]);
            if (const auto l = t.local_fault_share()) {
                std::snprintf(buf, sizeof buf, " (%.0f%%)", 100.0 * *l);
                faults += buf;
            }
        }
        out += "  " + cell(std::to_string(t.tid), 8, true) + cell(t.name, 16) + cell(std::string(1, t.state), 5) +
               cell(std::to_string(t.cpu), 4, true) + cell(t.node < 0 ? "-" : std::to_string(t.node), 4, true) + " " +
               cell(t.allowed.empty() ? "-" : format_list(t.allowed), 12) +
               cell(t.preferred_node && *t.preferred_node >= 0 ? std::to_string(*t.preferred_node) : "-", 9) + faults +
               "\n";
    }

    if (!regions.empty()) {
        out += "\nregions (resident pages per node, in each region's page size)\n  " + cell("start", 15) +
               cell("size", 9, true) + cell("kind", 7);
        for (const unsigned n : nodes) out += cell("node " + std::to_string(n), 9, true);
        out += cell("zero", 8, true) + cell("huge", 8, true) + cell("policy", 16) + "path\n";
        for (const auto& r : regions) {
            char start[32];
            std::snprintf(start, sizeof start, "%llx", static_cast<unsigned long long>(r.start));
            out += "  " + cell(r.kind == region_kind::other ? "(" + std::to_string(r.regions) + " others)" : start, 15) +
                   cell(detail::human_bytes(r.bytes()), 9, true) + cell(std::string(ccnuma::to_string(r.kind)), 7);
            for (const unsigned n : nodes) out += cell(std::to_string(n < r.pages.size() ? r.pages[n] : 0), 9, true);
            out += cell(opt(r.zero_pages), 8, true) + cell(opt(r.huge_pages), 8, true) +
                   cell(r.policy.empty() ? "-" : r.policy, 16) +
                   (r.kind == region_kind::huge ? "(" + detail::human_bytes(r.page_size) + " pages) " : "") +
                   r.path + "\n";
        }
        out += "  " + cell("total MiB", 15) + cell("", 9) + cell("", 7);
        for (const unsigned n : nodes) {
            std::snprintf(buf, sizeof buf, "%.2f", n < node_bytes.size() ? static_cast<double>(node_bytes[n]) / 1048576.0 : 0.0);
            out += cell(buf, 9, true);
        }
        out += " (as numastat -p)\n";

        bool any = false;
        for (const auto& r : regions)
            if (!r.layout.empty()) {
                if (!any) out += "\nlayout (sampled pages along each large region)\n";
                any = true;
                out += "  " + detail::region_subject(r) + ": " + r.layout_text() + "\n";
            }
    }

    if (!verdicts.empty()) {
        out += "\nverdicts\n";
        for (const auto& v : verdicts) out += "  [" + v.kind + "] " + v.subject + ": " + v.text + "\n";
    }
    if (!notes.empty()) {
        out += "\nnotes\n";
        for (const auto& n : notes) out += "  " + n + "\n";
    }
    return out;
}

}  // namespace ccnuma
