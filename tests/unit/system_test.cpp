#include <ccnuma/system.hpp>

#include "../support/load_topology.hpp"
#include "../support/run.hpp"
#include "../../src/os/os.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

// The oracles here share no code with src/os/ (procfs.cpp): the settings come from a shell's reading
// of the files (tr, sed), THP also from what the kernel does with a mapping, and free memory
// from sysinfo(2) rather than from the node's meminfo file.

std::string shell_output(const std::string& command) {
    const auto r = test_support::run(command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
    return r.out;
}

// AnonHugePages of the mapping that holds p, from /proc/self/smaps, in KiB.
std::uint64_t anon_huge_kib(const void* p) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    bool inside = false;
    std::string line;
    while (std::getline(smaps, line)) {
        std::uintptr_t lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
            inside = lo <= at && at < hi;
        } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
            return std::stoull(line.substr(14));
        }
    }
    ADD_FAILURE() << "no mapping holds " << p << " in /proc/self/smaps";
    return 0;
}

// AnonHugePages of a huge-page-aligned region of 2 huge pages, written, with or without
// MADV_HUGEPAGE.
std::uint64_t huge_kib_of_written_region(std::size_t huge, bool advise) {
    const std::size_t bytes = 2 * huge;
    void* raw = ::mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(raw, MAP_FAILED);
    if (raw == MAP_FAILED) return 0;
    char* p = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + huge - 1) / huge * huge);
    if (advise) {
        EXPECT_EQ(::madvise(p, bytes, MADV_HUGEPAGE), 0) << std::strerror(errno);
    }
    std::memset(p, 1, bytes);
    const auto kib = anon_huge_kib(p);
    ::munmap(raw, bytes + huge);
    return kib;
}

TEST(KernelSettings, AgreeWithTheShellAndWithWhatTheKernelDoes) {
    const auto k = ccnuma::kernel_settings::read();
    const std::string nb =
        shell_output("tr -cd 0-9 < /proc/sys/kernel/numa_balancing 2>/dev/null || true");
    if (nb.empty())
        EXPECT_FALSE(k.numa_balancing.has_value()) << "no kernel.numa_balancing here";
    else
        EXPECT_EQ(k.numa_balancing, std::optional<int>(std::stoi(nb)));

    const std::string thp = shell_output(
        "sed -n 's/.*\\[\\([a-z]*\\)\\].*/\\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null "
        "| tr -d '\\n' || true");
    EXPECT_EQ(k.thp_enabled, thp);

    // The mode is also what the kernel does: under "never" even an advised region gets no huge
    // page, under "madvise" an unadvised one gets none. (That a region does get one is not
    // asserted: it needs a free 2 MiB block, which a busy host may not have.)
    const std::string pmd = shell_output("cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null || true");
    const std::size_t huge = pmd.empty() ? std::size_t{2} << 20 : std::stoull(pmd);
    if (k.thp_enabled == "never" || k.thp_enabled.empty()) {
        EXPECT_EQ(huge_kib_of_written_region(huge, true), 0u) << "THP " << k.thp_enabled;
    }
    if (k.thp_enabled == "madvise") {
        EXPECT_EQ(huge_kib_of_written_region(huge, false), 0u) << "THP madvise";
    }
}

// Issue 12: numactl -H's "node N free". Every node with a sysfs directory has an answer and no
// other node does. The nodes' free memory is bounded by sysinfo(2): at most the machine, and not
// off by a unit (KiB read as bytes is 1024 times less). It does not equal sysinfo's free memory:
// in a container the node files and sysinfo may count differently (10.0 and 14.4 GB free on
// the development machine), so only the bounds are facts of every host.
TEST(NodeFree, IsBoundedByTheKernelsMemory) {
    struct sysinfo si {};
    ASSERT_EQ(::sysinfo(&si), 0);
    const std::uint64_t total = std::uint64_t{si.totalram} * si.mem_unit;
    const std::uint64_t kernel_free = std::uint64_t{si.freeram} * si.mem_unit;
    std::uint64_t nodes_free = 0;
    unsigned nodes = 0;
    for (unsigned n = 0; n < 1024; ++n) {
        const bool exists = std::filesystem::exists("/sys/devices/system/node/node" + std::to_string(n));
        const auto f = ccnuma::node_free_bytes(n);
        EXPECT_EQ(f.has_value(), exists) << "node " << n;
        if (!f) continue;
        ++nodes;
        EXPECT_LE(*f, total) << "node " << n;
        nodes_free += *f;
    }
    if (nodes == 0) {
        EXPECT_FALSE(std::filesystem::exists("/sys/devices/system/node/node0")) << "NUMA sysfs, but no answer";
    } else {
        EXPECT_LE(nodes_free, total);
        EXPECT_GE(nodes_free, kernel_free / 16) << "sysinfo free " << kernel_free;
    }
    EXPECT_FALSE(ccnuma::node_free_bytes(4096).has_value());
}

TEST(PlacementWarnings, OnePerProblemWithItsRemedy) {
    ccnuma::topology_options o;
    o.source = "pack:2 numa:1 core:2 pu:2";
    o.use_environment = false;
    const auto smt = ccnuma::topology::load(o);
    ccnuma::kernel_settings quiet;
    quiet.numa_balancing = 0;
    quiet.thp_enabled = "madvise";
    // A kernel whose read faults were not probed: no read-fault warning.
    const ccnuma::support_info unprobed;
    auto w = ccnuma::placement_warnings(smt, quiet, unprobed);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("SMT present (2 PUs per core)"), std::string::npos) << w[0];

    ccnuma::kernel_settings loud = quiet;
    loud.numa_balancing = 1;
    loud.thp_enabled = "always";
    o.cpuset = "0-3";
    w = ccnuma::placement_warnings(ccnuma::topology::load(o), loud, unprobed);
    ASSERT_EQ(w.size(), 4u);
    EXPECT_NE(w[0].find("sysctl -w kernel.numa_balancing=0"), std::string::npos) << w[0];
    EXPECT_NE(w[1].find("may use 4 of 8 PUs (0-3)"), std::string::npos) << w[1];
    EXPECT_NE(w[3].find("2 MiB"), std::string::npos) << w[3];

    o.source = "pack:2 numa:1 core:2 pu:1";
    o.cpuset.clear();
    EXPECT_TRUE(ccnuma::placement_warnings(ccnuma::topology::load(o), quiet, unprobed).empty());
}

// Per-size THP (mTHP, Linux 6.8+): a size below the PMD one that unadvised faults get is warned
// with its size and file, the largest such size; "inherit" only where the top-level mode is
// "always". The PMD size's own mode decides the PMD warning, which names the PMD size.
TEST(PlacementWarnings, SmallerFolioSizesThatFaultInAreWarned) {
    ccnuma::topology_options o;
    o.source = "pack:2 numa:1 core:2 pu:1";
    o.use_environment = false;
    const auto t = ccnuma::topology::load(o);
    const ccnuma::support_info unprobed;
    ccnuma::kernel_settings k;
    k.numa_balancing = 0;
    k.thp_enabled = "madvise";
    k.thp_sizes = {{16u << 10, "never"}, {64u << 10, "never"}, {2u << 20, "inherit"}};
    EXPECT_TRUE(ccnuma::placement_warnings(t, k, unprobed).empty());
    k.thp_sizes = {{16u << 10, "always"}, {64u << 10, "always"}, {2u << 20, "inherit"}};
    auto w = ccnuma::placement_warnings(t, k, unprobed);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("transparent huge pages of 64 KiB are 'always' (mTHP, hugepages-64kB/enabled)"), std::string::npos)
        << w[0];
    // The PMD size's own mode: "always" under a top-level "madvise" is warned, with its file.
    k.thp_sizes = {{64u << 10, "inherit"}, {2u << 20, "always"}};
    w = ccnuma::placement_warnings(t, k, unprobed);
    ASSERT_EQ(w.size(), 1u) << "64 KiB inherits madvise";
    EXPECT_NE(w[0].find("transparent huge pages are 'always' for 2 MiB (hugepages-2048kB/enabled, under 'madvise')"),
              std::string::npos)
        << w[0];
    k.thp_enabled = "always";
    w = ccnuma::placement_warnings(t, k, unprobed);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_NE(w[0].find("transparent huge pages are 'always': first touch then places 2 MiB"), std::string::npos) << w[0];
    EXPECT_NE(w[1].find("64 KiB are 'inherit'"), std::string::npos) << w[1];
    // And "never" for the PMD size under a top-level "always": no 2 MiB folio, no 2 MiB warning.
    k.thp_sizes = {{64u << 10, "never"}, {2u << 20, "never"}};
    EXPECT_TRUE(ccnuma::placement_warnings(t, k, unprobed).empty());
    // A PMD size of 512 MiB (arm64 with 64 KiB pages), as the kernel tells it: named as it is.
    ccnuma::support_info arm64;
    arm64.huge_page_size = std::size_t{512} << 20;
    k.thp_sizes = {{std::size_t{2} << 20, "never"}, {std::size_t{512} << 20, "inherit"}};
    w = ccnuma::placement_warnings(t, k, arm64);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("places 512 MiB at a time, so a thread's chunk smaller than 512 MiB"), std::string::npos) << w[0];
}

// Which folio sizes an unadvised fault may get: a size's own "always", or "inherit" under a
// top-level "always"; before per-size modes (Linux 6.8) the PMD size under "always".
TEST(KernelSettings, UnadvisedFolioSizesFollowEachSizesMode) {
    using ccnuma::detail::thp_unadvised_sizes;
    const std::size_t k64 = 64u << 10, k16 = 16u << 10, pmd = 2u << 20;
    EXPECT_EQ(thp_unadvised_sizes("always", {}, pmd), std::vector<std::size_t>{pmd});
    EXPECT_TRUE(thp_unadvised_sizes("madvise", {}, pmd).empty());
    EXPECT_TRUE(thp_unadvised_sizes("madvise", {{k16, "never"}, {k64, "inherit"}, {pmd, "inherit"}}, pmd).empty());
    EXPECT_EQ(thp_unadvised_sizes("madvise", {{k16, "never"}, {k64, "always"}, {pmd, "inherit"}}, pmd),
              std::vector<std::size_t>{k64});
    EXPECT_EQ(thp_unadvised_sizes("always", {{k16, "madvise"}, {k64, "inherit"}, {pmd, "inherit"}}, pmd),
              (std::vector<std::size_t>{k64, pmd}));
    EXPECT_TRUE(thp_unadvised_sizes("always", {{k64, "never"}, {pmd, "never"}}, pmd).empty());
    EXPECT_EQ(thp_unadvised_sizes("never", {{pmd, "always"}}, pmd), std::vector<std::size_t>{pmd});
}

// kernel_settings::read() lists the sizes this kernel has, as sysfs does, with each one's mode.
TEST(KernelSettings, ThpSizesAreTheKernelsOwn) {
    const auto k = ccnuma::kernel_settings::read();
    const std::string dir = "/sys/kernel/mm/transparent_hugepage";
    std::size_t listed = 0;
    for (const auto& [bytes, mode] : k.thp_sizes) {
        SCOPED_TRACE(bytes);
        std::ifstream in(dir + "/hugepages-" + std::to_string(bytes >> 10) + "kB/enabled");
        std::string line;
        ASSERT_TRUE(in && std::getline(in, line));
        EXPECT_NE(line.find("[" + mode + "]"), std::string::npos) << line;
        ++listed;
    }
    std::size_t present = 0;
    std::error_code ec;
    // A size may have shmem's file only (hugepages-8kB on 6.14+): no anonymous mode to list.
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        present += e.path().filename().string().starts_with("hugepages-") && std::filesystem::exists(e.path() / "enabled");
    EXPECT_EQ(listed, present);
    EXPECT_TRUE(std::is_sorted(k.thp_sizes.begin(), k.thp_sizes.end()));
}

// Issue 32, item 7: an hpage_pmd_size that is not a power of two from a page to 1 GiB is
// unknown, and the placement report says that huge pages fall back to base pages.
TEST(PlacementWarnings, Issue32_7_UnknownHugePageSizeIsWarned) {
    ccnuma::topology_options o;
    o.source = "pack:2 numa:1 core:2 pu:1";
    o.use_environment = false;
    ccnuma::kernel_settings quiet;
    quiet.numa_balancing = 0;
    quiet.thp_enabled = "madvise";
    ccnuma::support_info pages;
    pages.huge_page_size_problem = "hpage_pmd_size \"-1\" is not a power of two from 4096 to 1073741824 bytes";
    const auto w = ccnuma::placement_warnings(ccnuma::topology::load(o), quiet, pages);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "the huge page size is unknown (hpage_pmd_size \"-1\" is not a power of two from 4096 to "
                    "1073741824 bytes): huge-page policies and pad::huge_page fall back to base pages");
}

// Issue 11: the calloc trap exists only where a read fault maps the zero page; where it gives a
// private frame, a serial read places pages, and in THP regions 512 of them at once.
TEST(PlacementWarnings, SayWhatAReadFaultDoesOnThisKernel) {
    ccnuma::topology_options o;
    o.source = "pack:2 numa:1 core:2 pu:1";
    o.use_environment = false;
    const auto topo = ccnuma::topology::load(o);
    ccnuma::kernel_settings quiet;
    quiet.numa_balancing = 0;
    quiet.thp_enabled = "madvise";
    ccnuma::support_info zero;
    zero.page_size = 4096;
    zero.huge_page_size = std::size_t{2} << 20;
    zero.read_fault = ccnuma::read_fault_kind::zero_page;
    zero.huge_read_fault = ccnuma::read_fault_kind::zero_page;
    zero.huge_read_fault_is_huge = true;
    auto w = ccnuma::placement_warnings(topo, quiet, zero);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("map the shared zero page"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("looks impossibly fast"), std::string::npos) << w[0];

    ccnuma::support_info private_frames = zero;
    private_frames.read_fault = ccnuma::read_fault_kind::private_frame;
    private_frames.huge_read_fault = ccnuma::read_fault_kind::private_frame;
    w = ccnuma::placement_warnings(topo, quiet, private_frames);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_NE(w[0].find("allocate a private page"), std::string::npos) << w[0];
    EXPECT_NE(w[1].find("private 2.0 MiB page: one read places 512 base pages at once"), std::string::npos) << w[1];

    // The default is this host's probe, which the tools print.
    const auto here = ccnuma::placement_warnings(topo, quiet);
    const bool warned = std::any_of(here.begin(), here.end(),
                                    [](const std::string& s) { return s.find("reads of untouched memory") != std::string::npos; });
    EXPECT_EQ(warned, ccnuma::support().read_fault != ccnuma::read_fault_kind::unknown);
}

// Issue 26: the weights Linux 6.16's weighted_interleave/auto chooses. Goldens worked by hand
// from the rule: 32 x bandwidth / sum, rounded down, at least 1, then divided by the gcd.
TEST(AutoInterleaveWeights, FollowLinux616) {
    using weights = std::vector<std::pair<unsigned, unsigned>>;
    // DRAM twice as fast as the far memory of a ccnuma-vm guest: 10:10:5:5, gcd 5.
    EXPECT_EQ(ccnuma::auto_interleave_weights({{0, 1000}, {1, 1000}, {2, 500}, {3, 500}}),
              (weights{{0, 2}, {1, 2}, {2, 1}, {3, 1}}));
    // 3200000 / 100100 = 31; the slow node's share (1/1001) is below 1/32: 1.
    EXPECT_EQ(ccnuma::auto_interleave_weights({{0, 100000}, {1, 100}}), (weights{{0, 31}, {1, 1}}));
    // An unknown bandwidth counts 0 and gets 1; the only known one gets all 32.
    EXPECT_EQ(ccnuma::auto_interleave_weights({{0, 1000}, {4, 0}}), (weights{{0, 32}, {4, 1}}));
    EXPECT_EQ(ccnuma::auto_interleave_weights({{0, 0}, {1, 0}}), (weights{{0, 1}, {1, 1}}));
    // Equal nodes: 16:16 reduced to 1:1.
    EXPECT_EQ(ccnuma::auto_interleave_weights({{0, 7}, {1, 7}}), (weights{{0, 1}, {1, 1}}));
    // From a topology: fakeheteromemtiers' 1000 (DRAM), 10000 (HBM), 100 (NVM) MiB/s, sum 22300:
    // HBM 320000 / 22300 = 14, DRAM 32000 / 22300 = 1, NVM 1.
    const auto t = test_support::load(std::string(CCNUMA_TOPOLOGY_DIR) + "/real/linux-fakeheteromemtiers.xml");
    EXPECT_EQ(ccnuma::auto_interleave_weights(t),
              (weights{{0, 1}, {1, 1}, {2, 14}, {4, 14}, {6, 1}, {8, 1}, {9, 1}}));
    EXPECT_TRUE(ccnuma::auto_interleave_weights(test_support::load("pack:2 numa:1 core:1 pu:1")).empty())
        << "no bandwidth known, no weights";
}

TEST(NumaBalancingMode, SpellsOutTheBits) {
    EXPECT_EQ(ccnuma::numa_balancing_mode(std::nullopt), "not available");
    EXPECT_EQ(ccnuma::numa_balancing_mode(0), "off");
    EXPECT_EQ(ccnuma::numa_balancing_mode(1), "normal");
    EXPECT_EQ(ccnuma::numa_balancing_mode(2), "memory tiering");
    EXPECT_EQ(ccnuma::numa_balancing_mode(3), "normal + memory tiering");
    EXPECT_EQ(ccnuma::numa_balancing_mode(6), "memory tiering + unknown bits");
}

// The warning of a tiered machine whose kernel interleaves with weights of 1, and its absence
// where the weights are set or do not cover the topology's nodes (another machine's XML).
TEST(PlacementWarnings, Issue26_TieredMachineWithWeightsOfOne) {
    const auto t = test_support::load(std::string(CCNUMA_TOPOLOGY_DIR) + "/real/linux-fakeheteromemtiers.xml");
    ccnuma::kernel_settings k;
    k.numa_balancing = 0;
    ccnuma::support_info quiet;
    for (const auto& n : t.numa_nodes()) k.interleave_weights.emplace_back(n.os_index, 1u);
    const auto tiered = [](const std::vector<std::string>& w) {
        return std::count_if(w.begin(), w.end(), [](const auto& s) { return s.find("tiered memory") != std::string::npos; });
    };
    const auto w = ccnuma::placement_warnings(t, k, quiet);
    ASSERT_EQ(tiered(w), 1) << ::testing::PrintToString(w);
    const auto& text = *std::find_if(w.begin(), w.end(), [](const auto& s) { return s.find("tiered memory") != std::string::npos; });
    EXPECT_NE(text.find("from node 0, node 0 reads at 1000 MB/s and node 8 at 100 MB/s"), std::string::npos) << text;
    EXPECT_NE(text.find("echo W > /sys/kernel/mm/mempolicy/weighted_interleave/node<N>"), std::string::npos) << text;
    EXPECT_NE(text.find("node2=14"), std::string::npos) << text;
    EXPECT_NE(text.find("ccnuma-run -w"), std::string::npos) << text;
    EXPECT_NE(text.find("ccnuma::weighted_interleave{}.weights(ccnuma::by_bandwidth)"), std::string::npos) << text;
    auto set = k;
    set.interleave_weights[2].second = 14;
    EXPECT_EQ(tiered(ccnuma::placement_warnings(t, set, quiet)), 0) << "weights set";
    auto partial = k;
    partial.interleave_weights.pop_back();
    EXPECT_EQ(tiered(ccnuma::placement_warnings(t, partial, quiet)), 0) << "node 9 has no weight here";
    EXPECT_EQ(tiered(ccnuma::placement_warnings(test_support::load("pack:2 numa:1 core:1 pu:1"), k, quiet)), 0)
        << "not tiered";
}

// The sysfs readers of the OS layer, on a fake /sys laid out as Linux 6.16 lays it out.
TEST(SysfsReaders, Issue26_ReadTiersAccessAndWeightsUnderARoot) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("ccnuma-sys-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const auto put = [&](const std::string& path, const std::string& text) {
        fs::create_directories((root / path).parent_path());
        std::ofstream(root / path) << text;
    };
    put("devices/system/node/node0/cpulist", "0-1,4\n");
    put("devices/system/node/node2/cpulist", "\n");
    put("devices/virtual/memory_tiering/memory_tier4/nodelist", "0-1\n");
    put("devices/virtual/memory_tiering/memory_tier22/nodelist", "2-3\n");
    const std::string init = "devices/system/node/node2/access0/initiators/";
    put(init + "read_bandwidth", "10240\n");
    put(init + "write_bandwidth", "5120\n");
    put(init + "read_latency", "200\n");
    fs::create_directories(root / "devices/system/node/node0");
    fs::create_symlink(root / "devices/system/node/node0", root / (init + "node0"));
    put("kernel/mm/mempolicy/weighted_interleave/node0", "2\n");
    put("kernel/mm/mempolicy/weighted_interleave/node2", "1\n");
    put("kernel/mm/mempolicy/weighted_interleave/auto", "Y\n");
    put("kernel/mm/numa/demotion_enabled", "false\n");
    const std::string sys = root.string();

    EXPECT_EQ(ccnuma::detail::node_cpus(0, sys), (std::vector<unsigned>{0, 1, 4}));
    EXPECT_EQ(ccnuma::detail::node_cpus(2, sys), std::vector<unsigned>{});
    EXPECT_EQ(ccnuma::detail::node_cpus(7, sys), std::nullopt);
    using tiers = std::vector<std::pair<int, std::vector<unsigned>>>;
    EXPECT_EQ(ccnuma::detail::memory_tiers(sys), (tiers{{4, {0, 1}}, {22, {2, 3}}})) << "ascending by id, not name";
    const auto a = ccnuma::detail::node_access(2, 0, sys);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->initiators, (std::vector<unsigned>{0}));
    EXPECT_EQ(a->read_bandwidth, 10240u);
    EXPECT_EQ(a->write_bandwidth, 5120u);
    EXPECT_EQ(a->read_latency, 200u);
    EXPECT_EQ(a->write_latency, 0u) << "absent file: unknown";
    EXPECT_FALSE(ccnuma::detail::node_access(2, 1, sys));
    using weights = std::vector<std::pair<unsigned, unsigned>>;
    EXPECT_EQ(ccnuma::detail::interleave_weights(sys), (weights{{0, 2}, {2, 1}}));
    EXPECT_EQ(ccnuma::detail::interleave_auto(sys), true);
    EXPECT_EQ(ccnuma::detail::demotion_enabled(sys), false);
    fs::remove_all(root);
    EXPECT_TRUE(ccnuma::detail::memory_tiers(sys).empty());
    EXPECT_EQ(ccnuma::detail::interleave_auto(sys), std::nullopt) << "before Linux 6.16";
    EXPECT_EQ(ccnuma::detail::demotion_enabled(sys), std::nullopt);
    // 6.18's `#define auto __auto_type` renamed the attribute (seen on this project's host).
    put("kernel/mm/mempolicy/weighted_interleave/__auto_type", "true\n");
    put("kernel/mm/mempolicy/weighted_interleave/node0", "1\n");
    EXPECT_EQ(ccnuma::detail::interleave_auto(sys), true);
    EXPECT_EQ(ccnuma::detail::interleave_weights(sys), (weights{{0, 1}})) << "__auto_type is no node";
    fs::remove_all(root);
}

}  // namespace
