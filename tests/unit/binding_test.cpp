// Binding specs and plans on synthetic topologies of the paper's machines (Schmidl et al.,
// IWOMP 2010), plus in-process binding on this machine.

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/binding_stats.hpp>
#include <ccnuma/error.hpp>

#include "../support/load_topology.hpp"

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <string>
#include <thread>
#include <vector>

// Issue 36's rename keeps the old type name for one release (docs/renames.md).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(std::is_same_v<ccnuma::binding_check, ccnuma::binding_report>);
#pragma GCC diagnostic pop

namespace {

std::string machine(const std::string& name) {
    std::ifstream in(std::string(CCNUMA_TOPOLOGY_DIR) + "/" + name + ".synthetic");
    std::string line;
    std::getline(in, line);
    return line;
}

using test_support::load;

std::vector<unsigned> pus_of(const ccnuma::binding_plan& plan) {
    std::vector<unsigned> v;
    for (const auto& t : plan.threads()) v.push_back(t.pu);
    return v;
}

ccnuma::binding_plan plan(const ccnuma::topology& topo, const std::string& spec) {
    return ccnuma::make_plan(topo, ccnuma::binding_spec::parse(spec));
}

// --- spec grammar --------------------------------------------------------------------------

TEST(BindingSpec, ParsesLevelsAndCanonicalText) {
    const auto s = ccnuma::binding_spec::parse("4,scatter,2,subcompact");
    ASSERT_EQ(s.levels().size(), 2u);
    EXPECT_EQ(s.levels()[0], (ccnuma::binding_level{4, ccnuma::strategy::scatter}));
    EXPECT_EQ(s.levels()[1], (ccnuma::binding_level{2, ccnuma::strategy::subcompact}));
    EXPECT_EQ(s.total_threads(), 8u);
    EXPECT_EQ(s.to_string(), "4,scatter,2,subcompact");
    EXPECT_EQ(ccnuma::binding_spec::parse(" 4 , scatter ").to_string(), "4,scatter");
    EXPECT_EQ(ccnuma::binding_spec::parse("1,subscatter").levels()[0].how, ccnuma::strategy::subscatter);
}

struct bad_case {
    std::string spec;
    std::string expected_fragment;
};

class BadSpec : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadSpec, ThrowsInvalidArgumentPointingAtTheToken) {
    const auto& c = GetParam();
    try {
        (void)ccnuma::binding_spec::parse(c.spec);
        FAIL() << "no exception for " << c.spec.size() << "-character spec";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
        const std::string what = e.what();
        EXPECT_NE(what.find(c.expected_fragment), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << "message must be one line: " << what;
        EXPECT_LT(what.size(), 400u) << "message must stay readable";
        EXPECT_EQ(what.rfind("ccnuma: bad binding spec", 0), 0u) << what;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadSpec,
    ::testing::Values(bad_case{"", "empty spec"}, bad_case{"4,", "missing strategy at position 2"},
                      bad_case{"0,scatter", "thread count 0 at position 0 must be at least 1"},
                      bad_case{"-1,compact", "thread count \"-1\" at position 0 is not a positive integer"},
                      bad_case{"4,scater", "unknown strategy \"scater\" at position 2"},
                      bad_case{"4,scatter,", "missing thread count at position 10"},
                      bad_case{"99999999999,compact", "\"99999999999\" at position 0 is too large"},
                      bad_case{std::string("4,sca\0tter", 10), "invalid character \"\\x00\" at position 5"},
                      bad_case{std::string(10240, '4'), "is too large"},
                      bad_case{[] {
                                   std::string s;
                                   while (s.size() < 10240) s += "4,scatter,";
                                   return s;
                               }(),
                               "more than 8 nesting levels"},
                      bad_case{"4", "missing strategy after thread count \"4\" at position 1"},
                      bad_case{"scatter,4", "thread count \"scatter\" at position 0"},
                      bad_case{"256,scatter,256,scatter,256,compact", "more than 1048576 threads"}));

TEST(BindingSpec, EnvironmentAliasOfThePaper) {
    ::unsetenv("CCNUMA_BIND");
    ::setenv("OMP_NESTING_TEAM_SIZE", "4,scatter,2,subcompact", 1);
    EXPECT_EQ(ccnuma::binding_spec::from_environment().to_string(), "4,scatter,2,subcompact");
    ::setenv("CCNUMA_BIND", "2,compact", 1);  // the ccnuma name wins
    EXPECT_EQ(ccnuma::binding_spec::from_environment().to_string(), "2,compact");
    ::setenv("CCNUMA_BIND", "2,compakt", 1);
    try {
        (void)ccnuma::binding_spec::from_environment();
        FAIL();
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("CCNUMA_BIND=\"2,compakt\""), std::string::npos) << e.what();
    }
    ::setenv("CCNUMA_BIND", "", 1);  // empty is unset: the alias applies
    EXPECT_EQ(ccnuma::binding_spec::from_environment().to_string(), "4,scatter,2,subcompact");
    ::unsetenv("CCNUMA_BIND");
    ::unsetenv("OMP_NESTING_TEAM_SIZE");
    EXPECT_TRUE(ccnuma::binding_spec::from_environment().empty());
    ::setenv("CCNUMA_BIND", "", 1);
    EXPECT_TRUE(ccnuma::binding_spec::from_environment().empty());
    ::unsetenv("CCNUMA_BIND");
}

// --- exact plans on the small machines -----------------------------------------------------

using pus = std::vector<unsigned>;

TEST(Plan, TigertonUma4x4) {
    const auto t = load(machine("tigerton"));
    ASSERT_EQ(t.numa_nodes().size(), 1u);
    EXPECT_EQ(pus_of(plan(t, "4,compact")), (pus{0, 1, 2, 3}));
    EXPECT_EQ(pus_of(plan(t, "4,scatter")), (pus{0, 4, 8, 12}));
    EXPECT_EQ(pus_of(plan(t, "4,scatter,4,subscatter")), (pus{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
    EXPECT_EQ(pus_of(plan(t, "4,scatter,4,subcompact")), (pus{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
    // Inner scatter spans the machine: each team spreads over all four packages.
    EXPECT_EQ(pus_of(plan(t, "4,scatter,4,scatter")), (pus{0, 5, 9, 13, 4, 1, 10, 14, 8, 2, 6, 15, 12, 3, 7, 11}));
    // A team of 8 has no room in a 4-core package: it continues compactly after its master.
    EXPECT_EQ(pus_of(plan(t, "2,scatter,8,subcompact")), (pus{0, 1, 2, 3, 5, 6, 7, 8, 4, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(Plan, BarcelonaOneNodePerSocket) {
    const auto t = load(machine("barcelona"));
    ASSERT_EQ(t.numa_nodes().size(), 4u);
    const auto scatter = plan(t, "4,scatter");
    EXPECT_EQ(pus_of(scatter), (pus{0, 4, 8, 12}));
    EXPECT_EQ(scatter.numa_nodes_used(), 4u);
    const auto compact = plan(t, "4,compact");
    EXPECT_EQ(pus_of(compact), (pus{0, 1, 2, 3}));
    EXPECT_EQ(compact.numa_nodes_used(), 1u);
    const auto sub = plan(t, "4,scatter,4,subscatter");
    for (const auto& th : sub.threads()) EXPECT_EQ(static_cast<unsigned>(th.numa), th.path[0]) << th.pu;
    EXPECT_EQ(pus_of(plan(t, "4,scatter,4,scatter")), (pus{0, 5, 9, 13, 4, 1, 10, 14, 8, 2, 6, 15, 12, 3, 7, 11}));
}

TEST(Plan, ScaleMpThirteenBoards) {
    const auto t = load(machine("scalemp"));
    ASSERT_EQ(t.numa_nodes().size(), 13u);
    ASSERT_EQ(t.packages().size(), 26u);
    // The board (NUMA node) is wider than the package, so scatter crosses boards first.
    EXPECT_EQ(pus_of(plan(t, "4,scatter")), (pus{0, 8, 16, 24}));
    EXPECT_EQ(plan(t, "13,scatter").numa_nodes_used(), 13u);
    EXPECT_EQ(pus_of(plan(t, "4,scatter,4,subscatter")), (pus{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27}));
    EXPECT_EQ(pus_of(plan(t, "2,scatter,8,subcompact")), (pus{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(Plan, ModernTwoPackagesFourNodesSmt) {
    const auto t = load(machine("modern"));
    ASSERT_EQ(t.numa_nodes().size(), 8u);
    ASSERT_EQ(t.max_threads_per_core(), 2u);
    // One thread per core before any SMT sibling: PUs 0,2,4,6 are the first PUs of cores 0-3.
    EXPECT_EQ(pus_of(plan(t, "4,compact")), (pus{0, 2, 4, 6}));
    EXPECT_EQ(pus_of(plan(t, "4,scatter")), (pus{0, 64, 16, 80}));
    const auto c32 = plan(t, "64,compact");
    for (const auto& th : c32.threads()) EXPECT_EQ(th.pu % 2, 0u) << "an SMT sibling used before every core had a thread";
    const auto c72 = plan(t, "72,compact");
    EXPECT_EQ(c72.threads()[64].pu, 1u) << "siblings follow once every core carries a thread";
    EXPECT_EQ(pus_of(plan(t, "2,scatter,8,subcompact")),
              (pus{0, 2, 4, 6, 8, 10, 12, 14, 64, 66, 68, 70, 72, 74, 76, 78}));
}

// --- invariants for every machine and spec --------------------------------------------------

struct invariant_case {
    std::string machine;
    std::string spec;
};

class PlanInvariants : public ::testing::TestWithParam<invariant_case> {};

TEST_P(PlanInvariants, DistinctPusNodesAndSubTeamsOnTheMastersNode) {
    const auto& c = GetParam();
    const auto t = load(machine(c.machine));
    const auto spec = ccnuma::binding_spec::parse(c.spec);
    const auto p = ccnuma::make_plan(t, spec);
    ASSERT_EQ(p.size(), spec.total_threads());
    EXPECT_FALSE(p.oversubscribed());

    std::set<unsigned> distinct;
    for (const auto& th : p.threads()) {
        EXPECT_TRUE(distinct.insert(th.pu).second) << "PU " << th.pu << " used twice";
        const auto& info = t.pu(th.pu);
        EXPECT_EQ(th.core, info.core);
        EXPECT_EQ(th.numa, info.numa);
        EXPECT_EQ(th.package, info.package);
        EXPECT_EQ(&p.at(th.path), &th);
    }

    // Outer level: scatter uses as many NUMA nodes as possible, compact as few.
    const auto& outer = spec.levels()[0];
    std::set<int> outer_nodes;
    for (unsigned i = 0; i < outer.threads; ++i) outer_nodes.insert(p.at(std::vector<unsigned>{i}).numa);
    const std::size_t nodes = t.numa_nodes().size();
    if (outer.how == ccnuma::strategy::scatter) {
        EXPECT_EQ(outer_nodes.size(), std::min<std::size_t>(nodes, outer.threads));
    }
    if (outer.how == ccnuma::strategy::compact) {
        const std::size_t cores_per_node = t.cores().size() / nodes;
        EXPECT_EQ(outer_nodes.size(), (outer.threads + cores_per_node - 1) / cores_per_node);
    }

    // Inner sub* teams that fit in a node stay on their master's node.
    if (spec.levels().size() == 2) {
        const auto& inner = spec.levels()[1];
        const bool sub = inner.how == ccnuma::strategy::subcompact || inner.how == ccnuma::strategy::subscatter;
        const std::size_t cores_per_node = t.cores().size() / nodes;
        if (sub && inner.threads <= cores_per_node) {
            for (const auto& th : p.threads()) {
                const auto& master = p.at(std::vector<unsigned>{th.path[0]});
                EXPECT_EQ(th.numa, master.numa) << "thread (" << th.path[0] << "," << th.path[1] << ")";
            }
        }
        // The master of each inner team keeps its outer PU.
        for (unsigned i = 0; i < outer.threads; ++i)
            EXPECT_EQ(p.at(std::vector<unsigned>{i, 0}).pu, p.at(std::vector<unsigned>{i}).pu);
    }
}

std::vector<invariant_case> all_cases() {
    std::vector<invariant_case> v;
    for (const char* m : {"tigerton", "barcelona", "scalemp", "modern"})
        for (const char* s : {"4,compact", "4,scatter", "4,scatter,4,subscatter", "4,scatter,4,scatter",
                              "4,scatter,4,subcompact", "2,scatter,8,subcompact"})
            v.push_back({m, s});
    return v;
}

INSTANTIATE_TEST_SUITE_P(PaperMachines, PlanInvariants, ::testing::ValuesIn(all_cases()),
                         [](const auto& test_info) {
                             std::string n = test_info.param.machine + "_" + test_info.param.spec;
                             for (char& ch : n)
                                 if (ch == ',') ch = '_';
                             return n;
                         });

// --- the affinity mask ---------------------------------------------------------------------

TEST(Plan, RestrictedSyntheticMaskUsesAllowedPusOnly) {
    const auto t = load(machine("modern"), "8-15,64-71");  // half of node 0 and half of node 4
    EXPECT_TRUE(t.is_restricted());
    const std::set<unsigned> allowed{8, 9, 10, 11, 12, 13, 14, 15, 64, 65, 66, 67, 68, 69, 70, 71};
    for (const char* s : {"4,compact", "4,scatter", "2,scatter,4,subcompact", "2,scatter,8,scatter", "16,compact"}) {
        const auto p = plan(t, s);
        for (const auto& th : p.threads()) EXPECT_TRUE(allowed.count(th.pu)) << s << ": PU " << th.pu;
    }
    EXPECT_EQ(pus_of(plan(t, "2,scatter")), (pus{8, 64}));
    EXPECT_EQ(pus_of(plan(t, "4,compact")), (pus{8, 10, 12, 14}));
    EXPECT_THROW((void)plan(t, "17,compact"), ccnuma::error);
}

TEST(Plan, MoreThreadsThanPusIsAnErrorUnlessOversubscriptionIsAsked) {
    const auto t = load(machine("barcelona"));
    try {
        (void)plan(t, "4,scatter,8,subcompact");
        FAIL();
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::errc::infeasible);
        EXPECT_NE(std::string(e.what()).find("needs 32 PUs but only 16 are allowed (0-15)"), std::string::npos)
            << e.what();
    }
    const auto p = ccnuma::make_plan(t, ccnuma::binding_spec::parse("4,scatter,8,subcompact"), {.oversubscribe = true});
    EXPECT_TRUE(p.oversubscribed());
    std::map<unsigned, int> per_pu;
    for (const auto& th : p.threads()) ++per_pu[th.pu];
    EXPECT_EQ(per_pu.size(), 16u);
    for (const auto& [pu, n] : per_pu) {
        EXPECT_EQ(n, 2) << "PU " << pu << " carries " << n << " threads";
    }
}

TEST(Plan, LookupPadsOuterPathsAndRejectsOutsiders) {
    const auto p = plan(load(machine("barcelona")), "4,scatter,4,subcompact");
    EXPECT_EQ(p.at(std::vector<unsigned>{2}).pu, 8u);
    EXPECT_EQ(p.at(std::vector<unsigned>{2, 3}).pu, 11u);
    EXPECT_EQ(p.find(std::vector<unsigned>{4}), nullptr);
    EXPECT_EQ(p.find(std::vector<unsigned>{0, 4}), nullptr);
    EXPECT_EQ(p.find(std::vector<unsigned>{0, 1, 1}), nullptr);
    EXPECT_EQ(p.find(std::vector<unsigned>{0, 1, 0})->pu, 1u);
    EXPECT_THROW((void)p.at(std::vector<unsigned>{9}), ccnuma::error);
    EXPECT_EQ(p.team_size(1), 4u);
    EXPECT_EQ(p.team_size(2), 4u);
    EXPECT_EQ(p.team_size(3), 1u);
}

TEST(Plan, JsonSchema) {
    const auto p = plan(load(machine("barcelona")), "2,scatter,2,subcompact");
    EXPECT_EQ(p.to_json(),
              "{\"threads\":[{\"path\":[0,0],\"pu\":0,\"core\":0,\"numa\":0,\"package\":0},"
              "{\"path\":[0,1],\"pu\":1,\"core\":1,\"numa\":0,\"package\":0},"
              "{\"path\":[1,0],\"pu\":4,\"core\":4,\"numa\":1,\"package\":1},"
              "{\"path\":[1,1],\"pu\":5,\"core\":5,\"numa\":1,\"package\":1}]}");
}

TEST(OmpVariables, DepthFirstPlacesWithSpreadAboveTheInnermostLevelAndCloseThere) {
    const auto p = plan(load(machine("barcelona")), "2,scatter,2,subcompact");
    const auto r = ccnuma::to_omp_environment(p);
    std::map<std::string, std::string> env;
    for (const auto& v : r.variables) env[v.name] = v.value;
    EXPECT_EQ(env["OMP_PLACES"], "{0},{1},{4},{5}");
    // close at the innermost level: a team smaller than planned takes the plan's first PUs
    // (vm_binding_2nodes checks that in a real runtime; spread spaced it out).
    EXPECT_EQ(env["OMP_PROC_BIND"], "spread,close");
    EXPECT_EQ(env["OMP_NUM_THREADS"], "2,2");
    EXPECT_EQ(env["OMP_MAX_ACTIVE_LEVELS"], "2");
    EXPECT_EQ(r.level_expressed, (std::vector<bool>{true, true}));
    EXPECT_TRUE(r.notes.empty());
}

TEST(OmpVariables, OneLevelIsCloseAndDeeperPlansSpreadAboveTheInnermost) {
    const auto bind_of = [](const char* spec) {
        for (const auto& v : ccnuma::to_omp_environment(plan(load(machine("barcelona")), spec)).variables)
            if (v.name == "OMP_PROC_BIND") return v.value;
        return std::string("(not set)");
    };
    EXPECT_EQ(bind_of("4,scatter"), "close");
    EXPECT_EQ(bind_of("2,scatter,2,scatter,2,compact"), "spread,spread,close");
}

TEST(OmpVariables, OversubscribedPlansNameTheInProcessCall) {
    const auto p = ccnuma::make_plan(load(machine("barcelona")), ccnuma::binding_spec::parse("32,compact"),
                                     {.oversubscribe = true});
    const auto r = ccnuma::to_omp_environment(p);
    for (const auto& v : r.variables) EXPECT_NE(v.name, "OMP_PLACES");
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("ccnuma::bind_this_thread()"), std::string::npos);
    EXPECT_EQ(r.level_expressed, (std::vector<bool>{false}));
}

// --- real binding on this machine ----------------------------------------------------------

TEST(InProcess, BindThisThreadPutsEveryThreadOnItsPlannedPuAndCaches) {
    const auto& topo = ccnuma::topology::current();
    ASSERT_GE(topo.pus().size(), 2u) << "this test needs two allowed PUs";
    for (const char* spec : {"2,scatter", "2,compact"}) {
        ccnuma::set_nesting_info(spec);
        const auto check = ccnuma::report_binding({.bind_first = true});
        EXPECT_TRUE(check.ok()) << spec << "\n" << check.to_text();
        ASSERT_EQ(check.threads.size(), 2u);

        const auto before = ccnuma::detail::bind_syscalls();
        std::vector<unsigned> first(2), second(2);
#pragma omp parallel num_threads(2)
        {
            const auto me = static_cast<std::size_t>(omp_get_thread_num());
            first[me] = ccnuma::bind_this_thread();
            second[me] = ccnuma::bind_this_thread();
        }
        EXPECT_EQ(first, second);
        EXPECT_EQ(first[0], ccnuma::current_plan().at(std::vector<unsigned>{0}).pu);
        EXPECT_EQ(first[1], ccnuma::current_plan().at(std::vector<unsigned>{1}).pu);
        // report_binding already bound both threads for this plan; a pool thread that got a
        // different path binds once, a repeated call never.
        EXPECT_LE(ccnuma::detail::bind_syscalls() - before, 2u);
        const auto after_first_region = ccnuma::detail::bind_syscalls();
#pragma omp parallel num_threads(2)
        {
            (void)ccnuma::bind_this_thread();
        }
        EXPECT_EQ(ccnuma::detail::bind_syscalls(), after_first_region) << "cached binding made a system call";
    }
}

TEST(InProcess, PathOutsideThePlanThrows) {
    ccnuma::set_nesting_info("1,compact");
    bool threw = false;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
            try {
                (void)ccnuma::bind_this_thread();
            } catch (const ccnuma::error& e) {
                threw = std::string(e.what()).find("thread path (1) is outside binding plan") != std::string::npos;
            }
        }
    }
    EXPECT_TRUE(threw);
}

}  // namespace

namespace {

// Random specs over the grammar's alphabet: every input either parses to a spec that prints back
// to itself or throws ccnuma::error; nothing else escapes (run under ASan+UBSan in CI).
TEST(BindingSpec, RandomInputEitherParsesOrThrowsCcnumaError) {
    const std::string alphabet = "0123456789,- \tcompactscattersub\x01";
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    const auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    const auto topo = load(machine("modern"));
    std::size_t parsed = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string s;
        const std::size_t len = next() % 24;
        for (std::size_t k = 0; k < len; ++k) s += alphabet[next() % alphabet.size()];
        if (i % 3 == 0) {  // mostly well-formed: random levels, sizes and strategies
            static const char* names[] = {"compact", "scatter", "subcompact", "subscatter", "scater", ""};
            s.clear();
            const std::size_t levels = 1 + next() % 3;
            for (std::size_t l = 0; l < levels; ++l)
                s += (l ? "," : "") + std::to_string(next() % 12) + "," + names[next() % 6];
        }
        try {
            const auto spec = ccnuma::binding_spec::parse(s);
            ++parsed;
            EXPECT_EQ(ccnuma::binding_spec::parse(spec.to_string()), spec);
            try {
                const auto p = ccnuma::make_plan(topo, spec);
                EXPECT_EQ(p.size(), spec.total_threads());
            } catch (const ccnuma::error& e) {
                EXPECT_EQ(e.code(), ccnuma::errc::infeasible) << e.what();
            }
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument) << e.what();
        }
    }
    EXPECT_GT(parsed, 0u);
}

// --- real machines: regressions of issue 12 ---------------------------------------------------

std::string real(const std::string& name) { return std::string(CCNUMA_TOPOLOGY_DIR) + "/real/" + name; }

std::map<unsigned, unsigned> per_package(const ccnuma::binding_plan& p) {
    std::map<unsigned, unsigned> m;
    for (const auto& t : p.threads()) ++m[t.package];
    return m;
}

TEST(Binding, Issue12_1_ScatterUsesOnlyNodesWithCpus) {
    const auto t = load(real("16amd64-8n2c-cpusets.xml"));
    const auto p = plan(t, "3,scatter");
    EXPECT_EQ(pus_of(p), (std::vector<unsigned>{2, 5, 6}));
    EXPECT_EQ(p.numa_nodes_used(), 3u);
    const auto off = plan(load(real("linux-offline-cpu0-node0.xml")), "1,scatter");
    EXPECT_EQ(off.threads()[0].numa, 1);
}

TEST(Binding, Issue12_2_NoSmtSiblingWhileCoresAreIdle) {
    const auto hybrid = load(real("linux-20em64t-hybrid-1p6c2t+2ca4co1t.xml"));
    const auto p = plan(hybrid, "14,scatter");
    std::set<unsigned> cores;
    for (const auto& th : p.threads()) cores.insert(th.core);
    EXPECT_EQ(cores.size(), 14u) << "one thread on each of the 6 P-cores and 8 E-cores";
    const auto masked = load(real("24em64t-2n6c2t-pci.xml"), "0-6,8,10,12-18,20,22");
    const auto q = plan(masked, "9,scatter");
    std::set<unsigned> qcores;
    for (const auto& th : q.threads()) qcores.insert(th.core);
    EXPECT_EQ(qcores.size(), 9u);
}

TEST(Binding, Issue12_3_PackagesBalancedUnderGroups) {
    const auto p = plan(load(real("fakeheterodistances.xml")), "4,scatter");
    EXPECT_EQ(per_package(p), (std::map<unsigned, unsigned>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
}

// Issue 12.6 asked compact under a mask to follow the whole machine's order; issue 22 replaced
// that rule: compact follows topology order in the restriction, which is lstopo's core L# in the
// same restriction (lstopo -i FILE --restrict 0x554 -l: PUs 2 and 10 share L2 L#0 in package
// L#0, then PU 6, then package L#1 with PUs 4 and 8).
TEST(Binding, Issue22_CompactUnderAMaskFollowsLstopoOrder) {
    const auto t = load(real("linux-16em64t-4s2ca2c-cpusetreorder.xml"), "2,4,6,8,10");
    std::vector<unsigned> order;
    for (const auto& c : t.cores()) order.push_back(c.pus.front());
    EXPECT_EQ(order, (std::vector<unsigned>{2, 10, 6, 4, 8}));
    EXPECT_EQ(t.pu(4).core, 3u);
    EXPECT_EQ(t.pu(4).package, 1u);
    EXPECT_EQ(pus_of(plan(t, "2,compact")), (std::vector<unsigned>{2, 10}));
    EXPECT_EQ(pus_of(plan(t, "5,compact")), (std::vector<unsigned>{2, 10, 6, 4, 8}));
}

std::vector<unsigned> cores_of(const ccnuma::binding_plan& p) {
    std::vector<unsigned> v;
    for (const auto& t : p.threads()) v.push_back(t.core);
    return v;
}

// Issue 22: package 0 of this dump has no NUMA node (node 0 is offline). Compact begins at the
// first allowed core in topology order whatever its node: core L#0, PU 4.
TEST(Binding, Issue22_CompactStartsAtTheFirstAllowedCore) {
    const auto t = load(real("linux-offline-cpu0-node0.xml"));
    const auto one = plan(t, "1,compact");
    EXPECT_EQ(pus_of(one), (std::vector<unsigned>{4}));
    EXPECT_EQ(one.threads()[0].core, 0u);
    EXPECT_EQ(one.threads()[0].numa, -1);
    std::vector<unsigned> all(17);
    for (unsigned i = 0; i < 17; ++i) all[i] = i;
    EXPECT_EQ(cores_of(plan(t, "17,compact")), all);
}

// Issue 22: 2,scatter,2,scatter put both outer threads on package 1 (the one with memory) while
// package 0 had 9 free PUs.
TEST(Binding, Issue22_ScatterLeavesNoPackageEmptyOnTheOfflineNodeMachine) {
    const auto t = load(real("linux-offline-cpu0-node0.xml"));
    const auto p = plan(t, "2,scatter,2,scatter");
    std::set<unsigned> outer;
    for (unsigned i = 0; i < 2; ++i) outer.insert(p.at(std::vector<unsigned>{i}).package);
    EXPECT_EQ(outer, (std::set<unsigned>{0, 1}));
    EXPECT_EQ(per_package(p), (std::map<unsigned, unsigned>{{0, 2}, {1, 2}}));
    EXPECT_EQ(per_package(plan(t, "2,scatter")), (std::map<unsigned, unsigned>{{0, 1}, {1, 1}}));
    EXPECT_EQ(plan(t, "1,scatter").threads()[0].numa, 1) << "a node with CPUs still wins a tie (issue 12.1)";
}

// Issue 22: on this dump with disallowed PUs, 4,scatter and 5,scatter gave package L#1 two
// threads while packages of two allowed cores got none. Packages (lstopo's L#): 0 {0,1} no
// allowed node, 1 {2,3} node 1, 2 {5} node 2, 3 {6} node 3, 5 {12,13} and 6 {14,15} no node.
TEST(Binding, Issue22_ScatterLeavesNoPackageEmptyUnderDisallowedPus) {
    const auto t = load(real("linux-16amd64-8n2c-cpusets.xml"));
    EXPECT_EQ(pus_of(plan(t, "3,scatter")), (std::vector<unsigned>{2, 5, 6})) << "nodes with CPUs first";
    EXPECT_EQ(pus_of(plan(t, "4,scatter")), (std::vector<unsigned>{2, 5, 6, 0}));
    EXPECT_EQ(pus_of(plan(t, "5,scatter")), (std::vector<unsigned>{2, 5, 6, 0, 12}));
    for (const char* spec : {"4,scatter", "5,scatter", "6,scatter"})
        for (const auto& [package, threads] : per_package(plan(t, spec))) EXPECT_EQ(threads, 1u) << spec;
    // The plan names cores and packages by lstopo's L#: PU 12 is core L#6 of package L#5.
    const auto five = plan(t, "5,scatter");
    const auto& last = five.threads().back();
    EXPECT_EQ(last.core, 6u);
    EXPECT_EQ(last.package, 5u);
}

// Issue 22: cores L#4, L#5 (package 0) and L#6-9 (package 1) are in no NUMA node; 12,compact
// used the second PUs of cores 0 and 1 instead, 12,scatter those of cores 0 and 2. Same under
// every even PU.
TEST(Binding, Issue22_WholeCoresBeforeSmtOnEveryKindOfCore) {
    for (const std::string mask : {"", "0,2,4,6,8,10,12,14,16,18,20,22"}) {
        const auto t = load(real("linux-fakeheterocpunuma.xml"), mask);
        ASSERT_EQ(t.cores().size(), 12u);
        std::vector<unsigned> all(12);
        for (unsigned i = 0; i < 12; ++i) all[i] = i;
        EXPECT_EQ(cores_of(plan(t, "12,compact")), all) << "mask " << mask;
        auto scattered = cores_of(plan(t, "12,scatter"));
        std::sort(scattered.begin(), scattered.end());
        EXPECT_EQ(scattered, all) << "mask " << mask;
        EXPECT_EQ(per_package(plan(t, "12,scatter")), (std::map<unsigned, unsigned>{{0, 6}, {1, 6}})) << mask;
    }
}

// Issue 22: PUs that hwloc places in no package plan as package -1 ("-" in the text table).
TEST(Binding, Issue22_PusInNoPackagePlanWithoutOne) {
    const auto t = load(real("linux-40intel64-4n10c+pci-conflicts.xml"));
    const auto p = plan(t, "4,scatter");
    EXPECT_EQ(p.numa_nodes_used(), 4u);
    EXPECT_EQ(per_package(p), (std::map<unsigned, unsigned>{{0, 1}, {1, 1}, {2, 1}, {ccnuma::no_package, 1}}));
    EXPECT_NE(p.to_json().find("\"package\":-1"), std::string::npos) << p.to_json();
    EXPECT_NE(p.to_text().find("3     -\n"), std::string::npos) << p.to_text();
}

// --- the corpus: every invariant of docs/binding.md on every real machine ----------------------

struct corpus_counts {
    std::size_t topologies = 0, masked = 0, specs = 0, checks = 0;
};

// A check of the corpus: counted, and its message built only when it fails. The corpus makes 14.5
// million checks; building every message eagerly took 41 of the test's 94 s under ASan (its
// allocator and quarantine), and 150 of the asan CI stage's 540 test-seconds went to this test.
#define CORPUS_EXPECT(ok, what)                 \
    do {                                        \
        ++counts_.checks;                       \
        if (!(ok)) ADD_FAILURE() << (what);     \
    } while (0)

class invariant_checker {
public:
    invariant_checker(const ccnuma::topology& t, corpus_counts& counts) : t_(t), counts_(counts) {
        // A PU's node is its local one (pu_info::numa): nodes may overlap (hwloc 1 exports)
        // or nest (memory tiers), and the plan counts threads by the local node.
        std::map<int, std::set<unsigned>> cores_of;
        for (const auto& pu : t.pus())
            if (pu.numa >= 0) cores_of[pu.numa].insert(pu.core);
        for (const auto& [n, c] : cores_of) node_cores_[n] = c.size();
        for (const auto& c : t.cores()) {
            by_index_.push_back(c.logical_index);
            if (c.package != ccnuma::no_package) ++package_cores_[c.package];
        }
        std::sort(by_index_.begin(), by_index_.end());
        check_numbering();
    }
    std::size_t cores() const { return t_.cores().size(); }
    std::size_t nodes_with_cpus() const { return node_cores_.size(); }
    std::size_t min_node_cores() const {
        std::size_t m = ~std::size_t{0};
        for (const auto& [n, c] : node_cores_) m = std::min(m, c);
        return m;
    }

    void check(const std::string& spec, const std::string& context) {
        ++counts_.specs;
        const auto p = plan(t_, spec);
        const auto s = ccnuma::binding_spec::parse(spec);
        const auto why = context + " spec " + spec;
        CORPUS_EXPECT(p.size() == s.total_threads(), why + ": thread count");
        std::set<unsigned> used_pus, cores;
        std::map<int, std::size_t> node_load;
        for (const auto& th : p.threads()) {
            used_pus.insert(th.pu);
            cores.insert(th.core);
            if (th.numa >= 0) ++node_load[th.numa];
        }
        CORPUS_EXPECT(used_pus.size() == p.size(), why + ": distinct PUs");
        // A second PU of a core only when no whole core is free, on every kind of core (issue 22).
        if (p.size() <= cores_())
            CORPUS_EXPECT(cores.size() == p.size(), why + ": an SMT sibling while a core is free");
        const auto& first = s.levels()[0];
        if (first.how == ccnuma::strategy::compact && s.levels().size() == 1 && p.size() <= cores_()) {
            // Compact begins at the first allowed core in topology order and takes whole cores
            // in that order (issue 22).
            CORPUS_EXPECT(p.threads()[0].core == by_index_[0], why + ": compact starts at core " +
                                                            std::to_string(p.threads()[0].core));
            CORPUS_EXPECT(std::equal(cores.begin(), cores.end(), by_index_.begin()), why + ": compact skips a core");
        }
        if (first.how == ccnuma::strategy::scatter && s.levels().size() == 1 && !node_cores_.empty()) {
            CORPUS_EXPECT(node_load.size() == std::min<std::size_t>(p.size(), node_cores_.size()),
                   why + ": NUMA nodes used " + std::to_string(node_load.size()));
            // Water-filling: a node carries two more threads than another only when that one
            // is full (one thread on each of its cores).
            for (const auto& [a, ca] : node_cores_)
                for (const auto& [b, cb] : node_cores_) {
                    const auto la = node_load.count(a) ? node_load[a] : 0;
                    const auto lb = node_load.count(b) ? node_load[b] : 0;
                    if (p.size() <= cores_())
                        CORPUS_EXPECT(la <= lb + 1 || lb == cb, why + ": nodes " + std::to_string(a) + " and " +
                                                             std::to_string(b) + " unbalanced");
                }
        }
        if (first.how == ccnuma::strategy::scatter && s.levels().size() == 1 && p.size() <= cores_() &&
            homogeneous_packages()) {
            std::map<unsigned, std::size_t> package_load;
            for (const auto& th : p.threads()) ++package_load[th.package];
            for (const auto& a : t_.packages())
                for (const auto& b : t_.packages()) {
                    const auto la = package_load[a.logical_index], lb = package_load[b.logical_index];
                    CORPUS_EXPECT(la <= lb + 1 || lb == b.cores, why + ": packages " + std::to_string(a.logical_index) +
                                                              " and " + std::to_string(b.logical_index) + " unbalanced");
                }
        }
        if (first.how == ccnuma::strategy::scatter && first.threads <= cores_()) {
            // The outer team (the masters) of any scatter spec.
            std::vector<unsigned> outer;
            for (unsigned i = 0; i < first.threads; ++i) outer.push_back(p.at(std::vector<unsigned>{i}).package);
            check_package_shares(outer, why);
        }
        if (s.levels().size() == 2 && first.how == ccnuma::strategy::scatter &&
            (s.levels()[1].how == ccnuma::strategy::subcompact || s.levels()[1].how == ccnuma::strategy::subscatter) &&
            s.levels()[1].threads <= min_node_cores() && first.threads <= node_cores_.size()) {
            // Every sub* team on its master's node.
            const auto team = s.levels()[1].threads;
            for (std::size_t i = 0; i < p.size(); ++i)
                CORPUS_EXPECT(p.threads()[i].numa == p.threads()[i - i % team].numa,
                       why + ": thread " + std::to_string(i) + " off its master's node");
        }
    }

    void check_refused(const std::string& spec, const std::string& context) {
        ++counts_.specs;
        try {
            (void)plan(t_, spec);
            CORPUS_EXPECT(false, context + " spec " + spec + " was not refused");
        } catch (const ccnuma::error& e) {
            const std::string msg = e.what();
            CORPUS_EXPECT(msg.find('\n') == std::string::npos && msg.find("needs") != std::string::npos,
                   context + " refusal of " + spec + ": " + msg);
        }
    }

private:
    std::size_t cores_() const { return t_.cores().size(); }
    // Packages are balanced after NUMA nodes; they can be compared where each holds the same
    // number of nodes and cores, and the nodes are of one size (a mask can make them unequal).
    bool homogeneous_packages() const {
        for (const auto& [n, c] : node_cores_)
            if (c != node_cores_.begin()->second) return false;
        const auto& ps = t_.packages();
        for (const auto& p : ps)
            if (p.numa_nodes.size() != ps[0].numa_nodes.size() || p.cores != ps[0].cores) return false;
        return true;
    }

    // Numbering as lstopo's in the same restriction (issue 22): cores L#0..n-1, packages in
    // ascending L#, every PU in the list of the package it names, the count hwloc's.
    void check_numbering() {
        for (std::size_t i = 0; i < by_index_.size(); ++i)
            CORPUS_EXPECT(by_index_[i] == i, t_.description() + ": core L#" + std::to_string(by_index_[i]) + " at " +
                                          std::to_string(i) + ", lstopo renumbers");
        std::size_t listed = 0;
        for (std::size_t i = 0; i < t_.packages().size(); ++i) {
            const auto& pk = t_.packages()[i];
            CORPUS_EXPECT(i == 0 || t_.packages()[i - 1].logical_index < pk.logical_index,
                   t_.description() + ": packages out of order");
            CORPUS_EXPECT(!pk.pus.empty() && pk.cores == package_cores_[pk.logical_index],
                   t_.description() + ": package L#" + std::to_string(pk.logical_index) + " cores");
            for (unsigned pu : pk.pus) {
                ++listed;
                CORPUS_EXPECT(t_.pu(pu).package == pk.logical_index,
                       t_.description() + ": PU " + std::to_string(pu) + " in another package's list");
            }
        }
        std::size_t labelled = 0;
        for (const auto& pu : t_.pus()) labelled += pu.package != ccnuma::no_package;
        CORPUS_EXPECT(listed == labelled, t_.description() + ": a PU labelled with an unlisted package");
    }

    // Scatter never leaves a package without threads while another holds more than its share
    // (issue 22): ceil(threads x its cores / cores), at least 1. NUMA balance comes first, so
    // two packages with different NUMA nodes are compared only where the empty one has none.
    void check_package_shares(const std::vector<unsigned>& packages_of_threads, const std::string& why) {
        std::map<unsigned, std::size_t> load;
        for (const auto& pk : t_.packages()) load[pk.logical_index] = 0;
        for (unsigned pk : packages_of_threads)
            if (pk != ccnuma::no_package) ++load[pk];
        const std::size_t n = packages_of_threads.size();
        for (const auto& a : t_.packages()) {
            if (load[a.logical_index] != 0) continue;
            for (const auto& b : t_.packages()) {
                if (!a.numa_nodes.empty() && a.numa_nodes != b.numa_nodes) continue;
                const std::size_t share = std::max<std::size_t>(1, (n * b.cores + cores_() - 1) / cores_());
                CORPUS_EXPECT(load[b.logical_index] <= share,
                       why + ": package L#" + std::to_string(b.logical_index) + " holds " +
                           std::to_string(load[b.logical_index]) + " (share " + std::to_string(share) +
                           ") while package L#" + std::to_string(a.logical_index) + " is empty");
            }
        }
    }

    const ccnuma::topology& t_;
    corpus_counts& counts_;
    std::map<int, std::size_t> node_cores_;
    std::map<unsigned, std::size_t> package_cores_;
    std::vector<unsigned> by_index_;  // core logical indices, ascending
};

#undef CORPUS_EXPECT

void sweep(const ccnuma::topology& t, const std::string& context, corpus_counts& counts) {
    invariant_checker c(t, counts);
    const std::size_t cores = c.cores();
    for (std::size_t n = 1; n <= cores; ++n) {
        c.check(std::to_string(n) + ",scatter", context);
        c.check(std::to_string(n) + ",compact", context);
    }
    const std::size_t k = std::max<std::size_t>(1, c.nodes_with_cpus());
    const std::size_t m = c.nodes_with_cpus() ? c.min_node_cores() : std::max<std::size_t>(1, cores / k);
    if (m > 1 && k * m <= t.pus().size()) {
        c.check(std::to_string(k) + ",scatter," + std::to_string(m) + ",subcompact", context);
        c.check(std::to_string(k) + ",scatter," + std::to_string(m) + ",subscatter", context);
    }
    for (std::size_t outer = 2; outer <= 4 && outer * 2 <= t.pus().size(); ++outer)
        c.check(std::to_string(outer) + ",scatter,2,scatter", context);
    c.check_refused(std::to_string(t.pus().size() + 1) + ",scatter", context);
    c.check_refused(std::to_string(k) + ",scatter," + std::to_string(t.pus().size() / k + 1) + ",subcompact", context);
}

// The masks of the corpus (issue 22): every even PU, the first 3/4 of the PUs, two NUMA nodes of
// unequal size (all of one, half of the next), every third PU dropped. A mask that keeps fewer
// than two PUs, or all of them, is skipped.
std::vector<std::pair<std::string, std::vector<unsigned>>> corpus_masks(const ccnuma::topology& whole) {
    const auto all = whole.allowed_cpus();
    std::vector<std::pair<std::string, std::vector<unsigned>>> masks;
    const auto add = [&](const std::string& name, std::vector<unsigned> kept) {
        if (kept.size() >= 2 && kept.size() < all.size()) masks.emplace_back(name, std::move(kept));
    };
    std::vector<unsigned> even, first, third;
    for (unsigned pu : all)
        if (pu % 2 == 0) even.push_back(pu);
    add("even", even);
    first.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>((3 * all.size() + 3) / 4));
    add("first 3/4", first);
    std::vector<const ccnuma::numa_node*> nodes;
    for (const auto& n : whole.numa_nodes())
        if (n.cpus.size() > 1) nodes.push_back(&n);
    if (nodes.size() >= 2) {
        std::set<unsigned> two(nodes[0]->cpus.begin(), nodes[0]->cpus.end());
        two.insert(nodes[1]->cpus.begin(), nodes[1]->cpus.begin() + static_cast<std::ptrdiff_t>(nodes[1]->cpus.size() / 2));
        add("two unequal nodes", std::vector<unsigned>(two.begin(), two.end()));
    }
    for (std::size_t i = 0; i < all.size(); ++i)
        if (i % 3 != 1) third.push_back(all[i]);
    add("every third dropped", third);
    return masks;
}

TEST(Binding, Issue12_CorpusOfRealMachinesKeepsEveryInvariant) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(std::string(CCNUMA_TOPOLOGY_DIR) + "/real"))
        if (e.path().extension() == ".xml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 80u);
    corpus_counts counts;
    for (const auto& f : files) {
        const auto whole = load(f.string());
        ++counts.topologies;
        sweep(whole, f.filename().string(), counts);
        for (const auto& [name, kept] : corpus_masks(whole)) {
            const auto mask = ccnuma::format_list(kept);
            ++counts.masked;
            sweep(load(f.string(), mask), f.filename().string() + " mask " + name + " " + mask, counts);
        }
    }
    std::printf("corpus: %zu topologies, %zu masked variants, %zu specs, %zu checks\n", counts.topologies,
                counts.masked, counts.specs, counts.checks);
}

// Issue 17, item 9: (strategy)42 was accepted and printed as "1,?".
TEST(Issue17, OutOfRangeStrategiesAreRefused) {
    try {
        ccnuma::binding_spec spec({{1, static_cast<ccnuma::strategy>(42)}});
        ADD_FAILURE() << "accepted as " << spec.to_string();
    } catch (const ccnuma::error& e) {
        EXPECT_STREQ(e.what(), "ccnuma: binding level with strategy 42 (expected compact, scatter, subcompact or subscatter)");
    }
    EXPECT_EQ(ccnuma::to_string(static_cast<ccnuma::strategy>(42)), "?");
}

// Issue 17, item 8: the documented rule for the environment: empty is unset, blanks are an error.
TEST(Issue17, EmptyEnvironmentSpecIsUnsetAndBlanksAreAnError) {
    ::unsetenv("OMP_NESTING_TEAM_SIZE");
    ::setenv("CCNUMA_BIND", "", 1);
    EXPECT_TRUE(ccnuma::binding_spec::from_environment().empty());
    ::setenv("CCNUMA_BIND", "  ", 1);
    try {
        (void)ccnuma::binding_spec::from_environment();
        ADD_FAILURE() << "blanks accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("bad binding spec CCNUMA_BIND=\"  \": empty spec"), std::string::npos)
            << e.what();
    }
    ::unsetenv("CCNUMA_BIND");
}

// Issue 32, plans on irregular machines: linux-8ia64-2s2c2t restricted to PUs 0-5 leaves
// package 0 two cores (PUs 0-1, 2-3) and package 1 one (PUs 4-5). The outer threads take PUs 0
// and 4, the first inner team the free core's PU 2; then every core carries a thread, and the
// second inner team's thread took PU 1 beside thread (0,0) in package 0 while PU 5, beside its
// own master, was free. In the SMT round a sibling on the team's own core comes first.
TEST(Binding, Issue32_PlansInnerSmtRoundStaysOnItsOwnCores) {
    const auto t = load(real("linux-8ia64-2s2c2t.xml"), "0-5");
    const auto p = plan(t, "2,scatter,2,scatter");
    ASSERT_EQ(p.threads().size(), 4u);
    const unsigned expected[2][2] = {{0, 2}, {4, 5}};
    const unsigned package[2][2] = {{0, 0}, {1, 1}};
    for (unsigned i = 0; i < 2; ++i)
        for (unsigned j = 0; j < 2; ++j) {
            const auto& th = p.at(std::vector<unsigned>{i, j});
            EXPECT_EQ(th.pu, expected[i][j]) << "thread (" << i << "," << j << ")";
            EXPECT_EQ(th.package, package[i][j]) << "thread (" << i << "," << j << ")";
        }
    // Level 1 is one team: its SMT round is unchanged (every core carries one of its threads),
    // and package 1 (one thread on one core) gets the first sibling.
    EXPECT_EQ(pus_of(plan(t, "6,scatter")), (std::vector<unsigned>{0, 4, 2, 5, 1, 3}));
}

}  // namespace

// Issue 36: one pinning call. pin_this_thread(plan, path) pins to the PU the plan gives the
// path, whatever plan is current; a path outside the plan and a PU the kernel refuses leave
// the thread's mask as it was. The mask is read back from the kernel (sched_getaffinity).
namespace {
std::vector<unsigned> kernel_mask() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
    std::vector<unsigned> cpus;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}
}  // namespace

TEST(Issue36, PinThisThreadTakesThePlansPuAndLeavesOtherThreadsAlone) {
    const auto allowed = kernel_mask();
    ASSERT_GE(allowed.size(), 2u) << "this test needs two allowed PUs";
    const auto plan = ccnuma::make_plan(ccnuma::topology::current(), ccnuma::binding_spec::parse("2,scatter"));
    for (unsigned t = 0; t < 2; ++t) {
        std::vector<unsigned> after_pin, after_outside, after_refused;
        std::optional<unsigned> pinned, outside;
        int refused = 0;
        std::thread([&] {
            const unsigned path[] = {t};
            pinned = ccnuma::pin_this_thread(plan, path);
            after_pin = kernel_mask();
            const unsigned beyond[] = {7};
            outside = ccnuma::pin_this_thread(plan, beyond);
            after_outside = kernel_mask();
            refused = ccnuma::pin_this_thread(100000u);  // no machine has it (Linux: at most 8192 CPUs)
            after_refused = kernel_mask();
        }).join();
        ASSERT_TRUE(pinned.has_value());
        EXPECT_EQ(*pinned, plan.at(std::vector<unsigned>{t}).pu);
        EXPECT_EQ(after_pin, std::vector<unsigned>{*pinned});
        EXPECT_FALSE(outside.has_value());
        EXPECT_EQ(after_outside, after_pin);
        EXPECT_NE(refused, 0);
        EXPECT_EQ(after_refused, after_pin);
    }
    EXPECT_EQ(kernel_mask(), allowed) << "the test's own thread kept its mask";
}
