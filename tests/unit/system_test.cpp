#include <ccnuma/system.hpp>

#include <gtest/gtest.h>

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

TEST(PlacementWarnings, OnePerProblemWithItsRemedy) {
    ccnuma::topology_options o;
    o.source = "pack:2 numa:1 core:2 pu:2";
    o.use_environment = false;
    const auto smt = ccnuma::topology::load(o);
    ccnuma::kernel_settings quiet;
    quiet.numa_balancing = 0;
    quiet.thp_enabled = "madvise";
    auto w = ccnuma::placement_warnings(smt, quiet);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("SMT present (2 PUs per core)"), std::string::npos) << w[0];

    ccnuma::kernel_settings loud = quiet;
    loud.numa_balancing = 1;
    loud.thp_enabled = "always";
    o.cpuset = "0-3";
    w = ccnuma::placement_warnings(ccnuma::topology::load(o), loud);
    ASSERT_EQ(w.size(), 4u);
    EXPECT_NE(w[0].find("sysctl -w kernel.numa_balancing=0"), std::string::npos) << w[0];
    EXPECT_NE(w[1].find("may use 4 of 8 PUs (0-3)"), std::string::npos) << w[1];
    EXPECT_NE(w[3].find("2 MiB"), std::string::npos) << w[3];

    o.source = "pack:2 numa:1 core:2 pu:1";
    o.cpuset.clear();
    EXPECT_TRUE(ccnuma::placement_warnings(ccnuma::topology::load(o), quiet).empty());
}

}  // namespace
