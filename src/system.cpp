#include <ccnuma/system.hpp>

#include "os/os.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>

#include <string>

namespace ccnuma {

std::optional<std::uint64_t> node_free_bytes(unsigned node) noexcept { return detail::node_meminfo(node, "MemFree"); }

kernel_settings kernel_settings::read() noexcept {
    kernel_settings k;
    k.numa_balancing = detail::numa_balancing();
    k.thp_enabled = detail::thp_mode();
    k.thp_defrag = detail::thp_setting("defrag");
    return k;
}

}  // namespace ccnuma

namespace ccnuma {

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
    if (kernel.thp_enabled == "always")
        w.push_back("transparent huge pages are 'always': first touch then places 2 MiB at a time, so a "
                    "thread's chunk smaller than 2 MiB may land on a neighbour's node");
    if (pages.read_fault == read_fault_kind::zero_page)
        w.push_back("reads of untouched memory map the shared zero page on this kernel: an array that is only "
                    "read (calloc'ed, or never written before a benchmark) moves no data and looks impossibly "
                    "fast, and its pages get a node only at the first write; write every array once, in "
                    "parallel with the compute loop's schedule, before timing it");
    else if (pages.read_fault == read_fault_kind::private_frame)
        w.push_back("reads of untouched memory allocate a private page on this kernel (no shared zero page): a "
                    "serial read, such as a checksum or a print before the parallel initialization, places "
                    "every page it reads on the reader's node; initialize in parallel first");
    if (pages.huge_read_fault == read_fault_kind::private_frame && pages.huge_read_fault_is_huge)
        w.push_back("a read in a huge-page region allocates a private " + detail::human_bytes(pages.huge_page_size) +
                    " page: one read places " + std::to_string(pages.huge_page_size / std::max<std::size_t>(1, pages.page_size)) +
                    " base pages at once, on the reader's node; let each page's owner thread touch it first, "
                    "in chunks of whole " + detail::human_bytes(pages.huge_page_size) + " pages");
    return w;
}

}  // namespace ccnuma
