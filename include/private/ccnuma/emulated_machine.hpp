#pragma once
/// @file
/// The shape of an emulated multi-node machine (the guest that `ccnuma-vm` boots), and how a
/// program finds out that it runs inside one.
///
///     if (auto vm = ccnuma::emulated_machine::current())
///         std::printf("inside ccnuma-vm: %s\n", vm->to_string().c_str());
///     else
///         std::puts("not in the emulated machine: run me with ccnuma-vm --nodes 2 -- ...");
///
/// Inside a guest, `ccnuma-vm` writes the shape to /etc/ccnuma-vm and exports it as $CCNUMA_VM,
/// both in the to_string() format. Only the file is trusted by current(), because an environment
/// variable leaks into host processes all too easily.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma {

/// Memory without CPUs (a CXL expander, HBM, far DRAM): a NUMA node of its own, attached near a
/// socket, whose bandwidth and latency are ratios of the local DRAM's. ccnuma-vm describes it to
/// the guest in the ACPI HMAT and SLIT, so the guest kernel tiers it.
///
///     ccnuma::emulated_machine m;
///     m.memory_nodes.push_back(ccnuma::emulated_machine::parse_memory_node("512M,near=1,bandwidth=0.5"));
struct memory_node {
    std::uint64_t size = std::uint64_t{512} << 20;
    /// The socket it is attached to; the first CPU node of that socket is its initiator.
    unsigned near = 0;
    /// Bandwidth from the near socket as a fraction of local DRAM's, in [0.01, 1].
    double bandwidth = 0.5;
    /// Latency from the near socket as a multiple of local DRAM's, in [1, 10].
    double latency = 2;

    friend bool operator==(const memory_node&, const memory_node&) = default;
};

/// One folio size's anonymous THP setting in the guest (Linux 6.8+'s mTHP: the file
/// /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/enabled).
struct thp_size_mode {
    /// The folio size in bytes: a power of two above the base page and below the PMD size
    /// (16K to 1M on x86-64; the guest kernel lists which it has).
    std::uint64_t size = std::uint64_t{64} << 10;
    /// "always", "inherit" (the top-level mode), "madvise" or "never".
    std::string mode = "always";

    friend bool operator==(const thp_size_mode&, const thp_size_mode&) = default;
};

struct emulated_machine {
    /// NUMA nodes; node n owns CPUs [n*cpus_per_node(), (n+1)*cpus_per_node()).
    unsigned nodes = 2;
    /// Packages; 0 means one per node. Either a multiple of nodes (a node spans several
    /// packages) or a divisor of it (sub-NUMA clustering: a package holds several nodes).
    unsigned sockets = 0;
    unsigned cores_per_node = 2;
    unsigned threads_per_core = 1;
    std::uint64_t mem_per_node = std::uint64_t{512} << 20;
    /// CPU-less nodes, numbered nodes, nodes+1, ... in this order.
    std::vector<memory_node> memory_nodes;
    /// SLIT distances, all_nodes() x all_nodes(), 10 on the diagonal; empty means 10 local and 20
    /// remote between CPU nodes (see distance_matrix() for the memory nodes').
    std::vector<std::vector<unsigned>> distances;
    /// Transparent huge pages in the guest: "always", "madvise" or "never".
    std::string thp = "madvise";
    /// Per-size (mTHP) settings written in the guest after boot, in this order; the sizes not
    /// named keep the kernel's defaults (Debian's 6.12: the PMD size "inherit", the rest "never").
    std::vector<thp_size_mode> thp_sizes;
    /// kernel.numa_balancing in the guest: 0 or 1. Off by default so that placement stays where
    /// the program put it.
    unsigned numa_balancing = 0;

    unsigned effective_sockets() const noexcept { return sockets == 0 ? nodes : sockets; }
    unsigned cpus_per_node() const noexcept { return cores_per_node * threads_per_core; }
    unsigned total_cpus() const noexcept { return nodes * cpus_per_node(); }
    /// CPU nodes and memory nodes.
    unsigned all_nodes() const noexcept { return nodes + static_cast<unsigned>(memory_nodes.size()); }
    std::uint64_t total_memory() const noexcept {
        std::uint64_t total = mem_per_node * nodes;
        for (const auto& m : memory_nodes) total += m.size;
        return total;
    }
    /// The CPU node that is the initiator of memory attached near `socket`: the socket's first
    /// node when it holds several (sub-NUMA clusters), the node it belongs to when a node spans
    /// several sockets.
    unsigned first_node_of_socket(unsigned socket) const noexcept {
        const unsigned s = effective_sockets();
        return s >= nodes ? socket / (s / nodes) : socket * (nodes / s);
    }
    /// The SLIT the guest sees, all_nodes() x all_nodes(): `distances` when given; else, with
    /// memory nodes, 10 local and 20 remote between CPU nodes, and a memory node as far from
    /// each node as its initiator is, times its latency ratio (the larger ratio of the two for
    /// two memory nodes), rounded, at least 11; empty when neither is given (QEMU's default).
    std::vector<std::vector<unsigned>> distance_matrix() const;
    /// Throws ccnuma::error (errc::invalid_argument) naming the field, its value and the valid
    /// range when the machine cannot be built: 0 nodes, cores or threads; more than 64 nodes
    /// (memory nodes included) or 255 CPUs; sockets that do not divide evenly; less than 64 MiB
    /// or an odd number of MiB per node or memory node; a memory node near a socket that does not
    /// exist, or with a bandwidth ratio outside [0.01, 1] or a latency ratio outside [1, 10]; a
    /// distance matrix of the wrong size, off-diagonal entries outside 11..254 or a diagonal
    /// other than 10; an unknown THP mode; a per-size THP setting whose size is not a power of
    /// two from 16K to 1M, or whose mode is not always, inherit, madvise or never.
    void validate() const;

    /// "nodes=2 sockets=2 cores-per-node=2 threads-per-core=1 mem-per-node=512M thp=madvise
    /// numa-balancing=0", plus " memory-node=512M,near=0,bandwidth=0.5,latency=2" for each memory
    /// node, " thp-size=64K:always" for each per-size THP setting and " distances=10,20;20,10"
    /// when distances are given.
    std::string to_string() const;

    /// Parses the to_string() format (keys in any order, missing keys keep their defaults) and
    /// validates. Throws ccnuma::error pointing at the bad token.
    static emulated_machine parse(std::string_view text);

    /// "10,20;20,10": rows separated by ';', entries by ','. Only the syntax is checked here;
    /// validate() checks the values against the number of nodes.
    static std::vector<std::vector<unsigned>> parse_distances(std::string_view text);

    /// "SIZE[,near=SOCKET][,bandwidth=RATIO][,latency=RATIO]", the value of ccnuma-vm's
    /// --memory-node; missing keys keep memory_node's defaults. Only the syntax is checked here;
    /// validate() checks the values against the machine.
    static memory_node parse_memory_node(std::string_view text);

    /// "SIZE:MODE" (64K:always), the value of ccnuma-vm's --thp-size. Only the syntax is checked
    /// here; validate() checks the size and the mode.
    static thp_size_mode parse_thp_size(std::string_view text);

    /// The shape of the guest this process runs in (read from /etc/ccnuma-vm), or nullopt on
    /// any other machine. Throws ccnuma::error if the file exists but is malformed.
    static std::optional<emulated_machine> current();

    /// Equal shapes; sockets compare by effective_sockets().
    friend bool operator==(const emulated_machine& a, const emulated_machine& b) noexcept;
};

/// Parses a memory size as numactl and QEMU write it: a number of bytes with an optional suffix
/// K, M, G or T (binary multiples, case-insensitive, optionally followed by "iB" or "B"), as in
/// "512M", "1G" or "2GiB". Fractions such as "1.5G" are rejected. Throws ccnuma::error naming
/// `what` for anything else or for an overflow.
std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

/// The inverse of parse_size() for whole multiples: 536870912 -> "512M", 1536 -> "1536".
std::string format_size(std::uint64_t bytes);

}  // namespace ccnuma
