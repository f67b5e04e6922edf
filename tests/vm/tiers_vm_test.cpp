// Issue 26: the tiered machine ccnuma-vm makes. Two sockets of two cores, each with a CPU-less
// memory node of half the bandwidth and twice the latency of its DRAM (a CXL expander), booted
// once; the guest's kernel must then see what was asked for in its own sysfs: the nodes, their
// HMAT initiators, bandwidths and latencies, the SLIT, the memory tiers and the
// weighted-interleave weights, and CCNUMA_VM must describe the memory nodes. ccnuma-info --json,
// run in the same guest, must agree with that sysfs.

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using test_support::quote;
using test_support::result;
using test_support::run;

const std::string vm = CCNUMA_VM;
const std::string info = CCNUMA_INFO;
const std::string ccnuma_run = CCNUMA_RUN;

// The machine of the issue's test. 128M per CPU node is the least the existing vm tests boot
// with; the memory nodes keep the issue's 512M.
const std::string shape = "--nodes 2 --cores-per-node 2 --mem-per-node 128M "
                          "--memory-node 512M,near=0,bandwidth=0.5,latency=2 "
                          "--memory-node 512M,near=1,bandwidth=0.5,latency=2";

// Each answer on its own line, "TAG NODE VALUE..." or "TAG VALUE...", read by tagged_lines().
const char* const guest_script = R"sh(cd /sys/devices/system/node || exit 1
for d in node[0-9]*; do
  n=${d#node}
  echo "node $n"
  echo "cpulist $n $(cat $d/cpulist)"
  echo "distance $n $(cat $d/distance)"
  i=$d/access0/initiators
  if [ -d $i ]; then
    echo "access0 $n $(cd $i && ls -d node* | tr '\n' ' ')"
    for f in read_bandwidth write_bandwidth read_latency write_latency; do echo "$f $n $(cat $i/$f)"; done
  fi
done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do echo "tier ${t##*memory_tier} $(cat $t/nodelist)"; done
for w in /sys/kernel/mm/mempolicy/weighted_interleave/node*; do echo "weight ${w##*node} $(cat $w)"; done
echo "env $CCNUMA_VM"
echo "etc $(cat /etc/ccnuma-vm)"
echo "info $("$1" --json | tr -d '\n')"
"$2" -H | while read -r line; do echo "hardware $line"; done
"$2" -N 2 true 2>/dev/null; echo "cpunodebind 2 $?"
"$2" -N 0 true; echo "cpunodebind 0 $?"
)sh";

// "0-1,3" -> {0, 1, 3}
std::set<int> node_list(const std::string& text) {
    std::set<int> nodes;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) {
        if (part.empty() || part == "\n") continue;
        const auto dash = part.find('-');
        const int first = std::atoi(part.c_str());
        const int last = dash == std::string::npos ? first : std::atoi(part.c_str() + dash + 1);
        for (int n = first; n <= last; ++n) nodes.insert(n);
    }
    return nodes;
}

// One boot for the whole suite: every test reads the same guest's answers.
class TieredGuest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const std::string script = ::testing::TempDir() + "ccnuma_tiers_vm_" + std::to_string(::getpid()) + ".sh";
        std::ofstream(script) << guest_script;
        guest_ = run(vm + " " + shape + " --copy " + quote(info) + " --copy " + quote(ccnuma_run) + " -- sh " + quote(script) + " " +
                     quote(info) + " " + quote(ccnuma_run));
        std::filesystem::remove(script);
        for (const auto& [tag, lines] : test_support::tagged_lines(guest_.out))
            for (std::string line : lines) {
                while (!line.empty() && line.back() == ' ') line.pop_back();  // after `ls | tr`
                // "NODE VALUE" for the per-node tags, the whole line for the others.
                const auto space = line.find(' ');
                if (tag != "env" && tag != "etc" && tag != "node" && tag != "info" && tag != "hardware")
                    answers_[tag][std::atoi(line.substr(0, space).c_str())] =
                        space == std::string::npos ? "" : line.substr(space + 1);
                else
                    answers_[tag][static_cast<int>(answers_[tag].size())] = line;
            }
        try {
            info_ = nlohmann::json::parse(at("info", 0));
        } catch (const std::exception& e) {
            info_error_ = e.what();
        }
    }
    void SetUp() override { ASSERT_EQ(guest_.status, 0) << "ccnuma-vm " << shape << "\nstderr: " << guest_.err; }

    // The answer `tag` gave for node n (or the n-th line of a tag without a node).
    static std::string at(const std::string& tag, int n) {
        const auto t = answers_.find(tag);
        if (t == answers_.end()) return "(no " + tag + ")";
        const auto a = t->second.find(n);
        return a == t->second.end() ? "(no " + tag + " " + std::to_string(n) + ")" : a->second;
    }
    static long number(const std::string& tag, int n) { return std::atol(at(tag, n).c_str()); }

    static inline result guest_;
    static inline nlohmann::json info_;
    static inline std::string info_error_;
    static inline std::map<std::string, std::map<int, std::string>> answers_;
};

TEST_F(TieredGuest, Issue26_FourNodesOfWhichTheMemoryNodesHaveNoCpus) {
    std::set<std::string> nodes;
    for (const auto& [i, n] : answers_["node"]) nodes.insert(n);
    EXPECT_EQ(nodes, (std::set<std::string>{"0", "1", "2", "3"})) << guest_.out;
    EXPECT_EQ(at("cpulist", 0), "0-1");
    EXPECT_EQ(at("cpulist", 1), "2-3");
    EXPECT_EQ(at("cpulist", 2), "");
    EXPECT_EQ(at("cpulist", 3), "");
}

// The HMAT: each memory node's best initiator is its near socket, at half the bandwidth and twice
// the latency of that socket's own DRAM (the kernel reports MB/s and ns).
TEST_F(TieredGuest, Issue26_EachMemoryNodeIsReachedFromItsSocketAtHalfBandwidthAndDoubleLatency) {
    EXPECT_EQ(at("access0", 0), "node0");
    EXPECT_EQ(at("access0", 1), "node1");
    EXPECT_EQ(at("access0", 2), "node0");
    EXPECT_EQ(at("access0", 3), "node1");
    for (const auto& [memory, dram] : {std::pair{2, 0}, std::pair{3, 1}}) {
        SCOPED_TRACE("node " + std::to_string(memory) + " from node " + std::to_string(dram));
        for (const char* bw : {"read_bandwidth", "write_bandwidth"}) {
            EXPECT_GT(number(bw, memory), 0) << bw;
            EXPECT_EQ(2 * number(bw, memory), number(bw, dram)) << bw;
        }
        for (const char* lat : {"read_latency", "write_latency"}) {
            EXPECT_GT(number(lat, dram), 0) << lat;
            EXPECT_EQ(number(lat, memory), 2 * number(lat, dram)) << lat;
        }
    }
}

// The SLIT agrees: a memory node is as far as its initiator, times its latency ratio.
TEST_F(TieredGuest, Issue26_DistancesAgreeWithTheLatencyRatios) {
    EXPECT_EQ(at("distance", 0), "10 20 20 40");
    EXPECT_EQ(at("distance", 1), "20 10 40 20");
    EXPECT_EQ(at("distance", 2), "20 40 10 40");
    EXPECT_EQ(at("distance", 3), "40 20 40 10");
}

// Linux 6.10 tiers CPU-less nodes present at boot from the HMAT: the memory nodes share a tier
// of their own, with a larger id (farther from the CPUs) than the DRAM's.
TEST_F(TieredGuest, Issue26_TheKernelPutsTheMemoryNodesInALowerTier) {
    int dram_tier = -1, memory_tier = -1;
    for (const auto& [id, list] : answers_["tier"]) {
        const std::set<int> nodes = node_list(list);
        if (nodes == std::set<int>{0, 1}) dram_tier = id;
        if (nodes == std::set<int>{2, 3}) memory_tier = id;
    }
    ASSERT_GE(dram_tier, 0) << "no tier holds exactly nodes 0-1:\n" << guest_.out;
    ASSERT_GE(memory_tier, 0) << "no tier holds exactly nodes 2-3:\n" << guest_.out;
    EXPECT_GT(memory_tier, dram_tier);
}

// Linux 6.9's MPOL_WEIGHTED_INTERLEAVE has a weight per node, memory nodes included.
TEST_F(TieredGuest, Issue26_EveryNodeHasAWeightedInterleaveWeight) {
    for (int n = 0; n < 4; ++n) EXPECT_GE(number("weight", n), 1) << "node " << n << "\n" << guest_.out;
}

TEST_F(TieredGuest, Issue26_CcnumaVmInTheGuestNamesTheMemoryNodes) {
    const std::string expected = "nodes=2 sockets=2 cores-per-node=2 threads-per-core=1 mem-per-node=128M thp=madvise "
                                 "numa-balancing=0 memory-node=512M,near=0,bandwidth=0.5,latency=2 "
                                 "memory-node=512M,near=1,bandwidth=0.5,latency=2";
    EXPECT_EQ(at("env", 0), expected);
    EXPECT_EQ(at("etc", 0), expected);
}

// ccnuma-info in the same guest (the topology's tiers and bandwidths): 4 nodes, 2 without CPUs,
// the memory nodes ranked in a lower tier, bandwidth in the ratio given, and each value the one
// the guest's sysfs shows.
TEST_F(TieredGuest, Issue26_CcnumaInfoShowsTheTiersAndBandwidthsTheKernelShows) {
    ASSERT_TRUE(info_error_.empty()) << info_error_ << "\n" << at("info", 0);
    const nlohmann::json& topo = info_.at("topology");
    EXPECT_EQ(topo.at("total_numa_nodes").get<int>(), 4);
    const nlohmann::json& nodes = topo.at("numa_nodes");
    ASSERT_EQ(nodes.size(), 4u);
    for (int n = 0; n < 4; ++n) {
        SCOPED_TRACE("node " + std::to_string(n));
        const nlohmann::json& node = nodes[n];
        EXPECT_EQ(node.at("os_index").get<int>(), n);
        EXPECT_EQ(node.at("has_cpus").get<bool>(), n < 2);
        // A memory node's own CPUs are none, as the kernel's cpulist says; hwloc's locality is
        // the socket it is near.
        const std::vector<int> socket = n % 2 == 0 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
        EXPECT_EQ(node.at("cpus").get<std::vector<int>>(), n < 2 ? socket : std::vector<int>());
        EXPECT_EQ(node.at("locality").get<std::vector<int>>(), socket);
        EXPECT_EQ(node.at("tier").get<int>(), n < 2 ? 0 : 1);
        EXPECT_EQ(node.at("tier_from").get<std::string>(), "kernel");
        // The kernel's own tier id, as /sys/devices/virtual/memory_tiering names it.
        const int id = node.at("kernel_tier_id").get<int>();
        EXPECT_TRUE(node_list(at("tier", id)).contains(n)) << "memory_tier" << id << ": " << at("tier", id);
        EXPECT_EQ(node.at("interleave_weight").get<long>(), number("weight", n));
        ASSERT_EQ(node.at("access").size(), 1u) << node.dump();
        const nlohmann::json& access = node.at("access")[0];
        EXPECT_EQ(access.at("initiator").get<int>(), n % 2);
        EXPECT_EQ(access.at("read_bandwidth").get<long>(), number("read_bandwidth", n));
        EXPECT_EQ(access.at("read_latency").get<long>(), number("read_latency", n));
        std::vector<int> row;
        for (const auto& d : topo.at("distances")[n]) row.push_back(d.get<int>());
        std::stringstream sysfs(at("distance", n));
        std::vector<int> expected;
        for (int d = 0; sysfs >> d;) expected.push_back(d);
        EXPECT_EQ(row, expected);
    }
    // Bandwidth and latency in the ratios given to --memory-node.
    for (const auto& [memory, dram] : {std::pair{2, 0}, std::pair{3, 1}}) {
        const nlohmann::json& far = nodes[memory].at("access")[0];
        const nlohmann::json& near = nodes[dram].at("access")[0];
        EXPECT_EQ(2 * far.at("read_bandwidth").get<long>(), near.at("read_bandwidth").get<long>()) << "node " << memory;
        EXPECT_EQ(far.at("read_latency").get<long>(), 2 * near.at("read_latency").get<long>()) << "node " << memory;
    }
    // Each PU's local nodes: its DRAM, then the memory node near its socket.
    for (const nlohmann::json& pu : topo.at("pus")) {
        const int cpu = pu.at("os_index").get<int>();
        EXPECT_EQ(pu.at("local_nodes").get<std::vector<int>>(), (std::vector<int>{cpu / 2, 2 + cpu / 2})) << "PU " << cpu;
    }
    EXPECT_EQ(info_.at("emulated_machine").get<std::string>(), at("etc", 0));
}

// numactl's view of the same machine: `ccnuma-run -H` lists no CPUs for the memory nodes, as
// numactl -H does, and --cpunodebind to one is refused instead of binding to its neighbours.
TEST_F(TieredGuest, Issue26_MemoryNodesHaveNoCpusToBindTo) {
    std::map<std::string, std::string> hardware;
    for (const auto& [i, line] : answers_["hardware"]) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) hardware[line.substr(0, colon)] = line.substr(colon + 1);
    }
    EXPECT_EQ(hardware["node 0 cpus"], " 0 1") << guest_.out;
    EXPECT_EQ(hardware["node 1 cpus"], " 2 3");
    EXPECT_EQ(hardware["node 2 cpus"], "");
    EXPECT_EQ(hardware["node 3 cpus"], "");
    EXPECT_EQ(at("cpunodebind", 2), "1") << "ccnuma-run -N 2 (a CPU-less node) must fail";
    EXPECT_EQ(at("cpunodebind", 0), "0");
}

}  // namespace
