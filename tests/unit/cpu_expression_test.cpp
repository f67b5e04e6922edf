// likwid-pin expressions (cpu_expression.hpp): on this host against likwid-pin itself
// (`likwid-pin -p -c EXPR` prints the CPUs it would pin to), and on synthetic topologies against
// plans worked out by hand from likwid-pin's documented numbering.

#include <ccnuma/cpu_expression.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/topology.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using list = std::vector<unsigned>;

ccnuma::topology load(const std::string& source) {
    ccnuma::topology_options o;
    o.source = source;
    o.use_environment = false;
    return ccnuma::topology::load(o);
}

std::string message(const std::string& expr, const ccnuma::topology& topo) {
    try {
        (void)ccnuma::cpu_expression_pus(expr, topo);
    } catch (const ccnuma::error& e) {
        return e.what();
    }
    return "no error";
}

// Synthetic "pack:2 core:4 pu:2": core c holds PUs 2c and 2c+1; package 1 holds PUs 8-15.
TEST(CpuExpression, DomainsCountPhysicalCoresFirst) {
    const auto t = load("pack:2 core:4 pu:2");
    EXPECT_EQ(ccnuma::cpu_expression_pus("N:0-3", t), (list{0, 2, 4, 6}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("N:8-9", t), (list{1, 3}));  // the SMT siblings come after the 8 cores
    EXPECT_EQ(ccnuma::cpu_expression_pus("S1:0-1", t), (list{8, 10}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("S1:4", t), (list{9}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("S0:0-1@S1:0-1", t), (list{0, 2, 8, 10}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("S1:1,0", t), (list{10, 8}));  // the order written
    EXPECT_EQ(ccnuma::cpu_expression_pus("3,1", t), (list{3, 1}));       // plain lists: OS indexes
}

TEST(CpuExpression, ExpressionsTakeHardwareThreadOrder) {
    const auto t = load("pack:2 core:4 pu:2");
    EXPECT_EQ(ccnuma::cpu_expression_pus("E:N:4", t), (list{0, 1, 2, 3}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("E:N:4:1:2", t), (list{0, 2, 4, 6}));  // one per core
    EXPECT_EQ(ccnuma::cpu_expression_pus("E:S1:4:2:4", t), (list{8, 9, 12, 13}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("E:S0:2@E:S1:2", t), (list{0, 1, 8, 9}));
}

TEST(CpuExpression, ScatterGoesRoundRobinOverDomains) {
    EXPECT_EQ(ccnuma::cpu_expression_pus("S:scatter", load("pack:2 core:4 pu:2")),
              (list{0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15}));
    const auto numa = load("pack:2 numa:2 core:2 pu:2");
    EXPECT_EQ(ccnuma::cpu_expression_pus("M:scatter", numa),
              (list{0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("M1:0-1", numa), (list{4, 6}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("M3:3", numa), (list{15}));
}

TEST(CpuExpression, CachesAndDies) {
    EXPECT_EQ(ccnuma::cpu_expression_pus("C1:0-1", load("pack:2 l3:2 core:2 pu:2")), (list{4, 6}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("D1:0", load("pack:2 die:2 core:2 pu:2")), (list{4}));
    EXPECT_EQ(ccnuma::cpu_expression_pus("D1:0", load("pack:2 core:2 pu:1")), (list{2}));  // no dies: one per socket
}

TEST(CpuExpression, WhatLikwidPinWouldHaveDone) {
    const auto t = load("pack:2 core:4 pu:2");
    EXPECT_EQ(message("S2:0", t), "ccnuma: likwid-pin expression \"S2:0\" at position 0: likwid-pin would use socket S2, "
                                  "but this process's part of the machine has 2 (S0-S1)");
    EXPECT_EQ(message("S0:0@N:16", t),
              "ccnuma: likwid-pin expression \"S0:0@N:16\" at position 7: likwid-pin would pin a thread to hardware "
              "thread 16 of N (physical cores first), but N has 16 hardware threads this process may use (N:0-15: 0-15)");
    EXPECT_NE(message("E:S0:9", t).find("likwid-pin would pin 9 threads in S0"), std::string::npos);
    EXPECT_NE(message("0,99", t).find("at position 2: likwid-pin would pin a thread to CPU 99, but CPU 99 is not in "
                                      "this process's allowed set {0-15}"),
              std::string::npos);
    EXPECT_EQ(message("S0:x", t), "ccnuma: bad likwid-pin expression \"S0:x\": unexpected character \"x\" at position 3 "
                                  "(expected a CPU list such as 0,2-3, N:0-3, S0:0-1@S1:0-1, E:N:4:1:2 or S:scatter)");
    EXPECT_NE(message("X1:0", t).find("unknown domain \"X1\" (expected N, S<i>, D<i>, C<i> or M<i>) at position 0"),
              std::string::npos);
    EXPECT_NE(message("S0:0@", t).find("empty part at position 5"), std::string::npos);
    // After a list, a multibyte character is quoted whole, as everywhere else (src/scan.hpp).
    EXPECT_NE(message("S0:0\u00e9", t).find("unexpected character \"\u00e9\" at position 4"), std::string::npos)
        << message("S0:0\u00e9", t);
}

TEST(CpuExpression, TellsExpressionsFromLocations) {
    for (const char* yes : {"N:0-3", "S0:1", "M1:0", "E:N:2", "C0:1", "D0:0", "S:scatter", "M:scatter"})
        EXPECT_TRUE(ccnuma::is_cpu_expression(yes)) << yes;
    for (const char* no : {"0-3", "core:0", "numa:1", "node:1", "N0:1", "0x3", ""})
        EXPECT_FALSE(ccnuma::is_cpu_expression(no)) << no;
}

// likwid-pin on this machine: the same CPUs in the same order.
TEST(CpuExpression, SameAsLikwidPinOnThisHost) {
    const std::string likwid_pin = CCNUMA_LIKWID_PIN;
    ASSERT_FALSE(likwid_pin.empty()) << "likwid-pin not found: install Debian's likwid (this test compares with it)";
    ccnuma::topology_options o;
    o.use_environment = false;
    o.use_affinity_mask = false;  // likwid-pin counts the whole machine
    const auto topo = ccnuma::topology::load(o);
    const unsigned n = static_cast<unsigned>(topo.pus().size());
    std::vector<std::string> exprs = {"N:0", "N:0-" + std::to_string(n - 1), "S0:0", "E:N:" + std::to_string(n),
                                      "E:N:1:1:2", "M0:0", "C0:0", "D0:0", "S:scatter", "M:scatter", "0"};
    if (n > 1) exprs.insert(exprs.end(), {"N:1@N:0", "S0:1,0", "M0:1", "E:S0:2", "1,0"});
    for (const auto& e : exprs) {
        FILE* p = popen((likwid_pin + " -p -c '" + e + "' 2>&1").c_str(), "r");
        ASSERT_NE(p, nullptr);
        char buf[4096] = {};
        const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
        pclose(p);
        std::string theirs = got ? buf : "";
        while (!theirs.empty() && (theirs.back() == '\n' || theirs.back() == ' ')) theirs.pop_back();
        std::string ours;
        for (unsigned pu : ccnuma::cpu_expression_pus(e, topo)) ours += (ours.empty() ? "" : ",") + std::to_string(pu);
        EXPECT_EQ(ours, theirs) << e;
    }
}

// Issue 32, item 5: "0-262143" a hundred times (899 characters) took 827 MB: every range was
// expanded in full before any index was checked. Now each range is checked against the machine
// first, and the refusal costs no memory.
long peak_rss_kib() {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return r.ru_maxrss;
}

TEST(CpuExpression, Issue32_5_LongRangesAreCheckedBeforeTheyAreExpanded) {
    const auto t = load("pack:2 core:4 pu:2");
    for (const std::string range : {"0-262143", "S0:0-262143", "N:0-262143"}) {
        std::string expr = range;
        for (int i = 1; i < 100; ++i) expr += range.substr(range.find(':') + 1).insert(0, ",");
        const long before = peak_rss_kib();
        const std::string m = message(expr, t);
        EXPECT_LT(peak_rss_kib() - before, 64 * 1024) << range << ": the peak grew by more than 64 MiB";
        // The message quotes the start of a long expression and gives its length.
        ASSERT_EQ(m.rfind("ccnuma: likwid-pin expression \"" + expr.substr(0, 20), 0), 0u) << m;
        const std::string tail = "\" (" + std::to_string(expr.size()) + " characters) at position ";
        ASSERT_NE(m.find(tail), std::string::npos) << m;
        const std::string rest = m.substr(m.find(tail) + tail.size());
        if (range[0] == '0')
            EXPECT_EQ(rest, "0: likwid-pin would pin a thread to CPU 16, but CPU 16 is not in this process's allowed set "
                            "{0-15}");
        else if (range[0] == 'S')
            EXPECT_EQ(rest.rfind("3: likwid-pin would pin a thread to hardware thread 8 of S0 (physical cores first), "
                                 "but S0 has 8 hardware threads",
                                 0),
                      0u)
                << rest;
        else
            EXPECT_EQ(rest.rfind("2: likwid-pin would pin a thread to hardware thread 16 of N (physical cores first), "
                                 "but N has 16 hardware threads",
                                 0),
                      0u)
                << rest;
    }
}

// Valid ranges repeated are valid, up to 64 threads per allowed PU, the bound of a team; beyond
// it the expression is refused, not expanded.
TEST(CpuExpression, Issue32_5_PinnedThreadsAreBoundedByTheMachine) {
    const auto t = load("pack:2 core:4 pu:2");
    std::string expr = "0-15";
    for (int i = 1; i < 64; ++i) expr += ",0-15";
    EXPECT_EQ(ccnuma::cpu_expression_pus(expr, t).size(), 1024u);
    for (const std::string more : {",0", "@S0:0", "@E:N:1", "@S:scatter"}) {
        const std::string m = message(expr + more, t);
        EXPECT_NE(m.find(": likwid-pin would pin more than 1024 threads, but a team is at most 64 threads per allowed "
                         "PU, and this process may use 16 PUs"),
                  std::string::npos)
            << more << ": " << m;
    }
}

}  // namespace
