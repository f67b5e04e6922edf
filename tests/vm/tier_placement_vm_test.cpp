// Issue 26: placement by tier, page by page, inside ccnuma-vm on a tiered machine (see
// tests/CMakeLists.txt): 2 sockets of 2 cores, DRAM nodes 0 and 1, and a CPU-less memory node
// near each socket (2 near socket 0, 3 near socket 1) with half the bandwidth of local DRAM in
// the HMAT. Run under ccnuma-run --bind 4,scatter: threads 0 and 2 on socket 0, 1 and 3 on
// socket 1. Every expectation is computed here from the machine's shape and the static
// schedule, not from the library's planning code.

#include <ccnuma/allocator.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory_resource>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

// The CPU-less node near the socket whose DRAM is `dram`: the machine numbers the memory nodes
// after the CPU nodes, one per socket in order.
unsigned far_of(unsigned dram) { return dram + 2; }

// MemFree of a node, from the guest kernel's own sysfs.
std::uint64_t mem_free(unsigned node) {
    std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string word, key;
        unsigned n = 0;
        std::uint64_t kb = 0;
        if (s >> word >> n >> key >> kb && key == "MemFree:") return kb * 1024;
    }
    return 0;
}

// Sets the team size for one scope: a team of one runs on the master, which --bind 4,scatter
// puts on socket 0.
struct team_of {
    int before = omp_get_max_threads();
    explicit team_of(int n) { omp_set_num_threads(n); }
    ~team_of() { omp_set_num_threads(before); }
};

class TierPlacement : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(ccnuma::emulated_machine::current().has_value())
            << "run inside ccnuma-vm: ccnuma-vm --nodes 2 --memory-node 512M,near=0 --memory-node 512M,near=1 -- "
               "ccnuma-run --bind 4,scatter -- tier_placement_vm_test";
        const auto& topo = ccnuma::topology::current();
        ASSERT_EQ(topo.numa_nodes().size(), 4u);
        ASSERT_TRUE(topo.is_tiered());
        ASSERT_TRUE(ccnuma::support().move_pages && ccnuma::support().mbind) << ccnuma::support().to_string();
        ASSERT_EQ(omp_get_max_threads(), 4) << "run under ccnuma-run --bind 4,scatter";
    }
};

// weights 2:1 over {0, 2}: page i on node 0 where i mod 3 < 2, else on node 2, for every page.
void expect_two_to_one(const ccnuma::policy& pol) {
    const std::size_t pages = 3 * 1000 + 2;  // a partial round at the end
    const std::size_t bytes = pages * page;
    auto* p = static_cast<char*>(ccnuma::allocate(bytes, pol));
    const auto nodes = ccnuma::page_nodes(p, bytes);
    ASSERT_EQ(nodes.size(), pages);
    std::size_t wrong = 0, on0 = 0, on2 = 0;
    for (std::size_t i = 0; i < pages; ++i) {
        const int expected = i % 3 < 2 ? 0 : 2;
        if (nodes[i] != expected && wrong++ < 5)
            ADD_FAILURE() << ccnuma::to_string(pol) << ": page " << i << " on node " << nodes[i] << ", expected "
                          << expected;
        on0 += nodes[i] == 0;
        on2 += nodes[i] == 2;
    }
    EXPECT_EQ(wrong, 0u) << ccnuma::node_histogram(nodes).to_string();
    // Exactly 2:1 within one round: 2002 and 1000.
    EXPECT_EQ(on0, 2002u) << ccnuma::to_string(pol);
    EXPECT_EQ(on2, 1000u) << ccnuma::to_string(pol);
    std::printf("%s of %zu pages: %s\n", ccnuma::to_string(pol).c_str(), pages,
                ccnuma::node_histogram(nodes).to_string().c_str());
    ccnuma::deallocate(p, bytes, pol);
}

TEST_F(TierPlacement, WeightedInterleaveTwoToOneIsExactPageByPage) {
    expect_two_to_one(ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1}));
}

TEST_F(TierPlacement, WeightsByBandwidthFromNodeZeroAreTwoToOne) {
    // The HMAT says node 2 has half node 0's bandwidth from node 0: weights 2:1.
    const auto* dram = ccnuma::topology::current().access(0, 0);
    const auto* far = ccnuma::topology::current().access(0, 2);
    ASSERT_TRUE(dram != nullptr && far != nullptr) << "the guest's HMAT gives bandwidths from node 0";
    EXPECT_EQ(dram->read_bandwidth, 2 * far->read_bandwidth);
    team_of one(1);
    expect_two_to_one(ccnuma::weighted_interleave{}.nodes({0, 2}).weights(ccnuma::by_bandwidth));
}

TEST_F(TierPlacement, MigrateToWeightedInterleaveFollowsThePattern) {
    const std::size_t pages = 300, bytes = pages * page;
    auto* p = static_cast<char*>(ccnuma::allocate(bytes, ccnuma::on_node(1)));
    for (std::size_t i = 0; i < bytes; i += page) p[i] = static_cast<char>(i / page);
    const auto r = ccnuma::migrate(p, bytes, ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1}));
    EXPECT_EQ(r.moved, pages) << r.to_string();
    const auto nodes = ccnuma::page_nodes(p, bytes);
    for (std::size_t i = 0; i < pages; ++i) {
        EXPECT_EQ(nodes[i], i % 3 < 2 ? 0 : 2) << "page " << i;
        EXPECT_EQ(p[i * page], static_cast<char>(i)) << "page " << i;
    }
    ccnuma::deallocate(p, bytes, ccnuma::on_node(1));
}

TEST_F(TierPlacement, WeightedInterleaveWorksOnEveryCarrier) {
    const auto pol = ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1});
    const std::size_t n = 3 * 256 * page / sizeof(double);
    auto check = [&](const double* p, const char* what) {
        const auto h = ccnuma::node_histogram(p, n * sizeof(double));
        EXPECT_EQ(h.pages[0] + h.pages[2], h.total) << what << ": " << h.to_string();
        EXPECT_LE(h.pages[0] > 2 * h.pages[2] ? h.pages[0] - 2 * h.pages[2] : 2 * h.pages[2] - h.pages[0], 2u)
            << what << ": " << h.to_string();
    };
    std::vector<double, ccnuma::allocator<double, ccnuma::weighted_interleave>> v(
        n, 1.0, ccnuma::allocator<double, ccnuma::weighted_interleave>(pol));
    check(v.data(), "std::vector with allocator<weighted_interleave>");
    ccnuma::memory_resource res{pol};
    std::pmr::vector<double> pv(n, 1.0, &res);
    check(pv.data(), "std::pmr::vector on a weighted_interleave resource");
}

TEST_F(TierPlacement, KernelWeightsKeepPagesOnTheNodes) {
    // No weights: the guest kernel's MPOL_WEIGHTED_INTERLEAVE (6.12 has it) with its weights.
    const auto pol = ccnuma::weighted_interleave{}.nodes({0, 2});
    const std::size_t bytes = 300 * page;
    auto* p = static_cast<char*>(ccnuma::allocate(bytes, pol));
    for (std::size_t i = 0; i < bytes; i += page) p[i] = 1;
    const auto h = ccnuma::node_histogram(p, bytes);
    EXPECT_EQ(h.pages[0] + h.pages[2], 300u) << h.to_string();
    EXPECT_GT(h.pages[0], 0u) << h.to_string();
    EXPECT_GT(h.pages[2], 0u) << h.to_string();
    ccnuma::deallocate(p, bytes, pol);
}

TEST_F(TierPlacement, TiersSplitEachThreadsPartTwoToOneNearIt) {
    const std::size_t bytes = std::size_t{24} << 20;  // 6 MiB per thread: 1536 pages
    const std::size_t count = bytes / sizeof(double);
    const auto pol = ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth);
    auto* p = static_cast<double*>(ccnuma::allocate(bytes, pol, sizeof(double)));
    // The owner of each element, and the DRAM node of each thread, from the loop itself.
    std::vector<int> owner(count, -1), dram(4, -1);
#pragma omp parallel
    {
        unsigned cpu = 0, node = 0;
        ::getcpu(&cpu, &node);
        dram[static_cast<std::size_t>(omp_get_thread_num())] = static_cast<int>(node);
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < count; ++i) owner[i] = omp_get_thread_num();
    }
    EXPECT_EQ(dram, (std::vector<int>{0, 1, 0, 1})) << "4,scatter alternates the sockets";
    const auto nodes = ccnuma::page_nodes(p, bytes);
    const std::size_t per_page = page / sizeof(double);
    for (unsigned t = 0; t < 4; ++t) {
        const auto d = static_cast<unsigned>(dram[t]);
        std::size_t on_dram = 0, on_far = 0, elsewhere = 0, owned = 0;
        bool far_started = false, back_to_dram = false;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (owner[i * per_page] != static_cast<int>(t)) continue;
            ++owned;
            if (nodes[i] == static_cast<int>(d)) {
                ++on_dram;
                back_to_dram |= far_started;
            } else if (nodes[i] == static_cast<int>(far_of(d))) {
                ++on_far;
                far_started = true;
            } else {
                ++elsewhere;
            }
        }
        SCOPED_TRACE("thread " + std::to_string(t) + " on node " + std::to_string(d));
        EXPECT_EQ(elsewhere, 0u) << "none on the other socket's nodes, none missing";
        EXPECT_EQ(on_dram + on_far, owned);
        // Bandwidth 1 : 0.5, so a third on the far node, within one unit of the split.
        const double third = static_cast<double>(owned) / 3.0;
        EXPECT_LE(std::abs(static_cast<double>(on_far) - third), 1.0) << on_dram << " : " << on_far;
        EXPECT_FALSE(back_to_dram) << "the DRAM share first, then the far share, each contiguous";
    }
    const auto r = ccnuma::report_placement(p, count, sizeof(double));
    EXPECT_EQ(r.near, 1.0) << r.to_string();
    EXPECT_NEAR(r.locality, 2.0 / 3.0, 0.01) << r.to_string();
    EXPECT_NE(r.to_string().find(", near 100.0%, spilled "), std::string::npos) << r.to_string();
    std::printf("%s of 24 MiB, 4 threads 4,scatter: %s\n", ccnuma::to_string(pol).c_str(), r.to_string().c_str());
    ccnuma::deallocate(p, bytes, pol);
}

TEST_F(TierPlacement, FastestSpillsToTheNearMemoryAndSaysHowMuch) {
    team_of one(1);  // the master, on socket 0: local nodes 0 then 2
    const auto& pu = ccnuma::topology::current().pu(static_cast<unsigned>(::sched_getcpu()));
    ASSERT_EQ(pu.local_nodes, (std::vector<unsigned>{0, 2}));
    // More than node 0 has free, well within nodes 0 and 2 together.
    const std::size_t bytes = (mem_free(0) + (std::size_t{64} << 20)) / page * page;
    ASSERT_LT(bytes, mem_free(0) + mem_free(2) - (std::size_t{96} << 20));
    const auto pol = ccnuma::fastest{};
    auto* p = static_cast<char*>(ccnuma::allocate(bytes, pol));
    const auto h = ccnuma::node_histogram(p, bytes);
    EXPECT_EQ(h.pages[0] + h.pages[2], h.total) << "the rest on node 2: " << h.to_string();
    EXPECT_GE(h.pages[2] * page, std::size_t{64} << 20) << h.to_string();
    EXPECT_GT(h.pages[0], h.pages[2]) << h.to_string();
    ccnuma::schedule master;
    master.threads = 1;
    const auto r = ccnuma::report_placement(p, bytes, 1, master);
    EXPECT_EQ(r.spilled, h.pages[2]) << r.to_string();
    EXPECT_EQ(r.near, 1.0) << r.to_string();
    std::printf("fastest of %zu MiB from node 0: %s\n", bytes >> 20, r.to_string().c_str());
    ccnuma::deallocate(p, bytes, pol);
}

TEST_F(TierPlacement, BadInputIsAnErrorNamingTheInput) {
    const std::pair<ccnuma::policy, std::string> cases[] = {
        {ccnuma::weighted_interleave{}.nodes({0, 9}).weights({2, 1}), ": node 9 is not in the allowed set {0-3}"},
        {ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 0}), ": weight 0 of node 2 is out of range (valid: 1 to 255"},
        {ccnuma::weighted_interleave{}.nodes({0, 2}).weights({256, 1}), ": weight 256 of node 0 is out of range (valid: 1 to 255"},
        {ccnuma::weighted_interleave{}.nodes({0, 2}).weights({1}), ": 1 weights for 2 nodes {0,2} (valid: one weight per node)"},
        {ccnuma::weighted_interleave{}.nodes({9}).weights(ccnuma::by_bandwidth), ": node 9 is not in the allowed set {0-3}"},
    };
    for (const auto& [pol, says] : cases) {
        try {
            void* p = ccnuma::allocate(1 << 20, pol);
            ccnuma::deallocate(p, 1 << 20, pol);
            ADD_FAILURE() << ccnuma::to_string(pol) << " accepted";
        } catch (const ccnuma::error& e) {
            EXPECT_NE(std::string(e.what()).find("placement " + ccnuma::to_string(pol) + " of 1.0 MiB" + says),
                      std::string::npos)
                << e.what();
        }
    }
    // More than all four nodes hold: refused before anything is mapped.
    try {
        void* p = ccnuma::allocate(std::size_t{8} << 30, ccnuma::fastest{});
        ccnuma::deallocate(p, std::size_t{8} << 30, ccnuma::fastest{});
        ADD_FAILURE() << "8 GiB accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::infeasible)) << e.what();
        EXPECT_NE(std::string(e.what()).find("more memory than the policy's nodes hold (node 0: "), std::string::npos)
            << e.what();
    }
}

}  // namespace
