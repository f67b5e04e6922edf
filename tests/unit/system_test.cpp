#include <ccnuma/system.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace {

std::string first_line(const char* path) {
    std::ifstream in(path);
    std::string s;
    std::getline(in, s);
    return s;
}

TEST(KernelSettings, MatchesProcAndSys) {
    const auto k = ccnuma::kernel_settings::read();
    const auto nb = first_line("/proc/sys/kernel/numa_balancing");
    if (nb.empty())
        EXPECT_FALSE(k.numa_balancing.has_value());
    else
        EXPECT_EQ(k.numa_balancing, std::stoi(nb));
    const auto thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
    if (thp.empty())
        EXPECT_TRUE(k.thp_enabled.empty());
    else
        EXPECT_NE(thp.find("[" + k.thp_enabled + "]"), std::string::npos) << thp;
}

// Issue 12: numactl -H's "node N free", from the same sysfs file numactl reads.
TEST(NodeFree, MatchesSysfsMeminfo) {
    std::ifstream in("/sys/devices/system/node/node0/meminfo");
    if (!in) {
        EXPECT_FALSE(ccnuma::node_free_bytes(0).has_value()) << "no NUMA sysfs, no answer";
        return;
    }
    const auto f = ccnuma::node_free_bytes(0);
    ASSERT_TRUE(f.has_value());
    const auto total = first_line("/proc/meminfo");  // "MemTotal: N kB": free memory cannot exceed it
    EXPECT_GT(*f, 0u);
    EXPECT_LE(*f, std::stoull(total.substr(total.find(':') + 1)) * 1024);
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

}  // namespace
