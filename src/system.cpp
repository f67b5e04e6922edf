#include <ccnuma/system.hpp>

#include "os/os.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>
#include <numeric>
#include <string>

namespace ccnuma {

std::optional<std::uint64_t> node_free_bytes(unsigned node) noexcept { return detail::node_meminfo(node, "MemFree"); }

kernel_settings kernel_settings::read() noexcept {
    kernel_settings k;
    k.numa_balancing = detail::numa_balancing();
    k.thp_enabled = detail::thp_mode();
    k.thp_defrag = detail::thp_setting("defrag");
    k.thp_sizes = detail::thp_size_modes();
    try {
        k.demotion_enabled = detail::demotion_enabled();
        k.interleave_weights = detail::interleave_weights();
        k.interleave_auto = detail::interleave_auto();
    } catch (...) {
        // Out of memory while reading a few sysfs files: the settings stay unknown, as documented.
    }
    return k;
}

std::string numa_balancing_mode(std::optional<int> value) {
    if (!value) return "not available";
    if (*value == 0) return "off";
    std::string out;
    const auto add = [&](const char* what) { out += (out.empty() ? "" : " + ") + std::string(what); };
    if (*value & 1) add("normal");
    if (*value & 2) add("memory tiering");
    if (*value & ~3) add("unknown bits");
    return out;
}

// Linux 6.16 (mm/mempolicy.c, reduce_interleave_weights) turns the bandwidths of the nodes with
// memory into weights: a node whose bandwidth is unknown, or whose share of the sum is at most
// 1/32, gets 1; any other gets 32 x its bandwidth / the sum, rounded down; then all weights are
// divided by their greatest common divisor, since 1:2 interleaves as 16:32 does with shorter
// runs. 32 bounds how many pages go to one node in a row. The kernel takes a node's bandwidth
// as the smaller of its read and write bandwidth from its CPU initiators (HMAT access class 1).
std::vector<std::pair<unsigned, unsigned>> auto_interleave_weights(
    const std::vector<std::pair<unsigned, std::uint64_t>>& bandwidths) {
    constexpr std::uint64_t weightiness = 32;
    std::uint64_t sum = 0;
    for (const auto& [node, bw] : bandwidths) sum += bw;
    std::vector<std::pair<unsigned, unsigned>> weights;
    unsigned divisor = 0;
    for (const auto& [node, bw] : bandwidths) {
        const unsigned w =
            bw != 0 && sum < weightiness * bw ? static_cast<unsigned>(weightiness * bw / sum) : 1u;
        weights.emplace_back(node, w);
        divisor = std::gcd(divisor, w);
    }
    for (auto& [node, w] : weights) w /= divisor;
    return weights;
}

std::vector<std::pair<unsigned, unsigned>> auto_interleave_weights(const topology& topo) {
    std::vector<std::pair<unsigned, std::uint64_t>> bandwidths;
    bool known = false;
    for (const auto& n : topo.numa_nodes()) {
        if (n.memory_bytes == 0) continue;
        std::uint64_t best = 0;
        for (const auto& a : n.access) {
            const std::uint64_t r = a.read_bandwidth, w = a.write_bandwidth;
            best = std::max(best, r && w ? std::min(r, w) : std::max(r, w));
        }
        known = known || best != 0;
        bandwidths.emplace_back(n.os_index, best);
    }
    if (!known) return {};
    return auto_interleave_weights(bandwidths);
}

}  // namespace ccnuma

namespace ccnuma {

namespace {

// Weighted interleave (numactl -w, ccnuma-run -w) spreads pages by the kernel's weights; on a
// machine whose nodes differ in bandwidth from one initiator, weights of 1 make it a plain
// interleave that the slow tier holds back. Only where the kernel has a weight for every node
// of the topology: another machine's XML is not judged by this host's weights.
std::string tiered_weights_warning(const topology& topo, const kernel_settings& kernel) {
    if (!topo.is_tiered() || kernel.interleave_weights.empty()) return {};
    std::string differ;
    for (const auto& init : topo.numa_nodes()) {
        // (bandwidth, node) of the fastest and the slowest node this initiator reaches.
        std::pair<std::uint64_t, unsigned> fast{0, 0}, slow{0, 0};
        for (const auto& n : topo.numa_nodes())
            if (const auto* a = topo.access(init.os_index, n.os_index); a && a->read_bandwidth) {
                if (fast.first == 0 || a->read_bandwidth > fast.first) fast = {a->read_bandwidth, n.os_index};
                if (slow.first == 0 || a->read_bandwidth < slow.first) slow = {a->read_bandwidth, n.os_index};
            }
        if (fast.first != slow.first) {
            differ = "from node " + std::to_string(init.os_index) + ", node " + std::to_string(fast.second) +
                     " reads at " + std::to_string(fast.first) + " MB/s and node " + std::to_string(slow.second) +
                     " at " + std::to_string(slow.first) + " MB/s";
            break;
        }
    }
    if (differ.empty()) return {};
    for (const auto& n : topo.numa_nodes()) {
        if (n.memory_bytes == 0) continue;
        const auto it = std::find_if(kernel.interleave_weights.begin(), kernel.interleave_weights.end(),
                                     [&](const auto& nw) { return nw.first == n.os_index; });
        if (it == kernel.interleave_weights.end() || it->second != 1) return {};
    }
    std::string suggested;
    for (const auto& [node, weight] : auto_interleave_weights(topo))
        suggested += (suggested.empty() ? "" : ", ") + std::string("node") + std::to_string(node) + "=" +
                     std::to_string(weight);
    return "tiered memory (" + differ + ") but the kernel's weighted-interleave weights are all 1, so weighted "
           "interleave (numactl -w, ccnuma-run -w) spreads pages evenly and the slow tier holds it back; set "
           "bandwidth-derived weights (Linux 6.16's auto would choose " + suggested +
           ") with: echo W > /sys/kernel/mm/mempolicy/weighted_interleave/node<N>, then use ccnuma-run -w; or "
           "weight one allocation with ccnuma::weighted_interleave{}.weights(ccnuma::by_bandwidth)";
}

}  // namespace

std::vector<std::string> placement_warnings(const topology& topo, const kernel_settings& kernel,
                                            const support_info& pages) {
    std::vector<std::string> w;
    if (kernel.numa_balancing.value_or(0) != 0)
        w.push_back("NUMA balancing is on (kernel.numa_balancing=" + std::to_string(*kernel.numa_balancing) +
                    "): the kernel migrates pages it considers misplaced, which blurs first-touch placement "
                    "and benchmark results; disable with: sysctl -w kernel.numa_balancing=0");
    if (topo.is_restricted())
        w.push_back("restricted: this process may use " + std::to_string(topo.pus().size()) + " of " +
                    std::to_string(topo.total_pus()) + " PUs (" + format_list(topo.allowed_cpus()) + ") and " +
                    std::to_string(topo.numa_nodes().size()) + " of " + std::to_string(topo.total_numa_nodes()) +
                    " NUMA nodes (" + format_list(topo.allowed_nodes()) +
                    "); plans and placement use only these (check taskset, numactl, cgroups or mpirun "
                    "--bind-to)");
    if (topo.max_threads_per_core() > 1)
        w.push_back("SMT present (" + std::to_string(topo.max_threads_per_core()) +
                    " PUs per core): compact and scatter fill every core once before using siblings; "
                    "memory-bound loops rarely gain from more than " + std::to_string(topo.cores().size()) +
                    " threads (one per core)");
    // Since Linux 6.8 each folio size has its own mode, the PMD size's included ("inherit", its
    // default, follows the top-level one); before, the top-level mode is the PMD size's.
    std::size_t pmd = pages.huge_page_size;
    if (pmd == 0)
        for (const auto& [bytes, mode] : kernel.thp_sizes) pmd = std::max(pmd, bytes);
    if (pmd == 0) pmd = std::size_t{2} << 20;  // no size told: the top-level mode is x86-64's 2 MiB one
    const auto unadvised = detail::thp_unadvised_sizes(kernel.thp_enabled, kernel.thp_sizes, pmd);
    // "2 MiB" on x86-64; arm64 with 64 KiB pages has 512 MiB ones.
    const std::string pmd_text = pmd % (std::size_t{1} << 20) == 0 ? std::to_string(pmd >> 20) + " MiB"
                                                                    : std::to_string(pmd >> 10) + " KiB";
    if (std::find(unadvised.begin(), unadvised.end(), pmd) != unadvised.end())
        w.push_back(std::string("transparent huge pages are 'always'") +
                    (kernel.thp_enabled == "always" ? ""
                                                    : " for " + pmd_text + " (hugepages-" + std::to_string(pmd >> 10) +
                                                          "kB/enabled, under '" + kernel.thp_enabled + "')") +
                    ": first touch then places " + pmd_text + " at a time, so a thread's chunk smaller than " +
                    pmd_text + " may land on a neighbour's node");
    // The largest folio size below the PMD one that unadvised faults get: the kernel tries the
    // largest enabled size that fits first, so that is what a part's boundary may lose.
    for (auto it = unadvised.rbegin(); it != unadvised.rend(); ++it) {
        const std::size_t bytes = *it;
        if (bytes >= pmd) continue;
        std::string mode;
        for (const auto& [b, m] : kernel.thp_sizes)
            if (b == bytes) mode = m;
        const std::string size = std::to_string(bytes >> 10) + " KiB";
        w.push_back("transparent huge pages of " + size + " are '" + mode +
                    "' (mTHP, hugepages-" + std::to_string(bytes >> 10) + "kB/enabled): first touch then places " +
                    size + " at a time wherever a folio fits, so a thread's part that does not start and end on a " +
                    size + " boundary may lose pages to a neighbour's node (ccnuma's own placement opts such "
                    "frames out)");
        break;
    }
    if (!pages.huge_page_size_problem.empty())
        w.push_back("the huge page size is unknown (" + pages.huge_page_size_problem +
                    "): huge-page policies and pad::huge_page fall back to base pages");
    if (pages.read_fault == read_fault_kind::zero_page)
        w.push_back("reads of untouched memory map the shared zero page on this kernel: an array that is only "
                    "read (calloc'ed, or never written before a benchmark) moves no data and looks impossibly "
                    "fast, and its pages get a node only at the first write; write every array once, in "
                    "parallel with the compute loop's schedule, before timing it");
    else if (pages.read_fault == read_fault_kind::private_frame)
        w.push_back("reads of untouched memory allocate a private page on this kernel (no shared zero page): a "
                    "serial read, such as a checksum or a print before the parallel initialization, places "
                    "every page it reads on the reader's node; initialize in parallel first");
    if (const auto tiered = tiered_weights_warning(topo, kernel); !tiered.empty()) w.push_back(tiered);
    if (pages.huge_read_fault == read_fault_kind::private_frame && pages.huge_read_fault_is_huge)
        w.push_back("a read in a huge-page region allocates a private " + detail::human_bytes(pages.huge_page_size) +
                    " page: one read places " + std::to_string(pages.huge_page_size / std::max<std::size_t>(1, pages.page_size)) +
                    " base pages at once, on the reader's node; let each page's owner thread touch it first, "
                    "in chunks of whole " + detail::human_bytes(pages.huge_page_size) + " pages");
    return w;
}

}  // namespace ccnuma
