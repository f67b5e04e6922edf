// ccnuma-info's report for people: the machine as numactl -H and lstopo show it, the kernel
// settings, the warnings.

#include "info.hpp"

#include "../common/slurm.hpp"

#include <ccnuma/detail/format.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

namespace tools::info {

namespace {

std::string bytes(std::uint64_t b) { return ccnuma::detail::human_bytes(b); }

std::string pad(std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}

// What a read of untouched memory gets, said in terms of the calloc trap; the size only where
// the page-flag source could tell it (smaps cannot tell a huge zero page from a base one).
std::string read_fault_text(ccnuma::read_fault_kind k, bool huge, bool size_known, const ccnuma::support_info& s) {
    switch (k) {
        case ccnuma::read_fault_kind::zero_page:
            return std::string(!size_known ? "zero page, huge or base (the page-flag source cannot tell)"
                               : huge      ? "huge zero page"
                                           : "shared zero page") +
                   " (reading untouched memory moves no data: the calloc trap exists here)";
        case ccnuma::read_fault_kind::private_frame:
            return std::string(!size_known ? "private frame, huge or base (the page-flag source cannot tell)"
                               : huge      ? "private huge page"
                                           : "private frame") +
                   " (no zero page: the first read places the page, on the reader's node)";
        case ccnuma::read_fault_kind::unknown: break;
    }
    if (!s.page_flags_valid) return "unknown (" + s.page_flags + ": every page query fails until it is fixed)";
    if (!s.pagemap && !s.move_pages) return "unknown (no pagemap or move_pages to probe with)";
    return "unknown (the probe could not tell)";
}

std::string page_truth_text(const ccnuma::support_info& s) {
    if (!s.pagemap) return "move_pages only (/proc/self/pagemap not readable): zero page and untouched look alike";
    if (!s.page_flags_valid) return "none: " + s.page_flags + " (expected pagemap_scan, kpageflags or smaps)";
    std::string t = "pagemap + move_pages; zero page and THP per page from " + s.page_flags;
    if (s.page_flags == "smaps") t += " (per mapping; PAGEMAP_SCAN needs Linux >= 6.7, kpageflags CAP_SYS_ADMIN)";
    return t + (s.pfn_visible ? "" : "; PFNs hidden (no CAP_SYS_ADMIN)");
}

std::string free_text(unsigned node) {
    const auto f = ccnuma::node_free_bytes(node);
    return f ? bytes(*f) : std::string("-");
}

// hwloc's subtype and the node's tier, where they are known ("MCDRAM tier 0 (hwloc)"); "-"
// otherwise. The kernel's own tier id follows its rank: memory_tier4 is "tier 0 (kernel 4)".
std::string memory_kind(const ccnuma::numa_node& n) {
    std::string out = n.subtype;
    if (n.tier >= 0)
        out += (out.empty() ? "" : " ") + std::string("tier ") + std::to_string(n.tier) + " (" +
               (n.tier_from == ccnuma::tier_source::kernel ? "kernel " + std::to_string(n.kernel_tier_id)
                                                           : std::string(ccnuma::to_string(n.tier_from))) +
               ")";
    return out.empty() ? "-" : out;
}

std::string cpus_text(const ccnuma::numa_node& n) {
    using ccnuma::format_list;
    if (!n.has_cpus)
        return "none: CPU-less memory" + (n.locality.empty() ? std::string() : ", near PUs " + format_list(n.locality));
    return n.cpus.empty() ? "(none allowed: all CPUs masked)" : format_list(n.cpus);
}

std::string value_or_dash(std::uint64_t v) { return v ? std::to_string(v) : std::string("-"); }

std::string weights_text(const std::vector<std::pair<unsigned, unsigned>>& weights) {
    std::string out;
    for (const auto& [node, w] : weights)
        out += (out.empty() ? "" : " ") + std::string("node") + std::to_string(node) + "=" + std::to_string(w);
    return out;
}

// Bandwidth and latency from each near initiator, the nodes local to the PUs in order, and the
// weights 6.16's weighted_interleave/auto would derive: only where the source says anything.
void print_memory(const ccnuma::topology& t) {
    using ccnuma::format_list;
    bool any_access = false, any_far = false;
    for (const auto& n : t.numa_nodes()) any_access = any_access || !n.access.empty();
    for (const auto& p : t.pus()) any_far = any_far || p.local_nodes.size() > 1;
    if (any_access) {
        std::puts("\nmemory access (HMAT: MB/s and ns from the CPUs of the initiator node; - unknown)");
        // Each column as wide as its widest value and a space (a memattr may have 20 digits).
        std::size_t width[5] = {6, 6, 10, 10, 10};
        const auto cells = [](const ccnuma::numa_node& n, const ccnuma::memory_access& a) {
            return std::array<std::string, 6>{std::to_string(n.os_index), std::to_string(a.initiator),
                                              value_or_dash(a.read_bandwidth), value_or_dash(a.write_bandwidth),
                                              value_or_dash(a.read_latency), value_or_dash(a.write_latency)};
        };
        for (const auto& n : t.numa_nodes())
            for (const auto& a : n.access) {
                const auto c = cells(n, a);
                for (std::size_t i = 0; i < 5; ++i) width[i] = std::max(width[i], c[i].size() + 1);
            }
        const auto row = [&](const std::array<std::string, 6>& c) {
            std::string line = "  ";
            for (std::size_t i = 0; i < 5; ++i) line += pad(c[i], width[i]);
            std::puts((line + c[5]).c_str());
        };
        row({"node", "from", "read bw", "write bw", "read lat", "write lat"});
        for (const auto& n : t.numa_nodes())
            for (const auto& a : n.access) row(cells(n, a));
        if (const auto w = ccnuma::auto_interleave_weights(t); !w.empty())
            std::printf("  weights Linux 6.16's weighted_interleave/auto derives from these: %s\n",
                        weights_text(w).c_str());
    }
    if (any_far) {
        // PUs with the same list share a line, in the order of their first PU.
        std::puts("\nlocal nodes (fastest first: bandwidth, latency, then nodes with CPUs, distance)");
        std::vector<std::pair<std::vector<unsigned>, std::vector<unsigned>>> groups;  // (nodes, PUs)
        for (const auto& p : t.pus()) {
            auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == p.local_nodes; });
            if (it == groups.end()) groups.push_back({p.local_nodes, {p.os_index}});
            else it->second.push_back(p.os_index);
        }
        for (auto& [nodes, pus] : groups) {
            std::sort(pus.begin(), pus.end());
            std::string order;
            for (unsigned n : nodes) order += (order.empty() ? "" : ", ") + std::to_string(n);
            std::printf("  %s %s: %s\n", pus.size() == 1 ? "PU" : "PUs", format_list(pus).c_str(), order.c_str());
        }
    }
}

void print_tree(const ccnuma::topology& t, std::size_t d, int indent) {
    const auto& dom = t.domains()[d];
    std::string line(static_cast<std::size_t>(indent) * 2, ' ');
    line += std::string(ccnuma::to_string(dom.kind));
    if (dom.kind != ccnuma::domain_kind::machine) line += " L#" + std::to_string(dom.logical_index);
    if (dom.cache_bytes) line += " (" + bytes(dom.cache_bytes) + ")";
    if (!dom.numa_nodes.empty()) line += "  [NUMA " + ccnuma::format_list(dom.numa_nodes) + "]";
    if (dom.kind == ccnuma::domain_kind::core) {
        line += ": PU P#" + ccnuma::format_list(dom.pus);
        std::puts(line.c_str());
        return;
    }
    std::puts(line.c_str());
    for (std::size_t c : dom.children) print_tree(t, c, indent + 1);
}

}  // namespace

void print_text(const ccnuma::topology& t, const ccnuma::kernel_settings& k,
                const std::vector<std::string>& warnings, bool tree) {
    using ccnuma::format_list;
    std::printf("ccnuma-info %s: %s\n", ccnuma::version_string,
                t.source() == ccnuma::topology_source::system ? "this machine"
                                                             : ("topology " + t.description()).c_str());
    if (t.source() == ccnuma::topology_source::system)
        if (const auto vm = ccnuma::emulated_machine::current())
            std::printf("emulated: ccnuma-vm guest (%s): placement is real, speed is not\n", vm->to_string().c_str());
    std::printf("machine:  %zu package(s), %zu core(s), %zu PU(s), %u PU(s) per core, %zu NUMA node(s)\n",
                t.packages().size(), t.cores().size(), t.pus().size(), t.max_threads_per_core(),
                t.numa_nodes().size());
    std::printf("allowed:  PUs %s (%zu of %zu), NUMA nodes %s (%zu of %zu)\n", format_list(t.allowed_cpus()).c_str(),
                t.pus().size(), t.total_pus(), format_list(t.allowed_nodes()).c_str(), t.numa_nodes().size(),
                t.total_numa_nodes());
    // What srun's task/affinity plugin bound this process to (one line per variable it set).
    if (t.is_this_system())
        for (const auto& line : tools::slurm::binding_lines()) std::printf("slurm:    %s\n", line.c_str());

    std::puts("\nNUMA nodes");
    // Free memory is this host's, now: shown only when the topology is this machine.
    const bool here = t.source() == ccnuma::topology_source::system;
    // The kernel's weighted-interleave weight, where the snapshot is this machine's and it has one.
    bool weights = false;
    for (const auto& n : t.numa_nodes()) weights = weights || n.interleave_weight != 0;
    std::size_t kind_width = 16;
    for (const auto& n : t.numa_nodes()) kind_width = std::max(kind_width, memory_kind(n).size() + 2);
    std::printf("  %s%s%s%s%s%s\n", pad("P#", 6).c_str(), pad("memory", 11).c_str(), here ? pad("free", 11).c_str() : "",
                pad("kind", kind_width).c_str(), weights ? "weight  " : "", "cpus (P#)");
    for (const auto& n : t.numa_nodes())
        std::printf("  %s%s%s%s%s%s\n", pad(std::to_string(n.os_index), 6).c_str(), pad(bytes(n.memory_bytes), 11).c_str(),
                    here ? pad(free_text(n.os_index), 11).c_str() : "", pad(memory_kind(n), kind_width).c_str(),
                    weights ? pad(value_or_dash(n.interleave_weight), 8).c_str() : "", cpus_text(n).c_str());
    print_memory(t);

    std::puts("\npackages");
    std::printf("  %s%s%s%s\n", pad("L#", 6).c_str(), pad("cores", 7).c_str(), pad("nodes", 8).c_str(), "PUs (P#)");
    for (const auto& p : t.packages())
        std::printf("  %s%s%s%s\n", pad(std::to_string(p.logical_index), 6).c_str(),
                    pad(std::to_string(p.cores), 7).c_str(), pad(format_list(p.numa_nodes), 8).c_str(),
                    format_list(p.pus).c_str());

    std::puts("\ncaches");
    if (t.caches().empty()) std::puts("  (none reported by this topology source)");
    for (unsigned level : {3u, 2u}) {
        std::map<std::pair<std::uint64_t, std::size_t>, std::size_t> shapes;  // (bytes, PUs) -> count
        for (const auto& c : t.caches())
            if (c.level == level) ++shapes[{c.bytes, c.pus.size()}];
        for (const auto& [shape, count] : shapes)
            std::printf("  L%u  %zu x %s, each shared by %zu PU(s)\n", level, count, bytes(shape.first).c_str(),
                        shape.second);
    }
    for (const auto& c : t.caches())
        if (c.level == 3) std::printf("  L3 L#%u: PUs P#%s\n", c.logical_index, format_list(c.pus).c_str());

    std::puts("\nnode distances");
    if (t.distances().empty()) {
        std::puts("  (not provided by this topology source)");
    } else {
        std::string head = "  node";
        for (const auto& n : t.numa_nodes()) head += pad("", 5 - std::min<std::size_t>(4, std::to_string(n.os_index).size())) + std::to_string(n.os_index);
        std::puts(head.c_str());
        for (std::size_t i = 0; i < t.numa_nodes().size(); ++i) {
            std::string row = "  " + pad(std::to_string(t.numa_nodes()[i].os_index), 4);
            for (unsigned v : t.distances()[i]) {
                const auto s = std::to_string(v);
                row += std::string(5 - std::min<std::size_t>(4, s.size()), ' ') + s;
            }
            std::puts(row.c_str());
        }
    }

    std::puts("\nkernel (this host)");
    std::printf("  numa_balancing   %s\n",
                k.numa_balancing
                    ? (std::to_string(*k.numa_balancing) + " (" + ccnuma::numa_balancing_mode(k.numa_balancing) + ")").c_str()
                    : "not available");
    std::printf("  demotion         %s\n", !k.demotion_enabled ? "not available (/sys/kernel/mm/numa/demotion_enabled)"
                                         : *k.demotion_enabled ? "enabled (reclaim moves cold pages to a slower tier)"
                                                               : "disabled");
    std::printf("  interleave       %s%s\n",
                k.interleave_weights.empty() ? "no weighted interleave (Linux 6.9)"
                                             : ("weights " + weights_text(k.interleave_weights)).c_str(),
                k.interleave_weights.empty() ? ""
                : !k.interleave_auto         ? " (no auto mode: before Linux 6.16)"
                : *k.interleave_auto         ? " (auto: derived from bandwidths)"
                                             : " (manual: auto is off)");
    std::printf("  THP              %s (defrag %s)\n", k.thp_enabled.empty() ? "not available" : k.thp_enabled.c_str(),
                k.thp_defrag.empty() ? "-" : k.thp_defrag.c_str());
    if (!k.thp_sizes.empty()) {
        // Each size's own mode, as hugepages-<size>kB/enabled lists it; the sizes left at "never"
        // (the kernel's default for all but the PMD size) are counted, not listed.
        std::string sizes;
        std::size_t never = 0;
        for (const auto& [bytes, mode] : k.thp_sizes) {
            if (mode == "never") {
                ++never;
                continue;
            }
            sizes += (sizes.empty() ? "" : ", ") + std::to_string(bytes >> 10) + "kB " + mode;
        }
        if (never != 0) sizes += (sizes.empty() ? "" : ", ") + std::string("never: ") + std::to_string(never) + " more";
        std::printf("  THP sizes        %s\n", sizes.c_str());
    }
    const auto& pg = ccnuma::support();
    std::printf("  read fault       %s\n", read_fault_text(pg.read_fault, false, true, pg).c_str());
    if (pg.huge_read_fault != ccnuma::read_fault_kind::unknown)
        std::printf("  THP read fault   %s\n",
                    read_fault_text(pg.huge_read_fault, pg.huge_read_fault_is_huge, pg.huge_read_fault_size_known, pg)
                        .c_str());
    std::printf("  page truth       %s\n", page_truth_text(pg).c_str());

    if (tree) {
        std::puts("\ntree");
        print_tree(t, 0, 1);
    }

    std::puts("\nwarnings");
    if (warnings.empty()) std::puts("  none");
    for (const auto& w : warnings) std::printf("  warning: %s\n", w.c_str());
}

}  // namespace tools::info
