// The emulated machine's shape: parsing, printing, validation of impossible machines, and the
// size syntax shared with ccnuma-vm's options. Booting is tested in tests/vm.

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace {

std::string message_of(auto&& f) {
    try {
        f();
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::invalid_argument));
        return e.what();
    }
    ADD_FAILURE() << "no ccnuma::error thrown";
    return {};
}

TEST(Size, ParsesBinarySuffixesAsNumactlAndQemuDo) {
    EXPECT_EQ(ccnuma::parse_size("4096"), 4096u);
    EXPECT_EQ(ccnuma::parse_size("64K"), 64u << 10);
    EXPECT_EQ(ccnuma::parse_size("512m"), 512u << 20);
    EXPECT_EQ(ccnuma::parse_size("2G"), 2ull << 30);
    EXPECT_EQ(ccnuma::parse_size("2GB"), 2ull << 30);
    EXPECT_EQ(ccnuma::parse_size("2GiB"), 2ull << 30);
    EXPECT_EQ(ccnuma::parse_size("1T"), 1ull << 40);
    EXPECT_EQ(ccnuma::parse_size("100B"), 100u);
}

TEST(Size, RejectsFractionsUnknownSuffixesAndOverflow) {
    EXPECT_NE(message_of([] { ccnuma::parse_size("1.5G", "--mem-per-node"); })
                  .find("bad --mem-per-node \"1.5G\": unknown suffix \".5G\""),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::parse_size("", "x"); }).find("bad x \"\": not a number"), std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::parse_size("G"); }).find("not a number"), std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::parse_size("-1M"); }).find("not a number"), std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::parse_size("20000000T"); }).find("too large"), std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::parse_size("99999999999999999999"); }).find("not a number"), std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::parse_size("4Q"); }).find("expected a whole number of bytes"), std::string::npos);
}

TEST(Size, FormatsWholeMultiplesWithTheLargestSuffix) {
    EXPECT_EQ(ccnuma::format_size(512u << 20), "512M");
    EXPECT_EQ(ccnuma::format_size(1536u << 20), "1536M");
    EXPECT_EQ(ccnuma::format_size(2ull << 30), "2G");
    EXPECT_EQ(ccnuma::format_size(1000), "1000");
    EXPECT_EQ(ccnuma::format_size(0), "0");
    for (std::uint64_t v : {1ull, 4096ull, 3ull << 20, 5ull << 40, 12345678ull})
        EXPECT_EQ(ccnuma::parse_size(ccnuma::format_size(v)), v);
}

TEST(Shape, DefaultsAreTwoNodesOfTwoCores) {
    const ccnuma::emulated_machine m;
    EXPECT_NO_THROW(m.validate());
    EXPECT_EQ(m.total_cpus(), 4u);
    EXPECT_EQ(m.effective_sockets(), 2u);
    EXPECT_EQ(m.total_memory(), 1ull << 30);
    EXPECT_EQ(m.to_string(),
              "nodes=2 sockets=2 cores-per-node=2 threads-per-core=1 mem-per-node=512M thp=madvise numa-balancing=0");
}

TEST(Shape, RoundTripsThroughItsText) {
    ccnuma::emulated_machine m;
    m.nodes = 4;
    m.sockets = 2;
    m.cores_per_node = 3;
    m.threads_per_core = 2;
    m.mem_per_node = 1ull << 30;
    m.distances = {{10, 12, 20, 20}, {12, 10, 20, 20}, {20, 20, 10, 12}, {20, 20, 12, 10}};
    m.thp = "always";
    m.numa_balancing = 1;
    const std::string text = m.to_string();
    EXPECT_EQ(text,
              "nodes=4 sockets=2 cores-per-node=3 threads-per-core=2 mem-per-node=1G thp=always numa-balancing=1 "
              "distances=10,12,20,20;12,10,20,20;20,20,10,12;20,20,12,10");
    EXPECT_EQ(ccnuma::emulated_machine::parse(text), m);
    EXPECT_EQ(ccnuma::emulated_machine::parse(text).to_string(), text);
    // Missing keys keep their defaults, and "sockets=N" equals the default of one per node.
    EXPECT_EQ(ccnuma::emulated_machine::parse("  nodes=2\n"), ccnuma::emulated_machine{});
    EXPECT_EQ(ccnuma::emulated_machine::parse("sockets=2"), ccnuma::emulated_machine{});
}

TEST(Shape, ParseErrorsPointAtTheToken) {
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse("nodes=2 colour=blue"); })
                  .find("unknown key \"colour\" at position 8"),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse("nodes=2 fast"); })
                  .find("token \"fast\" at position 8 is not key=value"),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse("nodes=two"); }).find("nodes=\"two\" is not a whole number"),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse("nodes=0"); }).find("nodes 0 is not possible"),
              std::string::npos);
}

TEST(Shape, ImpossibleMachinesAreRejectedWithTheValidRange) {
    auto expect_rejected = [](auto change, const std::string& fragment) {
        ccnuma::emulated_machine m;
        change(m);
        const std::string msg = message_of([&] { m.validate(); });
        EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
        EXPECT_EQ(msg.rfind("ccnuma: emulated machine: ", 0), 0u) << msg;
    };
    expect_rejected([](auto& m) { m.nodes = 0; }, "nodes 0 is not possible (expected 1..64)");
    expect_rejected([](auto& m) { m.nodes = 65; }, "nodes 65 is not possible (expected 1..64)");
    expect_rejected([](auto& m) { m.cores_per_node = 0; }, "cores-per-node 0 is not possible (expected at least 1)");
    expect_rejected([](auto& m) { m.threads_per_core = 9; }, "threads-per-core 9 is not possible (expected 1..8)");
    expect_rejected([](auto& m) { m.cores_per_node = 128; }, "CPU count 256 (2 nodes x 128 cores x 1 threads)");
    expect_rejected([](auto& m) { m.nodes = 3; m.sockets = 2; }, "sockets 2 is not possible (expected a divisor of 3");
    expect_rejected([](auto& m) { m.sockets = 8; m.cores_per_node = 2; }, "sockets 8 is not possible");
    expect_rejected([](auto& m) { m.mem_per_node = 32u << 20; }, "mem-per-node 32M is not possible (expected at least 64M");
    expect_rejected([](auto& m) { m.mem_per_node = 65u << 20; }, "mem-per-node 65M is not possible");
    expect_rejected([](auto& m) { m.distances = {{10, 20}}; }, "distance matrix with 1 rows is not possible (expected 2 rows");
    expect_rejected([](auto& m) { m.distances = {{10, 20}, {20}}; }, "distance row 1 with 1 entries");
    expect_rejected([](auto& m) { m.distances = {{11, 20}, {20, 10}}; }, "distance 0->0 11 is not possible (expected 10");
    expect_rejected([](auto& m) { m.distances = {{10, 10}, {20, 10}}; }, "distance 0->1 10 is not possible (expected 11..254");
    expect_rejected([](auto& m) { m.distances = {{10, 255}, {20, 10}}; }, "distance 0->1 255");
    expect_rejected([](auto& m) { m.thp = "sometimes"; }, "thp \"sometimes\" is not possible");
    expect_rejected([](auto& m) { m.numa_balancing = 2; }, "numa-balancing 2 is not possible (expected 0 or 1)");
}

TEST(Shape, SocketsMayDivideOrMultiplyTheNodes) {
    ccnuma::emulated_machine snc;  // sub-NUMA clustering: one package, two nodes
    snc.sockets = 1;
    EXPECT_NO_THROW(snc.validate());
    ccnuma::emulated_machine wide;  // a node spanning two packages of one core each
    wide.sockets = 4;
    EXPECT_NO_THROW(wide.validate());
    EXPECT_EQ(wide.effective_sockets(), 4u);
}

TEST(Distances, ParseRowsAndPointAtSyntaxErrors) {
    EXPECT_EQ(ccnuma::emulated_machine::parse_distances("10,20;20,10"),
              (std::vector<std::vector<unsigned>>{{10, 20}, {20, 10}}));
    EXPECT_EQ(ccnuma::emulated_machine::parse_distances("10"), (std::vector<std::vector<unsigned>>{{10}}));
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_distances("10,,20"); })
                  .find("expected a number, found \"\" at position 3"),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_distances("10,20;"); }).find("at position 6"),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_distances(""); }).find("empty"), std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_distances("10;x"); }).find("found \"x\" at position 3"),
              std::string::npos);
}

// Issue 26: CPU-less memory nodes (--memory-node), numbered after the CPU nodes.
TEST(Issue26, MemoryNodesParseWithDefaultsAndPointAtTheBadField) {
    const ccnuma::memory_node d = ccnuma::emulated_machine::parse_memory_node("1G");
    EXPECT_EQ(d.size, 1ull << 30);
    EXPECT_EQ(d.near, 0u);
    EXPECT_EQ(d.bandwidth, 0.5);  // "a CXL expander"
    EXPECT_EQ(d.latency, 2.0);
    const ccnuma::memory_node m = ccnuma::emulated_machine::parse_memory_node("256M,latency=3,near=1,bandwidth=0.25");
    EXPECT_EQ(m, (ccnuma::memory_node{256ull << 20, 1, 0.25, 3.0}));
    auto expect_bad = [](const char* text, const std::string& fragment) {
        const std::string msg = message_of([&] { ccnuma::emulated_machine::parse_memory_node(text); });
        EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
        EXPECT_NE(msg.find("expected SIZE[,near=SOCKET][,bandwidth=RATIO][,latency=RATIO]"), std::string::npos) << msg;
    };
    expect_bad("512M,speed=2", "bad memory node \"512M,speed=2\": unknown key \"speed\" at position 5");
    expect_bad("512M,near", "\"near\" is not key=value at position 5");
    expect_bad("512M,near=one", "near=\"one\" is not a socket number at position 10");
    expect_bad("512M,near=-1", "near=\"-1\" is not a socket number");
    expect_bad("512M,bandwidth=half", "bandwidth=\"half\" is not a number at position 15");
    expect_bad("512M,latency=", "latency=\"\" is not a number");
    expect_bad("512M,latency=2x", "latency=\"2x\" is not a number");
    expect_bad("near=0", "the size comes first, found \"near=0\" at position 0");
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_memory_node("1.5G"); }).find("bad memory node size \"1.5G\""),
              std::string::npos);
}

TEST(Issue26, MemoryNodesRoundTripAndCountInTheTotal) {
    ccnuma::emulated_machine m;
    m.mem_per_node = 256ull << 20;
    m.memory_nodes = {{512ull << 20, 0, 0.5, 2}, {1ull << 30, 1, 0.3, 2.5}};
    EXPECT_NO_THROW(m.validate());
    EXPECT_EQ(m.all_nodes(), 4u);
    EXPECT_EQ(m.total_memory(), (512ull << 20) + (1536ull << 20));
    const std::string text = m.to_string();
    EXPECT_EQ(text, "nodes=2 sockets=2 cores-per-node=2 threads-per-core=1 mem-per-node=256M thp=madvise "
                    "numa-balancing=0 memory-node=512M,near=0,bandwidth=0.5,latency=2 "
                    "memory-node=1G,near=1,bandwidth=0.3,latency=2.5");
    EXPECT_EQ(ccnuma::emulated_machine::parse(text), m);
    EXPECT_EQ(ccnuma::emulated_machine::parse(text).to_string(), text);
    // A shape without memory nodes prints and parses as before them.
    EXPECT_EQ(ccnuma::emulated_machine{}.to_string().find("memory-node"), std::string::npos);
    EXPECT_NE(ccnuma::emulated_machine::parse("memory-node=512M"), ccnuma::emulated_machine{});
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse("memory-node=512M,near=x"); })
                  .find("bad memory node \"512M,near=x\""),
              std::string::npos);
}

TEST(Issue26, ImpossibleMemoryNodesAreRejectedWithTheValidRange) {
    auto expect_rejected = [](auto change, const std::string& fragment) {
        ccnuma::emulated_machine m;
        m.memory_nodes.push_back({});
        change(m);
        const std::string msg = message_of([&] { m.validate(); });
        EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
        EXPECT_EQ(msg.rfind("ccnuma: emulated machine: ", 0), 0u) << msg;
    };
    expect_rejected([](auto& m) { m.memory_nodes[0].size = 32u << 20; },
                    "memory node 2 size 32M is not possible (expected at least 64M, in whole multiples of 2M)");
    expect_rejected([](auto& m) { m.memory_nodes[0].size = 65u << 20; }, "memory node 2 size 65M is not possible");
    expect_rejected([](auto& m) { m.memory_nodes[0].size = 1ull << 40; },
                    "memory node 2 size 1T is not possible (expected at most 1T of memory in all");
    expect_rejected([](auto& m) { m.memory_nodes[0].near = 2; },
                    "memory node 2 near socket 2 is not possible (expected a socket of 0..1)");
    expect_rejected([](auto& m) { m.sockets = 1; m.memory_nodes[0].near = 1; }, "(expected a socket of 0..0)");
    expect_rejected([](auto& m) { m.memory_nodes[0].bandwidth = 0; },
                    "memory node 2 bandwidth 0 is not possible (expected a fraction of local DRAM's in [0.01, 1]");
    expect_rejected([](auto& m) { m.memory_nodes[0].bandwidth = 1.5; }, "bandwidth 1.5 is not possible");
    expect_rejected([](auto& m) { m.memory_nodes[0].bandwidth = -0.5; }, "bandwidth -0.5 is not possible");
    expect_rejected([](auto& m) { m.memory_nodes[0].bandwidth = std::nan(""); }, "bandwidth nan is not possible");
    expect_rejected([](auto& m) { m.memory_nodes[0].latency = 0.5; },
                    "memory node 2 latency 0.5 is not possible (expected a multiple of local DRAM's in [1, 10]");
    expect_rejected([](auto& m) { m.memory_nodes[0].latency = HUGE_VAL; }, "latency inf is not possible");
    expect_rejected([](auto& m) { m.memory_nodes.resize(2); m.memory_nodes[1].latency = 11; }, "memory node 3 latency 11");
    expect_rejected([](auto& m) { m.nodes = 60; m.cores_per_node = 1; m.mem_per_node = 64u << 20; m.memory_nodes.resize(5); },
                    "node count 65 (60 nodes and 5 memory nodes) is not possible (expected at most 64 in all)");
    // With memory nodes, --distances covers them too.
    expect_rejected([](auto& m) { m.distances = {{10, 20}, {20, 10}}; },
                    "distance matrix with 2 rows is not possible (expected 3 (2 nodes and 1 memory nodes) rows");
    ccnuma::emulated_machine ok;
    ok.memory_nodes = {{64ull << 20, 1, 0.01, 10}, {64ull << 20, 0, 1, 1}};
    ok.distances = {{10, 20, 30, 11}, {20, 10, 11, 30}, {30, 11, 10, 30}, {11, 30, 30, 10}};
    EXPECT_NO_THROW(ok.validate());
}

// The SLIT the guest sees: a memory node is as far as its initiator, times its latency ratio.
// Per-size THP (mTHP): "64K:always" round-trips through the shape's text, in order, and
// a size or mode the guest kernel cannot take is refused before any boot.
TEST(ThpSizes, RoundTripAndRejectWhatNoKernelHas) {
    ccnuma::emulated_machine m;
    m.thp_sizes = {{64u << 10, "always"}, {16u << 10, "inherit"}};
    EXPECT_NO_THROW(m.validate());
    const std::string text = m.to_string();
    EXPECT_NE(text.find(" thp-size=64K:always thp-size=16K:inherit"), std::string::npos) << text;
    EXPECT_EQ(ccnuma::emulated_machine::parse(text), m);
    EXPECT_EQ(ccnuma::emulated_machine::parse(text).to_string(), text);
    EXPECT_EQ(ccnuma::emulated_machine{}.to_string().find("thp-size"), std::string::npos);
    const auto one = ccnuma::emulated_machine::parse_thp_size("1M:madvise");
    EXPECT_EQ(one.size, 1u << 20);
    EXPECT_EQ(one.mode, "madvise");
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_thp_size("64K"); }).find("bad thp-size \"64K\": expected SIZE:MODE"),
              std::string::npos);
    EXPECT_NE(message_of([] { ccnuma::emulated_machine::parse_thp_size("64Q:always"); }).find("bad thp-size \"64Q\""),
              std::string::npos);
    auto rejected = [](ccnuma::thp_size_mode t) {
        ccnuma::emulated_machine bad;
        bad.thp_sizes = {std::move(t)};
        return message_of([&] { bad.validate(); });
    };
    EXPECT_NE(rejected({2u << 20, "always"}).find("thp-size 2M is not possible (expected a power of two from 16K to 1M)"),
              std::string::npos);
    EXPECT_NE(rejected({8u << 10, "always"}).find("thp-size 8K is not possible"), std::string::npos);
    EXPECT_NE(rejected({96u << 10, "always"}).find("thp-size 96K is not possible"), std::string::npos);
    EXPECT_NE(rejected({64u << 10, "sometimes"})
                  .find("thp-size 64K mode \"sometimes\" is not possible (expected always, inherit, madvise or never)"),
              std::string::npos);
    // A mode is written into the guest's boot script: nothing but the four words gets there.
    EXPECT_NE(rejected({64u << 10, "always; reboot"}).find("is not possible"), std::string::npos);
}

TEST(Issue26, DistanceMatrixDerivesTheMemoryNodesFromTheirLatency) {
    ccnuma::emulated_machine m;
    EXPECT_TRUE(m.distance_matrix().empty());  // QEMU's default, as before memory nodes
    m.memory_nodes = {{512ull << 20, 0, 0.5, 2}, {512ull << 20, 1, 0.5, 2}};
    EXPECT_EQ(m.distance_matrix(),
              (std::vector<std::vector<unsigned>>{{10, 20, 20, 40}, {20, 10, 40, 20}, {20, 40, 10, 40}, {40, 20, 40, 10}}));
    // Latency 1 is DRAM's, but a different node is never at distance 10; the larger ratio counts.
    m.memory_nodes = {{512ull << 20, 1, 1, 1}, {512ull << 20, 1, 0.5, 1.26}};
    EXPECT_EQ(m.distance_matrix(),
              (std::vector<std::vector<unsigned>>{{10, 20, 20, 25}, {20, 10, 11, 13}, {20, 11, 10, 13}, {25, 13, 13, 10}}));
    // Given distances are the SLIT as they are.
    m.distances = {{10, 20, 30, 11}, {20, 10, 11, 30}, {30, 11, 10, 30}, {11, 30, 30, 10}};
    EXPECT_EQ(m.distance_matrix(), m.distances);
}

TEST(Issue26, MemoryNearASocketHangsOffTheSocketsFirstNode) {
    ccnuma::emulated_machine snc;  // sub-NUMA clustering: two packages of two nodes each
    snc.nodes = 4;
    snc.sockets = 2;
    EXPECT_EQ(snc.first_node_of_socket(0), 0u);
    EXPECT_EQ(snc.first_node_of_socket(1), 2u);
    ccnuma::emulated_machine wide;  // a node spanning two packages
    wide.sockets = 4;
    EXPECT_EQ(wide.first_node_of_socket(1), 0u);
    EXPECT_EQ(wide.first_node_of_socket(3), 1u);
    const ccnuma::emulated_machine plain;
    EXPECT_EQ(plain.first_node_of_socket(1), 1u);
}

TEST(Current, IsEmptyOnTheHost) {
    // The host never has /etc/ccnuma-vm; inside a guest, tests/vm checks the other direction.
    ASSERT_FALSE(std::filesystem::exists("/etc/ccnuma-vm"));
    EXPECT_FALSE(ccnuma::emulated_machine::current().has_value());
}

// Issue 17, item 7: --nodes 4 --mem-per-node 8388608T wrapped to 0 bytes in total, passed the
// host-memory check, and QEMU failed after boot (rc 125).
TEST(Issue17, TotalMemoryThatOverflowsOrExceedsTheGuestIsRejected) {
    ccnuma::emulated_machine m;
    m.nodes = 4;
    m.mem_per_node = ccnuma::parse_size("8388608T", "--mem-per-node");
    EXPECT_EQ(message_of([&] { m.validate(); }),
              "ccnuma: emulated machine: memory 4 nodes x 8388608T is not possible (expected at most 1T in all, the "
              "emulated CPU's 40 physical address bits)");
    m.mem_per_node = std::uint64_t{512} << 30;
    m.nodes = 3;
    EXPECT_NE(message_of([&] { m.validate(); }).find("memory 3 nodes x 512G is not possible"), std::string::npos);
    m.nodes = 2;
    EXPECT_NO_THROW(m.validate());  // exactly 1T
}

}  // namespace
