// libccnuma-ompt.so, loaded by LLVM's libomp through OMP_TOOL_LIBRARIES: every thread of every
// one of repeated (nested) parallel regions runs on the PU its plan gives it, in a program that
// binds nothing itself (binding_probe). The plan to compare with comes from ccnuma-run
// --print-plan --json on the same machine; the probe reports from inside the threads.
// OmptTool.* run on this machine; VmOmpt.* boot a 2-node x 2-core emulated machine.

#include "../support/json.hpp"
#include "../support/run.hpp"

#include <ccnuma/topology.hpp>

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using test_support::json;
using test_support::quote;
using test_support::result;
using test_support::run;

const std::string tool = CCNUMA_OMPT_TOOL;
const std::string probe = BINDING_PROBE;
const std::string run_tool = CCNUMA_RUN;
const std::string vm = CCNUMA_VM;

struct sample {
    std::string path;
    int cpu;
    std::string mask;
};

// binding_probe's lines: "path cpu mask", one per innermost thread and repetition.
std::vector<sample> samples(const std::string& out) {
    std::vector<sample> v;
    std::istringstream in(out);
    sample s;
    while (in >> s.path >> s.cpu >> s.mask) v.push_back(s);
    return v;
}

// path "i,j" -> PU, from ccnuma-run --print-plan --json.
std::map<std::string, int> plan_pus(const std::string& plan_json) {
    std::map<std::string, int> m;
    const json plan = json::parse(plan_json);
    for (const json& t : plan["threads"].items()) {
        std::string path;
        for (long long i : t["path"].integers()) path += (path.empty() ? "" : ",") + std::to_string(i);
        m[path] = static_cast<int>(t["pu"].integer());
    }
    return m;
}

// OMP_NUM_THREADS for the plan's team sizes ("4,2"): the program opens the planned teams, the
// tool only binds them.
std::string team_sizes(const std::string& spec) {
    std::string sizes;
    std::istringstream in(spec);
    std::string item;
    for (int i = 0; std::getline(in, item, ','); ++i)
        if (i % 2 == 0) sizes += (sizes.empty() ? "" : ",") + item;
    return sizes;
}

std::string environment(const std::string& spec, bool with_tool) {
    return "OMP_TOOL_LIBRARIES=" + (with_tool ? tool : std::string()) + " CCNUMA_OMPT_VERBOSE=1 CCNUMA_BIND=" + spec +
           " OMP_NUM_THREADS=" + team_sizes(spec) + " ";
}

// Every sample on its planned PU, alone in its mask; every planned thread seen in every repetition.
void expect_on_plan(const std::vector<sample>& got, const std::map<std::string, int>& plan, int repetitions,
                    const std::string& context) {
    SCOPED_TRACE(context);
    ASSERT_FALSE(plan.empty());
    EXPECT_EQ(got.size(), plan.size() * static_cast<std::size_t>(repetitions));
    std::map<std::string, int> seen;
    for (const sample& s : got) {
        ASSERT_TRUE(plan.count(s.path)) << "thread (" << s.path << ") is not in the plan";
        const int pu = plan.at(s.path);
        EXPECT_EQ(s.cpu, pu) << "thread (" << s.path << ") runs on CPU " << s.cpu;
        EXPECT_EQ(s.mask, std::to_string(pu)) << "thread (" << s.path << ") is not bound to PU " << pu;
        ++seen[s.path];
    }
    for (const auto& [path, pu] : plan) EXPECT_EQ(seen[path], repetitions) << "thread (" << path << ") on PU " << pu;
}

// How many samples the runtime left somewhere else than the plan says.
std::size_t off_plan(const std::vector<sample>& got, const std::map<std::string, int>& plan) {
    std::size_t n = 0;
    for (const sample& s : got)
        if (!plan.count(s.path) || s.mask != std::to_string(plan.at(s.path))) ++n;
    return n;
}

std::map<std::string, int> host_plan(const std::string& spec) {
    const result r = run(run_tool + " --bind " + spec + " --print-plan --json");
    EXPECT_EQ(r.status, 0) << r.err;
    return r.status == 0 ? plan_pus(r.out) : std::map<std::string, int>{};
}

std::size_t allowed_pus() { return ccnuma::topology::current().pus().size(); }

TEST(OmptTool, BindsEveryThreadOfRepeatedRegionsToItsPlannedPu) {
    ASSERT_GE(allowed_pus(), 2u) << "this test needs two allowed PUs";
    for (const std::string spec : {"2,compact", "2,scatter", "1,scatter,2,subcompact", "2,scatter,1,subcompact"}) {
        const result r = run(environment(spec, true) + probe + " 5");
        ASSERT_EQ(r.status, 0) << r.err;
        expect_on_plan(samples(r.out), host_plan(spec), 5, spec);
        EXPECT_NE(r.err.find("0 failed"), std::string::npos) << r.err;
    }
}

TEST(OmptTool, APooledThreadBackInItsPlaceCostsNoSystemCall) {
    ASSERT_GE(allowed_pus(), 2u) << "this test needs two allowed PUs";
    // One team of 2, ten regions: libomp reuses its worker, so each thread is bound once and
    // found in place 9 times.
    const result r = run(environment("2,compact", true) + probe + " 10");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("plan \"2,compact\": 2 bindings, 18 already in place, 0 outside the plan, 0 failed"),
              std::string::npos)
        << r.err;
}

TEST(OmptTool, WithoutTheToolTheThreadsAreNotWhereThePlanPutsThem) {
    // With two or more allowed PUs and no OMP_PROC_BIND, an unbound thread's mask is the whole
    // allowed set, which no planned thread has: the probe can tell bound from unbound.
    ASSERT_GE(allowed_pus(), 2u) << "with one allowed PU bound and unbound threads cannot be told apart";
    for (const std::string spec : {"2,compact", "1,scatter,2,subcompact"}) {
        const result r = run(environment(spec, false) + probe + " 3");
        ASSERT_EQ(r.status, 0) << r.err;
        const auto got = samples(r.out);
        EXPECT_EQ(off_plan(got, host_plan(spec)), got.size()) << spec << "\n" << r.out;
        EXPECT_EQ(r.err.find("ccnuma-ompt"), std::string::npos) << "the tool was loaded: " << r.err;
    }
}

TEST(OmptTool, TeamsBeyondThePlanAreLeftWhereTheyAre) {
    ASSERT_GE(allowed_pus(), 2u) << "this test needs two allowed PUs";
    const result r = run("OMP_TOOL_LIBRARIES=" + tool + " CCNUMA_OMPT_VERBOSE=1 CCNUMA_BIND=1,compact OMP_NUM_THREADS=2 " +
                         probe + " 4");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto pus = host_plan("1,compact");
    std::size_t master = 0, worker = 0;
    for (const sample& s : samples(r.out)) {
        if (s.path == "0") {
            ++master;
            EXPECT_EQ(s.mask, std::to_string(pus.at("0")));
        } else {
            ++worker;
            EXPECT_NE(s.mask, std::to_string(pus.at("0"))) << "thread " << s.path << " was bound although the plan has no place for it";
        }
    }
    EXPECT_EQ(master, 4u);
    EXPECT_EQ(worker, 4u);
    EXPECT_NE(r.err.find("4 outside the plan"), std::string::npos) << r.err;
}

// One line on stderr, and the program runs as if no tool were loaded: a tool inside the
// runtime's start-up must not take the user's program down.
void expect_inactive(const result& r, const std::string& fragment) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(r.out.empty()) << "the program did not run";
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "stderr must be one line: " << r.err;
    EXPECT_EQ(r.err.rfind("ccnuma-ompt: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

TEST(OmptTool, ABadOrMissingPlanLeavesTheToolInactiveWithOneLine) {
    const std::string load = "OMP_TOOL_LIBRARIES=" + tool + " OMP_NUM_THREADS=2 ";
    expect_inactive(run(load + "CCNUMA_BIND=2,scater " + probe), "unknown strategy \"scater\"");
    expect_inactive(run(load + "CCNUMA_BIND= " + probe), "no binding plan: set CCNUMA_BIND");
    expect_inactive(run(load + "CCNUMA_BIND=100000,compact " + probe), "CCNUMA_BIND");
    expect_inactive(run(load + "CCNUMA_TOPOLOGY='pack:2 core:2 pu:1' CCNUMA_BIND=2,scatter " + probe),
                    "not this machine");
}

// --- the emulated machine: 2 nodes x 2 cores, nested 2,scatter,2,subcompact ----------------

TEST(VmOmpt, NestedTeamsFollowThePlanInEveryRegionOnTwoNodes) {
    const std::string spec = "2,scatter,2,subcompact";
    // One boot: the plan as the guest's ccnuma-run makes it, the probe with the tool, the
    // probe without it.
    const std::string script = run_tool + " --bind " + spec + " --print-plan --json; echo @@; " +
                               environment(spec, true) + probe + " 5; echo @@; " + environment(spec, false) + probe +
                               " 5";
    const result r = run(vm + " --nodes 2 --cores-per-node 2 --copy " + tool + " --copy " + probe + " --copy " +
                         run_tool + " -- /bin/sh -c " + quote(script));
    ASSERT_EQ(r.status, 0) << r.err;
    const auto first = r.out.find("@@\n"), second = r.out.find("@@\n", first + 3);
    ASSERT_NE(second, std::string::npos) << r.out;
    const auto plan = plan_pus(r.out.substr(0, first));
    // Each outer thread on its own node, its inner team on that node's two cores.
    ASSERT_EQ(plan, (std::map<std::string, int>{{"0,0", 0}, {"0,1", 1}, {"1,0", 2}, {"1,1", 3}})) << r.out;
    expect_on_plan(samples(r.out.substr(first + 3, second - first - 3)), plan, 5, "with the tool");
    const auto unbound = samples(r.out.substr(second + 3));
    EXPECT_EQ(unbound.size(), 20u);
    EXPECT_EQ(off_plan(unbound, plan), unbound.size()) << "without the tool\n" << r.out;
}

}  // namespace
