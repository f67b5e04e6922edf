// The command line tools: golden output on synthetic topologies, one-line errors for bad input
// (never a crash), and real binding on this machine checked inside the threads.

#include <ccnuma/binding.hpp>
#include <ccnuma/memory_policy.hpp>
#include <ccnuma/system.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/version.hpp>

#include "../support/pagemap.hpp"
#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>


namespace {

using test_support::expect_one_line_error;
using test_support::quote;
using test_support::result;
using test_support::slurp;

std::string topologies() { return CCNUMA_TOPOLOGY_DIR; }

std::string synthetic(const std::string& name) {
    std::string s = slurp(topologies() + "/" + name + ".synthetic");
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

// From the source tree's tests/ directory, so relative topology paths in golden files are stable.
result run(const std::string& command) { return test_support::run(command, topologies() + "/.."); }

const std::string info = CCNUMA_INFO;
const std::string run_tool = CCNUMA_RUN;
const std::string vm_tool = CCNUMA_VM;

std::string golden(const std::string& name) { return slurp(std::string(CCNUMA_GOLDEN_DIR) + "/" + name); }

// --- golden output --------------------------------------------------------------------------

TEST(Golden, PlansOfThePaperMachines) {
    auto r = run("CCNUMA_TOPOLOGY=" + quote(synthetic("barcelona")) + " " + run_tool +
                 " --bind 4,scatter,4,scatter --print-plan");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, golden("run_barcelona_4scatter_4scatter.txt"));
    r = run("CCNUMA_TOPOLOGY=" + quote(synthetic("modern")) + " " + run_tool +
            " --bind 2,scatter,4,subcompact --print-plan --json");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, golden("run_modern_2scatter_4subcompact.json"));
    r = run("CCNUMA_TOPOLOGY=" + quote(synthetic("scalemp")) + " CCNUMA_BIND=13,scatter " + run_tool + " --print-plan");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, golden("run_scalemp_13scatter.txt"));
    // The paper's variable name is accepted too.
    r = run("CCNUMA_TOPOLOGY=" + quote(synthetic("scalemp")) + " OMP_NESTING_TEAM_SIZE=13,scatter " + run_tool +
            " --print-plan");
    EXPECT_EQ(r.out, golden("run_scalemp_13scatter.txt"));
}

TEST(Golden, InfoOnAnXmlMachine) {
    auto r = run("CCNUMA_TOPOLOGY=topologies/two-socket-snc.xml " + info);
    ASSERT_EQ(r.status, 0) << r.err;
    // Everything up to the host's own kernel settings is determined by the topology.
    EXPECT_EQ(r.out.substr(0, r.out.find("kernel (this host)")), golden("info_two_socket_snc.txt"));
    r = run("CCNUMA_TOPOLOGY=topologies/two-socket-snc.xml CCNUMA_CPUSET=0-5,9 " + info + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("{\"schema_version\":2,\"topology\":", 0), 0u) << r.out;
    const auto begin = r.out.find("\"topology\":") + 11;
    const auto end = r.out.find(",\"kernel\":");
    ASSERT_NE(end, std::string::npos) << r.out;
    EXPECT_EQ(r.out.substr(begin, end - begin) + "\n", golden("info_two_socket_snc_masked.json"));
    EXPECT_NE(r.out.find("\"warnings\":[\"restricted: this process may use 7 of 32 PUs (0-5,9)"), std::string::npos)
        << r.out;
}

// Issue 26: a machine with HBM and NVM nodes beside DRAM. The text up to the host's kernel
// settings is the topology's (CPU-less nodes, bandwidths, local nodes fastest first, 6.16's auto
// weights); the JSON carries the same per node and per PU.
TEST(Golden, Issue26_InfoOnATieredMachine) {
    const std::string xml = "topologies/real/linux-fakeheteromemtiers.xml";
    auto r = run(info + " --input " + xml);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find("kernel (this host)")), golden("info_fakeheteromemtiers.txt"));
    r = run(info + " --input " + xml + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    const auto& nodes = doc["topology"]["numa_nodes"];
    ASSERT_EQ(nodes.size(), 7u);
    EXPECT_EQ(nodes[3]["os_index"], 4);
    EXPECT_EQ(nodes[3]["has_cpus"], false);
    EXPECT_EQ(nodes[3]["subtype"], "HBM");
    EXPECT_EQ(nodes[3]["tier_from"], "none");
    EXPECT_EQ(nodes[3]["access"], nlohmann::json::parse(R"([{"initiator":1,"read_bandwidth":10000,)"
                                                        R"("write_bandwidth":10000,"read_latency":0,"write_latency":0}])"));
    EXPECT_EQ(nodes[0]["has_cpus"], true);
    EXPECT_EQ(doc["topology"]["pus"][2], nlohmann::json::parse(R"({"os_index":2,"local_nodes":[4,1,6]})"));
    EXPECT_EQ(doc["auto_interleave_weights"],
              nlohmann::json::parse(R"([{"node":0,"weight":1},{"node":1,"weight":1},{"node":2,"weight":14},)"
                                    R"({"node":4,"weight":14},{"node":6,"weight":1},{"node":8,"weight":1},)"
                                    R"({"node":9,"weight":1}])"));
    for (const char* key : {"numa_balancing_mode", "demotion_enabled", "interleave_weights", "interleave_auto", "thp_sizes"})
        EXPECT_TRUE(doc["kernel"].contains(key)) << key;
    // Each size's mode as the library reads it: the same list, in the same order.
    const auto k = ccnuma::kernel_settings::read();
    ASSERT_TRUE(doc["kernel"]["thp_sizes"].is_array());
    ASSERT_EQ(doc["kernel"]["thp_sizes"].size(), k.thp_sizes.size());
    for (std::size_t i = 0; i < k.thp_sizes.size(); ++i) {
        EXPECT_EQ(doc["kernel"]["thp_sizes"][i]["bytes"], k.thp_sizes[i].first);
        EXPECT_EQ(doc["kernel"]["thp_sizes"][i]["enabled"], k.thp_sizes[i].second);
    }
}

// Issue 32, item 10: 20-digit memattr values ran ccnuma-info's access columns together. Each
// column is as wide as its widest value, with a space after it.
TEST(Info, Issue32_10_TwentyDigitAccessValuesKeepTheirColumns) {
    std::string xml = slurp(topologies() + "/real/linux-fakeheteromemtiers.xml");
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"value=\"10000\"", "value=\"18446744073709551615\""},
                                   {"value=\"100\"", "value=\"1234567890123456789\""}})
        for (auto at = xml.find(from); at != std::string::npos; at = xml.find(from, at + to.size()))
            xml.replace(at, from.size(), to);
    const std::string path = ::testing::TempDir() + "issue32-memattrs-" + std::to_string(::getpid()) + ".xml";
    std::ofstream(path) << xml;
    const auto r = run(info + " --input " + quote(path));
    std::remove(path.c_str());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto begin = r.out.find("memory access (HMAT");
    ASSERT_NE(begin, std::string::npos) << r.out;
    std::istringstream table(r.out.substr(begin));
    std::string line;
    std::getline(table, line);
    std::getline(table, line);
    EXPECT_EQ(line, "  node  from  read bw              write bw             read lat  write lat");
    std::map<std::string, int> rows;
    while (std::getline(table, line) && line.rfind("  weights", 0) != 0 && !line.empty()) {
        std::istringstream cells(line);
        std::vector<std::string> c;
        for (std::string cell; cells >> cell;) c.push_back(cell);
        ASSERT_EQ(c.size(), 6u) << line;
        EXPECT_EQ(c[4], "-") << line;
        ++rows[c[2]];
    }
    EXPECT_EQ(rows, (std::map<std::string, int>{{"1000", 2}, {"18446744073709551615", 2}, {"1234567890123456789", 3}}));
    EXPECT_NE(r.out.find("  2     2     18446744073709551615 18446744073709551615 -         -\n"), std::string::npos)
        << r.out;
}

// --- bad input ------------------------------------------------------------------------------


TEST(BadInput, SpecsGetOneLineThatPointsAtTheToken) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "--bind needs a spec, e.g. --bind 4,scatter (the value given is empty)"},  // issue 17, item 8
        {"4,", "missing strategy at position 2"},
        {"0,scatter", "thread count 0 at position 0"},
        {"-1,compact", "\"-1\" at position 0 is not a positive integer"},
        {"4,scater", "unknown strategy \"scater\" at position 2"},
        {"4,scatter,", "missing thread count at position 10"},
        {"99999999999,compact", "at position 0 is too large"},
        {"300,compact", "needs 300 PUs but only"},
        {std::string(10240, '7'), "is too large"},
    };
    for (const auto& [spec, fragment] : cases)
        expect_one_line_error(run(run_tool + " --bind " + quote(spec) + " --print-plan"), "ccnuma-run", fragment);
    std::string huge;
    while (huge.size() < 10240) huge += "2,scatter,";
    expect_one_line_error(run(run_tool + " --bind " + quote(huge) + " --print-plan"), "ccnuma-run",
                          "more than 8 nesting levels");
    expect_one_line_error(run("CCNUMA_BIND=4,scater " + run_tool + " --print-plan"), "ccnuma-run",
                          "CCNUMA_BIND=\"4,scater\"");
}

TEST(BadInput, TopologySourcesAndOptions) {
    for (const auto& tool : {info, run_tool}) {
        const std::string name = tool == info ? "ccnuma-info" : "ccnuma-run";
        const std::string args = tool == info ? "" : " --bind 1,compact --print-plan";
        expect_one_line_error(run("CCNUMA_TOPOLOGY=/nonexistent/machine.xml " + tool + args), name,
                              "\"/nonexistent/machine.xml\", which does not exist");
        expect_one_line_error(run("CCNUMA_TOPOLOGY='pack:2 bogus:1' " + tool + args), name, "bad synthetic topology");
        expect_one_line_error(run("CCNUMA_CPUSET=0-x " + tool + args), name, "bad CCNUMA_CPUSET");
        expect_one_line_error(run(tool + " --frobnicate"), name, "unknown option \"--frobnicate\"");
    }
    expect_one_line_error(run(run_tool + " --bind 1,compact"), "ccnuma-run", "nothing to do");
    expect_one_line_error(run(run_tool + " --bind"), "ccnuma-run", "--bind needs a spec");
    expect_one_line_error(run(run_tool + " --json --bind 1,compact true"), "ccnuma-run", "--json goes with --print-plan");
    expect_one_line_error(run("CCNUMA_TOPOLOGY='pack:2 core:2 pu:1' " + run_tool + " --bind 2,scatter true"),
                          "ccnuma-run", "only --print-plan is possible");
    const auto missing = run(run_tool + " --bind 1,compact -- /nonexistent/program");
    EXPECT_EQ(missing.status, 127);
    EXPECT_NE(missing.err.find("cannot execute \"/nonexistent/program\""), std::string::npos) << missing.err;
}

// --- real binding on this machine -----------------------------------------------------------

std::map<std::string, std::pair<int, std::string>> probe_lines(const std::string& out) {
    std::map<std::string, std::pair<int, std::string>> m;  // path -> (cpu, mask)
    std::istringstream in(out);
    std::string path, mask;
    int cpu;
    while (in >> path >> cpu >> mask) m[path] = {cpu, mask};
    return m;
}

void expect_threads_on_plan(const std::string& prefix, const std::string& spec) {
    SCOPED_TRACE(prefix + " " + spec);
    const auto plan = run(prefix + run_tool + " --bind " + spec + " --print-plan --json");
    ASSERT_EQ(plan.status, 0) << plan.err;
    const auto probe = run(prefix + run_tool + " --bind " + spec + " -- " + BINDING_PROBE);
    ASSERT_EQ(probe.status, 0) << probe.err;
    const auto lines = probe_lines(probe.out);
    // Compare with the plan the tool printed: {"path":[i,j],"pu":P,...}
    std::size_t pos = 0, checked = 0;
    while ((pos = plan.out.find("\"path\":[", pos)) != std::string::npos) {
        pos += 8;
        const auto close = plan.out.find(']', pos);
        const std::string path = plan.out.substr(pos, close - pos);
        const auto pu_at = plan.out.find("\"pu\":", close) + 5;
        const int pu = std::stoi(plan.out.substr(pu_at));
        ASSERT_TRUE(lines.count(path)) << "thread " << path << " did not report:\n" << probe.out;
        EXPECT_EQ(lines.at(path).first, pu) << "thread " << path << " runs on the wrong CPU";
        EXPECT_EQ(lines.at(path).second, std::to_string(pu)) << "thread " << path << " is not bound to PU " << pu;
        ++checked;
    }
    EXPECT_EQ(checked, lines.size());
    EXPECT_GT(checked, 0u);
}

TEST(RealBinding, ThreadsRunOnTheirPlannedCpus) {
    const auto& topo = ccnuma::topology::current();
    ASSERT_GE(topo.pus().size(), 2u) << "this test needs two allowed PUs";
    expect_threads_on_plan("", "2,scatter");
    expect_threads_on_plan("", "2,compact");
    expect_threads_on_plan("", "1,scatter,2,subcompact");
    // An inherited OMP_PROC_BIND binds ccnuma-run itself at start-up; the plan still works.
    expect_threads_on_plan("OMP_PROC_BIND=close ", "2,scatter");
}

TEST(RealBinding, AffinityMaskIsRespected) {
    const auto& topo = ccnuma::topology::current();
    ASSERT_GE(topo.pus().size(), 2u) << "this test needs two allowed PUs";
    const std::string last = std::to_string(topo.allowed_cpus().back());
    const auto plan = run("taskset -c " + last + " " + run_tool + " --bind 1,compact --print-plan --json");
    ASSERT_EQ(plan.status, 0) << plan.err;
    EXPECT_NE(plan.out.find("\"pu\":" + last + ","), std::string::npos) << plan.out;
    expect_one_line_error(run("taskset -c " + last + " " + run_tool + " --bind 2,scatter --print-plan"), "ccnuma-run",
                          "needs 2 PUs but only 1 is allowed (" + last + ")");
    expect_threads_on_plan("taskset -c " + last + " ", "1,scatter");
}

TEST(RealBinding, VerifyChecksInsideTheThreads) {
    const auto r = run(run_tool + " --bind 2,scatter --verify -- sh -c 'echo $OMP_PLACES $OMP_PROC_BIND $OMP_NUM_THREADS'");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("2 threads, 2 on their planned PU, 0 mismatch(es)"), std::string::npos) << r.out;
    const auto plan = ccnuma::make_plan(ccnuma::topology::current(), ccnuma::binding_spec::parse("2,scatter"));
    EXPECT_NE(r.out.find("{" + std::to_string(plan.threads()[0].pu) + "},{" + std::to_string(plan.threads()[1].pu) +
                         "} close 2"),
              std::string::npos)
        << r.out;
    // Oversubscribed: places cannot express it, so --verify without in-process binding fails.
    const auto over = run(run_tool + " --bind 3,compact --oversubscribe --verify");
    EXPECT_EQ(over.status, 3) << over.out << over.err;
    EXPECT_NE(over.err.find("ccnuma::bind_this_thread()"), std::string::npos) << over.err;
}

// --- memory policy (--interleave, --membind, --preferred, --localalloc) -----------------------

// Node sets of a synthetic machine are checked against its nodes, so these need no NUMA host.
const std::string four_nodes = "CCNUMA_TOPOLOGY='pack:4 numa:1 core:4 pu:1' ";

void expect_error_status(const result& r, int status, const std::string& fragment) {
    expect_one_line_error(r, "ccnuma-run", fragment);
    EXPECT_EQ(r.status, status) << r.err;
}

TEST(BadInput, MemoryPolicyOptionsAreUsageErrorsOrNodeSetErrors) {
    // Usage errors: exit 2, and nothing is run (the command would print).
    expect_error_status(run(run_tool + " -i all -m 0 echo ran"), 2,
                        "give at most one memory policy option, not --interleave and --membind");
    expect_error_status(run(run_tool + " --localalloc --preferred=0 echo ran"), 2,
                        "not --localalloc and --preferred");
    expect_error_status(run(run_tool + " --interleave"), 2, "--interleave needs a node set, e.g. --interleave all");
    expect_error_status(run(run_tool + " --membind= echo ran"), 2, "--membind= needs a node set, e.g. --membind=0-1");
    expect_error_status(run(run_tool + " -p"), 2, "--preferred needs a node, e.g. --preferred 1");
    expect_error_status(run(run_tool + " --interleaved=all echo ran"), 2, "unknown option \"--interleaved=all\"");
    expect_error_status(run(run_tool + " -l"), 2, "nothing to do");
    expect_error_status(run(run_tool + " -l --verify"), 2, "no binding spec for --verify to check");
    expect_error_status(run(run_tool + " echo ran"), 2, "or give a memory policy (--interleave, --membind");
    expect_error_status(run(four_nodes + run_tool + " -i all echo ran"), 2, "only --print-plan is possible");
    // Library errors: exit 1, with the library's message.
    expect_error_status(run(run_tool + " --interleave=0,x echo ran"), 1,
                        "ccnuma-run: bad node set \"0,x\": unexpected character \"x\" at position 2 (expected all, a "
                        "list such as 0-2,4, +0-1 for the first two allowed nodes, or ! before a list for all other "
                        "nodes)\n");
    const std::string here = ccnuma::format_list(ccnuma::parse_node_set("all"));
    expect_error_status(run(run_tool + " --membind=1000 echo ran"), 1,
                        "ccnuma-run: node set \"1000\": node 1000 is not in the allowed set {" + here + "}\n");
    expect_error_status(run(four_nodes + run_tool + " --membind 4 --print-plan"), 1,
                        "ccnuma-run: node set \"4\": node 4 is not in the allowed set {0-3}\n");
    expect_error_status(run(four_nodes + run_tool + " -i +4 --print-plan"), 1,
                        "relative node +4 does not exist: the allowed set {0-3} has 4 node(s), +0 to +3\n");
    expect_error_status(run(four_nodes + run_tool + " -i '!all' --print-plan"), 1, "bad node set \"!all\"");
    expect_error_status(run(four_nodes + run_tool + " --preferred=0-1 --print-plan"), 1,
                        "ccnuma-run: preferred node set \"0-1\": preferred takes exactly one node, not 2 (use "
                        "interleave or bind for several)\n");
    expect_error_status(run(four_nodes + run_tool + " --bind 4,scatter -i '!0-3' --print-plan"), 1,
                        "ccnuma-run: node set \"!0-3\": no node is left (the allowed set is {0-3})\n");
}

TEST(PrintPlan, ShowsTheMemoryPolicyAsTextAndJson) {
    auto policy_only = [](const std::string& args) {
        const auto r = run(four_nodes + run_tool + " " + args + " --print-plan");
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err, "");
        return r.out;
    };
    EXPECT_EQ(policy_only("--interleave=all"), "memory policy: interleave(0-3)\n");
    EXPECT_EQ(policy_only("-i +1-2"), "memory policy: interleave(1-2)\n");
    EXPECT_EQ(policy_only("--membind 2,3"), "memory policy: bind(2-3)\n");
    EXPECT_EQ(policy_only("-m '!0'"), "memory policy: bind(1-3)\n");
    EXPECT_EQ(policy_only("--preferred=1"), "memory policy: preferred(1)\n");
    EXPECT_EQ(policy_only("-p '!+0-2'"), "memory policy: preferred(3)\n");
    EXPECT_EQ(policy_only("--localalloc"), "memory policy: local\n");
    EXPECT_EQ(policy_only("-i all --json"),
              "{\"schema_version\":1,\"memory_policy\":{\"mode\":\"interleave\",\"nodes\":[0,1,2,3]}}\n");
    EXPECT_EQ(policy_only("-l --json"), "{\"schema_version\":1,\"memory_policy\":{\"mode\":\"local\",\"nodes\":[]}}\n");

    // With a binding, the plan's output is unchanged and the policy comes last.
    const auto plan = run(four_nodes + run_tool + " --bind 4,scatter --print-plan");
    const auto both = run(four_nodes + run_tool + " --bind 4,scatter --membind=+1-2 --print-plan");
    ASSERT_EQ(plan.status, 0) << plan.err;
    EXPECT_EQ(both.out, plan.out + "memory policy: bind(1-2)\n");
    const auto plan_json = run(four_nodes + run_tool + " --bind 4,scatter --print-plan --json");
    const auto both_json = run(four_nodes + run_tool + " --bind 4,scatter --membind=+1-2 --print-plan --json");
    ASSERT_EQ(plan_json.out.substr(plan_json.out.size() - 2), "}\n") << plan_json.out;
    EXPECT_EQ(both_json.out, plan_json.out.substr(0, plan_json.out.size() - 2) +
                                 ",\"memory_policy\":{\"mode\":\"bind\",\"nodes\":[1,2]}}\n");

    // On this machine the node sets are this machine's allowed nodes.
    const auto here = run(run_tool + " -i all --print-plan");
    EXPECT_EQ(here.out, "memory policy: interleave(" + ccnuma::format_list(ccnuma::parse_node_set("all")) + ")\n");
}

// Issue 23, item 9: descriptions hwloc loads in minutes (untyped levels bypassed the guard; wide
// levels within the PU limit took 15 s to over 120 s) are refused before hwloc builds them.
TEST(Issue23, Issue23_9_SyntheticSourcesAreSizedBeforeHwlocBuildsThem) {
    for (const auto& tool : {info, run_tool}) {
        const std::string name = tool == info ? "ccnuma-info" : "ccnuma-run";
        const std::string args = tool == info ? "" : " --bind 1,compact --print-plan";
        expect_one_line_error(run("CCNUMA_TOPOLOGY='100 100 100' " + tool + args), name,
                              "synthetic topology \"100 100 100\" in CCNUMA_TOPOLOGY describes more than 262144 objects");
        expect_one_line_error(run("CCNUMA_TOPOLOGY=pu:6464 " + tool + args), name,
                              "has a level of 6464 objects per parent");
        expect_one_line_error(run("CCNUMA_TOPOLOGY='pack:4 core:5000 pu:1' " + tool + args), name,
                              "has a level of 5000 objects per parent");
    }
    expect_one_line_error(run(info + " -i pu:20000"), "ccnuma-info",
                          "synthetic topology \"pu:20000\" in --input has a level of 20000 objects per parent");
}

// Issue 23, item 10: an object without complete_cpuset made hwloc 2.9 crash inside its load, and
// every tool with it (exit 139).
TEST(Issue23, Issue23_10_MalformedXmlIsOneLineNotACrash) {
    std::string text = slurp(topologies() + "/two-socket-snc.xml");
    const auto at = text.find("complete_cpuset=", text.find("<object type=\"Machine\""));
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 16, "x_cpuset=");
    const std::string bad = ::testing::TempDir() + "ccnuma_no_complete_cpuset.xml";
    std::ofstream(bad) << text;
    for (const auto& tool : {info, run_tool}) {
        const std::string name = tool == info ? "ccnuma-info" : "ccnuma-run";
        const std::string args = tool == info ? "" : " --bind 1,compact --print-plan";
        expect_one_line_error(run("CCNUMA_TOPOLOGY=" + quote(bad) + " " + tool + args), name,
                              "an object has a cpuset but no complete_cpuset, which hwloc 2.9 crashes on");
    }
    expect_one_line_error(run(run_tool + " --input " + quote(bad) + " --bind 1,compact --print-plan"), "ccnuma-run",
                          "--input names hwloc XML file");
}

// Issue 23, item 15: with --input, ccnuma-run named CCNUMA_TOPOLOGY as the source.
TEST(Issue23, Issue23_15_InputIsNamedAsInput) {
    const auto r = run("env -u CCNUMA_TOPOLOGY " + run_tool + " --input 'pack:2 core:2 pu:1' --bind 2,compact -- true");
    expect_one_line_error(r, "ccnuma-run", "the topology is pack:2 core:2 pu:1 (--input), not this machine");
    EXPECT_EQ(r.err.find("CCNUMA_TOPOLOGY"), std::string::npos) << r.err;
    expect_one_line_error(run(run_tool + " --input 'pack:2 bogus:1' --bind 1,compact --print-plan"), "ccnuma-run",
                          "in --input");
    expect_one_line_error(run("CCNUMA_TOPOLOGY='pack:2 core:2 pu:1' " + run_tool + " --bind 2,compact -- true"),
                          "ccnuma-run", "(CCNUMA_TOPOLOGY), not this machine");
}

// Issue 17, item 9: a directory, /dev/zero or a FIFO was "an XML file which does not exist", and
// an XML without NUMA nodes printed hwloc's abort line plus "No such file or directory".
TEST(Issue17, TopologySourcesThatAreNotXmlFilesAreNamedAsWhatTheyAre) {
    for (const auto& tool : {info, run_tool}) {
        const std::string name = tool == info ? "ccnuma-info" : "ccnuma-run";
        const std::string args = tool == info ? "" : " --bind 1,compact --print-plan";
        expect_one_line_error(run("CCNUMA_TOPOLOGY=" + quote(::testing::TempDir()) + " " + tool + args), name,
                              "\", which is a directory, not an XML file");
        expect_one_line_error(run("CCNUMA_TOPOLOGY=/dev/zero " + tool + args), name,
                              "CCNUMA_TOPOLOGY names \"/dev/zero\", which is a character device, not an XML file");
        const std::string fifo = ::testing::TempDir() + "ccnuma_topology_fifo.xml";
        std::remove(fifo.c_str());
        ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
        expect_one_line_error(run("CCNUMA_TOPOLOGY=" + quote(fifo) + " " + tool + args), name,
                              "which is a FIFO, not an XML file");
        std::remove(fifo.c_str());
        const auto no_numa = run("CCNUMA_TOPOLOGY=topologies/no-numa-node.xml " + tool + args);
        expect_one_line_error(no_numa, name,
                              "hwloc XML file \"topologies/no-numa-node.xml\" from CCNUMA_TOPOLOGY has no NUMA node, "
                              "which hwloc requires (export a whole machine with: lstopo machine.xml)");
        EXPECT_EQ(no_numa.err.find("No such file or directory"), std::string::npos) << no_numa.err;
    }
}

// --- issue 17: numactl's conventions in ccnuma-run -----------------------------------------

// env(1) and the shell: 127 when the command does not exist, 126 when it exists but cannot run.
TEST(Issue17, RunExitStatus126ForFoundButNotExecutable) {
    const std::string plain = ::testing::TempDir() + "ccnuma_run_not_executable";
    std::ofstream(plain) << "data\n";
    const result not_executable = run(run_tool + " -l -- " + quote(plain));
    expect_one_line_error(not_executable, "ccnuma-run", "cannot execute \"" + plain + "\": Permission denied");
    EXPECT_EQ(not_executable.status, 126);
    const result directory = run(run_tool + " -l -- " + quote(::testing::TempDir()));
    EXPECT_EQ(directory.status, 126) << directory.err;
    std::remove(plain.c_str());
    EXPECT_EQ(run(run_tool + " -l -- /nonexistent/program").status, 127);
    EXPECT_EQ(run(run_tool + " -l -- no-such-command-ccnuma").status, 127);
}

// numactl rejects two policies; a repeated --bind or CPU option was applied silently (the last).
TEST(Issue17, RunConflictingAndRepeatedOptionsAreUsageErrors) {
    expect_error_status(run(run_tool + " --bind 2,scatter --bind 4,compact --print-plan"), 2,
                        "--bind given twice (\"2,scatter\" and \"4,compact\"); give one spec");
    expect_error_status(run(run_tool + " -i all -w all echo ran"), 2,
                        "give at most one memory policy option, not --interleave and --weighted-interleave");
    expect_error_status(run(run_tool + " -P 0 -p 0 echo ran"), 2, "not --preferred-many and --preferred");
    expect_error_status(run(run_tool + " -C 0 -N 0 echo ran"), 2,
                        "give at most one CPU option, not --physcpubind and --cpunodebind");
    expect_error_status(run(run_tool + " -s -i all"), 2, "--show shows this process and runs nothing");
}

// Issue 17, item 8: an empty value given explicitly is a usage error in every spelling; only an
// empty CCNUMA_BIND means "not set" (as for the OMP_* variables, docs/binding.md).
TEST(Issue17, RunEmptyValuesAreUsageErrors) {
    expect_error_status(run("CCNUMA_BIND=2,scatter " + run_tool + " --bind '' --print-plan"), 2,
                        "--bind needs a spec, e.g. --bind 4,scatter (the value given is empty)");
    expect_error_status(run(run_tool + " --bind= --print-plan"), 2, "--bind= needs a spec");
    expect_error_status(run(run_tool + " -B '' --print-plan"), 2, "--bind needs a spec");
    expect_error_status(run(run_tool + " --membind '' echo ran"), 2, "--membind needs a node set, e.g. --membind 0-1");
    expect_error_status(run(run_tool + " --membind= echo ran"), 2, "--membind= needs a node set, e.g. --membind=0-1");
    expect_error_status(run(run_tool + " -C '' echo ran"), 2, "--physcpubind needs a CPU list");
    const auto unset = run(four_nodes + "CCNUMA_BIND= " + run_tool + " -i all --print-plan");
    EXPECT_EQ(unset.status, 0) << unset.err;
    EXPECT_EQ(unset.out, "memory policy: interleave(0-3)\n");
}

// getopt_long, as numactl parses: glued short values, clusters, unique prefixes, --opt=value.
TEST(Issue17, RunParsesOptionsAsGetoptLongDoes) {
    auto policy = [](const std::string& args) {
        const auto r = run(four_nodes + run_tool + " " + args + " --print-plan");
        EXPECT_EQ(r.status, 0) << args << ": " << r.err;
        return r.out;
    };
    EXPECT_EQ(policy("-i0-1"), "memory policy: interleave(0-1)\n");
    EXPECT_EQ(policy("-qi 2"), "memory policy: interleave(2)\n");
    EXPECT_EQ(policy("--inter=1-2"), "memory policy: interleave(1-2)\n");
    EXPECT_EQ(policy("--memb 3"), "memory policy: bind(3)\n");
    EXPECT_EQ(policy("--preferred=1"), "memory policy: preferred(1)\n");  // exact beats --preferred-many
    expect_error_status(run(run_tool + " --pre 0 echo ran"), 2,
                        "ambiguous option \"--pre\" (could be --preferred, --preferred-many)");
    expect_error_status(run(run_tool + " --verify=yes echo ran"), 2, "option \"--verify=yes\" takes no value");
    expect_error_status(run(run_tool + " -k echo ran"), 2, "unknown option \"-k\"");
    // The command's own options are its own.
    const auto r = run(run_tool + " -l -- echo -n -i");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "-i");
    const auto no_dashes = run(run_tool + " -l echo -b x");
    EXPECT_EQ(no_dashes.out, "-b x\n");
}

TEST(Issue17, RunHasHelpAndVersion) {
    const auto help = run(run_tool + " --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_EQ(help.out.rfind("usage: ccnuma-run ", 0), 0u) << help.out;
    EXPECT_NE(help.out.find("--physcpubind"), std::string::npos);
    const auto version = run(run_tool + " --version");
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out, std::string("ccnuma-run (ccnuma) ") + ccnuma::library_version() + "\n");
    EXPECT_EQ(run(run_tool + " -V").out, version.out);
}

// numactl parity: -C/--physcpubind, -N/--cpunodebind, --preferred-many, --weighted-interleave, -s.
TEST(Issue17, RunSpeaksNumactl) {
    // -N narrows the plan to the node's CPUs (node 1 of four holds PUs 4-7).
    const auto plan = run(four_nodes + run_tool + " -N 1 --bind 4,compact --print-plan --json");
    ASSERT_EQ(plan.status, 0) << plan.err;
    const auto doc = nlohmann::json::parse(plan.out);
    ASSERT_EQ(doc.at("threads").size(), 4u);
    for (const auto& t : doc.at("threads")) {
        EXPECT_GE(t.at("pu").get<unsigned>(), 4u);
        EXPECT_LE(t.at("pu").get<unsigned>(), 7u);
    }
    const auto pcpu = run(four_nodes + run_tool + " --physcpubind=+1,3 --bind 2,compact --print-plan --json");
    ASSERT_EQ(pcpu.status, 0) << pcpu.err;
    const auto pus = nlohmann::json::parse(pcpu.out).at("threads");
    EXPECT_EQ(pus.at(0).at("pu"), 1);
    EXPECT_EQ(pus.at(1).at("pu"), 3);
    expect_error_status(run(four_nodes + run_tool + " -C 99 --bind 2,compact --print-plan"), 1,
                        "CPU set \"99\": CPU 99 is not in the allowed set {0-15}");  // issue 25: parse_cpu_set
    expect_error_status(run(four_nodes + run_tool + " -N 7 --bind 2,compact --print-plan"), 1,
                        "node set \"7\": node 7 is not in the allowed set {0-3}");

    // On this machine, the command runs on the CPUs given.
    const std::string first = ccnuma::format_list(std::vector<unsigned>{ccnuma::topology::current().allowed_cpus().front()});
    const auto pinned = run(run_tool + " -C " + first + " -- grep Cpus_allowed_list /proc/self/status");
    EXPECT_EQ(pinned.status, 0) << pinned.err;
    EXPECT_EQ(pinned.out, "Cpus_allowed_list:\t" + first + "\n");
    const auto by_node = run(run_tool + " --cpunodebind=+0 -- grep Cpus_allowed_list /proc/self/status");
    EXPECT_EQ(by_node.status, 0) << by_node.err;
    EXPECT_EQ(by_node.out, "Cpus_allowed_list:\t" + ccnuma::format_list(ccnuma::topology::current().numa_nodes().front().cpus) + "\n");

    EXPECT_EQ(run(four_nodes + run_tool + " -P 1-2 --print-plan").out, "memory policy: preferred_many(1-2)\n");
    EXPECT_EQ(run(four_nodes + run_tool + " --weighted-interleave=all --print-plan").out,
              "memory policy: weighted_interleave(0-3)\n");
    // The kernel's own view of what the command inherited, or the kernel named when it lacks it.
    const std::string node = std::to_string(ccnuma::parse_node_set("all").front());
    const auto weighted = run(run_tool + " -w " + node + " -- head -n 1 /proc/self/numa_maps");
    if (weighted.status == 0) EXPECT_NE(weighted.out.find(" weighted interleave:" + node), std::string::npos) << weighted.out;
    else expect_error_status(weighted, 1, "this kernel lacks MPOL_WEIGHTED_INTERLEAVE (Linux 6.9 or later)");
    const auto many = run(run_tool + " --preferred-many " + node + " -- head -n 1 /proc/self/numa_maps");
    if (many.status == 0) EXPECT_NE(many.out.find(" prefer (many):" + node), std::string::npos) << many.out;
    else expect_error_status(many, 1, "this kernel lacks MPOL_PREFERRED_MANY (Linux 5.15 or later)");

    // -s/--show, as numactl --show prints it, and as JSON.
    const auto shown = run(run_tool + " --interleave=" + node + " -- " + run_tool + " --show");
    ASSERT_EQ(shown.status, 0) << shown.err;
    EXPECT_EQ(shown.out.rfind("policy: interleave\npreferred node: " + node + " (interleave next)\ninterleavemask: " +
                                  node + " \ninterleavenode: " + node + "\nphyscpubind: ",
                              0),
              0u)
        << shown.out;
    EXPECT_NE(shown.out.find("\nccnuma policy: interleave(" + node + ")\n"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("\nmembind: "), std::string::npos);
    EXPECT_NE(shown.out.find("\nbinding spec: none\n"), std::string::npos) << shown.out;
    const auto shown_json = run("CCNUMA_BIND=1,compact " + run_tool + " -s --json");
    ASSERT_EQ(shown_json.status, 0) << shown_json.err;
    const auto show_doc = nlohmann::json::parse(shown_json.out);
    EXPECT_EQ(show_doc.at("schema_version"), 1);
    EXPECT_EQ(show_doc.at("memory_policy").at("mode"), "local");
    EXPECT_EQ(show_doc.at("binding_spec"), "1,compact");
    EXPECT_FALSE(show_doc.at("physcpubind").empty());
}

// Issue 17, item 3: an oversubscribed plan of 50000 threads made libgomp exit the process
// ("Thread creation failed"); the library's one team-size check refuses it first.
TEST(Issue17, RunRefusesAPlanBeyondTheThreadsThisProcessCanStart) {
    for (const char* tail : {" --verify", " -- true"}) {
        const auto r = run(run_tool + " --bind 50000,compact --oversubscribe" + tail);
        expect_error_status(r, 1, "ccnuma-run: plan 50000,compact of 50000 threads: a team of 50000 threads is more "
                                  "than this process can start (valid: threads(1) to threads(");
    }
    // The library's own check, where report_binding() starts the plan's threads.
    const auto inside = run("CCNUMA_BIND=50000,compact CCNUMA_OVERSUBSCRIBE=1 " + run_tool + " --internal-self-check");
    expect_error_status(inside, 1, "ccnuma-run: report_binding of a plan of 50000 threads: a team of 50000 threads");
    // Planning for another machine starts nothing, so any plan prints.
    const auto planned = run("CCNUMA_TOPOLOGY='pack:2 core:2 pu:1' " + run_tool +
                             " --bind 50000,compact --oversubscribe --print-plan --json");
    EXPECT_EQ(planned.status, 0) << planned.err;
}

// Every JSON document has a schema version key, read here with the library the tool writes with.
TEST(Issue17, RunJsonHasASchemaVersion) {
    const auto r = run(four_nodes + run_tool + " --bind 4,scatter --membind=+1-2 --print-plan --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto doc = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(doc.begin().key(), "schema_version");
    EXPECT_EQ(doc.at("schema_version"), 1);
    EXPECT_EQ(doc.at("threads").size(), 4u);
    EXPECT_EQ(doc.at("memory_policy").at("nodes"), nlohmann::ordered_json::array({1, 2}));
}

// The kernel's name for the policy of the first mapping of the command ("interleave:0"...):
// what the command inherited, seen from inside it.
std::string inherited_policy(const std::string& args) {
    const auto r = run(run_tool + " " + args + " -- head -n 1 /proc/self/numa_maps");
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    std::istringstream in(r.out);
    std::string address, policy;
    in >> address >> policy;
    return policy;
}

TEST(RealMemoryPolicy, TheCommandInheritsIt) {
    const std::string node = std::to_string(ccnuma::parse_node_set("all").front());
    EXPECT_EQ(inherited_policy("--interleave=" + node), "interleave:" + node);
    EXPECT_EQ(inherited_policy("-m +0"), "bind:" + node);
    EXPECT_EQ(inherited_policy("--preferred " + node), "prefer:" + node);
    // --localalloc undoes a policy inherited from the caller, as numactl's does.
    EXPECT_EQ(inherited_policy("--interleave=all -- " + run_tool + " --localalloc"), "default");
    // Together with a binding: both reach the command.
    const auto r = run(run_tool + " --bind 2,scatter --membind=" + node +
                       " -- sh -c 'echo $OMP_PROC_BIND; head -n 1 /proc/self/numa_maps'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "close");
    EXPECT_NE(r.out.find(" bind:" + node + " "), std::string::npos) << r.out;
    // Without a memory option, nothing is set: the caller's policy passes through.
    EXPECT_EQ(inherited_policy("--interleave=all -- " + run_tool + " --bind 1,compact"), "interleave:" + node);
}

TEST(Info, ThisMachineAsJsonAndText) {
    const auto r = run(info + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto& topo = ccnuma::topology::current();
    EXPECT_NE(r.out.find("\"total_pus\":" + std::to_string(topo.total_pus())), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"allowed_cpus\":\"" + ccnuma::format_list(topo.allowed_cpus()) + "\""), std::string::npos);
    EXPECT_NE(r.out.find("\"numa_balancing\":"), std::string::npos);
    EXPECT_NE(r.out.find("\"emulated_machine\":null"), std::string::npos) << "this host is no ccnuma-vm guest";
    const auto text = run(info + " --tree");
    ASSERT_EQ(text.status, 0) << text.err;
    for (const char* section : {"NUMA nodes", "packages", "caches", "node distances", "kernel (this host)",
                                "numa_balancing", "THP", "read fault", "page truth", "tree", "warnings"})
        EXPECT_NE(text.out.find(section), std::string::npos) << section;
}

// Issue 11: ccnuma-info says whether this kernel maps the shared zero page on a read fault, as an
// independent reading of the page tables after a read finds it.
TEST(Info, SaysWhatAReadFaultDoesOnThisKernel) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* m = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    volatile char sink = *static_cast<char*>(m);
    (void)sink;
    const bool zero = test_support::on_zero_page(test_support::read_raw_page(m));
    ::munmap(m, page);
    const auto text = run(info);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find(zero ? "read fault       shared zero page" : "read fault       private frame"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find(zero ? "map the shared zero page" : "allocate a private page"), std::string::npos)
        << "the warning names the trap of this kernel";
    const auto json = run(info + " --json");
    ASSERT_EQ(json.status, 0) << json.err;
    EXPECT_NE(json.out.find(zero ? "\"read_fault\":\"zero page\"" : "\"read_fault\":\"private frame\""), std::string::npos)
        << json.out;
}

}  // namespace

namespace {

// ccnuma-vm checks the machine and the command before it installs or boots anything, so these
// cost no guest and run everywhere (the booting tests are in tests/vm, label vm).
TEST(BadInput, VmRejectsImpossibleMachinesAndMissingCommandsBeforeBooting) {
    struct bad {
        std::string args;
        int status;
        std::string fragment;
    };
    const std::vector<bad> cases = {
        {"--nodes 0 -- true", 1, "nodes 0 is not possible (expected 1..64)"},
        {"--nodes 65 -- true", 1, "nodes 65 is not possible"},
        {"--cores-per-node 0 -- true", 1, "cores-per-node 0 is not possible"},
        {"--nodes 64 --cores-per-node 4 -- true", 1, "CPU count 256"},
        {"--nodes 3 --sockets 2 -- true", 1, "sockets 2 is not possible"},
        {"--nodes 2 --cores-per-node 3 --sockets 4 -- true", 1, "sockets 4 is not possible"},
        {"--mem-per-node 500G -- true", 1, "but the host has"},
        {"--nodes 4 --mem-per-node 8388608T -- true", 1, "memory 4 nodes x 8388608T is not possible (expected at most 1T"},
        {"--mem-per-node 12M -- true", 1, "mem-per-node 12M is not possible (expected at least 64M"},
        {"--mem-per-node 1.5G -- true", 2, "bad --mem-per-node \"1.5G\""},  // issue 32, item 8: a usage error
        {"--distances '10,20;20' -- true", 1, "distance row 1 with 1 entries"},
        {"--distances '10,20;20,9' -- true", 1, "distance 1->1 9"},
        {"--distances '10,x' -- true", 2, "--distances: bad distance matrix \"10,x\": expected a number"},
        {"--thp sometimes -- true", 1, "thp \"sometimes\" is not possible (expected always, madvise or never)"},
        {"--thp-size 64K -- true", 2, "--thp-size: bad thp-size \"64K\": expected SIZE:MODE, e.g. 64K:always"},
        {"--thp-size 2M:always -- true", 1, "thp-size 2M is not possible (expected a power of two from 16K to 1M)"},
        {"--thp-size 64K:often -- true", 1, "thp-size 64K mode \"often\" is not possible (expected always, inherit, madvise or never)"},
        {"--numa-balancing 2 -- true", 1, "numa-balancing 2 is not possible"},
        {"--nodes two -- true", 2, "--nodes needs a whole number"},
        {"--env 1X=2 -- true", 2, "--env needs NAME=VALUE"},
        {"--timeout 0 -- true", 2, "--timeout needs seconds"},
        {"--accel xen -- true", 2, "--accel xen is unknown (expected auto, tcg, tcg-multi or kvm)"},
        {"--bogus -- true", 2, "unknown option \"--bogus\""},
        {"--nodes", 2, "--nodes needs a value"},
        // Issue 17: getopt_long, as in ccnuma-run.
        {"--nodes= -- true", 2, "--nodes= needs a value (the value given is empty)"},  // issue 25: tools/common/cli.hpp
        {"--mem-p 12M -- true", 1, "mem-per-node 12M is not possible"},  // a unique prefix
        {"--mem 12M -- true", 2, "ambiguous option \"--mem\" (could be --mem-per-node, --memory-node)"},
        // Issue 26: a --memory-node that does not read is a usage error, one that cannot be built
        // an impossible machine.
        {"--memory-node 512M,speed=2 -- true", 2, "--memory-node: bad memory node \"512M,speed=2\": unknown key \"speed\""},
        {"--memory-node 512M,bandwidth=half -- true", 2, "bandwidth=\"half\" is not a number"},
        {"--memory-node 1.5G -- true", 2, "bad memory node size \"1.5G\""},
        {"--memory-node 12M -- true", 1, "memory node 2 size 12M is not possible (expected at least 64M"},
        {"--memory-node 512M,near=2 -- true", 1, "memory node 2 near socket 2 is not possible (expected a socket of 0..1)"},
        {"--memory-node 512M,bandwidth=0 -- true", 1, "memory node 2 bandwidth 0 is not possible (expected a fraction"},
        {"--memory-node 512M,bandwidth=nan -- true", 1, "memory node 2 bandwidth nan is not possible"},
        {"--memory-node 512M,latency=0.5 -- true", 1, "memory node 2 latency 0.5 is not possible (expected a multiple"},
        {"--memory-node 512M --distances '10,20;20,10' -- true", 1, "distance matrix with 2 rows is not possible (expected 3"},
        {"--t 1 -- true", 2, "ambiguous option \"--t\" (could be --threads-per-core, --thp, --thp-size, --timeout)"},
        {"--keep-going=yes -- true", 2, "option \"--keep-going=yes\" takes no value"},
        {"-x -- true", 2, "unknown option \"-x\""},
        {"", 2, "no command given"},
        {"-- /nonexistent/prog", 127, "command /nonexistent/prog: No such file or directory"},
        {"-- no-such-command-ccnuma", 127, "command \"no-such-command-ccnuma\" not found in PATH"},
        {"--copy /nonexistent/file -- true", 127, "--copy /nonexistent/file"},
        // Issue 17: the program a wrapper runs in the guest is checked before booting.
        {"-- " + run_tool + " --localalloc -- /nonexistent/app", 127,
         "command /nonexistent/app (run by ccnuma-run in the guest): No such file or directory on the host"},
        {"-- " + run_tool + " -l -- /etc/passwd", 126, "command /etc/passwd (run by ccnuma-run in the guest) is not an executable file"},
    };
    const std::string plain = ::testing::TempDir() + "ccnuma_vm_not_executable";
    std::ofstream(plain) << "data\n";
    const result not_executable = run(vm_tool + " -- " + quote(plain));
    std::remove(plain.c_str());
    expect_one_line_error(not_executable, "ccnuma-vm", "command " + plain + " is not an executable file");
    const result version = run(vm_tool + " --version");
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out, std::string("ccnuma-vm (ccnuma) ") + ccnuma::library_version() + "\n");
    EXPECT_EQ(run(vm_tool + " --help").out.rfind("usage: ccnuma-vm ", 0), 0u);
    EXPECT_EQ(not_executable.status, 126);
    for (const auto& c : cases) {
        SCOPED_TRACE(c.args);
        const result r = run(vm_tool + " " + c.args);
        expect_one_line_error(r, "ccnuma-vm", c.fragment);
        EXPECT_EQ(r.status, c.status) << r.err;
    }
}

// Issue 32, new user: a program a wrapper runs by its bare name is looked up in the host's PATH,
// as the command itself is; one that is not there is refused before the guest boots (it used to
// boot, then fail with 'cannot execute'). Found, it is run by its path (tests/vm: Issue32).
TEST(BadInput, Issue32_a_VmRefusesABareNamedProgramNotInPathBeforeBooting) {
    const result r = run(vm_tool + " -- " + run_tool + " -B 2,scatter -- no-such-program-ccnuma");
    expect_one_line_error(r, "ccnuma-vm",
                          "command \"no-such-program-ccnuma\" (run by ccnuma-run in the guest) is not in PATH on the "
                          "host, so it cannot be copied; name it by its path (e.g. ./no-such-program-ccnuma)");
    EXPECT_EQ(r.status, 127) << r.err;
}

// Issue 32, item 8: a value that does not read is a usage error (2), as the help says and as
// --memory-node 1.5G was; a whole number beyond what the machine can have names the range.
TEST(BadInput, Issue32_8_VmValuesThatDoNotReadAreUsageErrors) {
    struct bad {
        std::string args;
        int status;
        std::string fragment;
    };
    const std::vector<bad> cases = {
        {"--mem-per-node 1.5G -- true", 2, "bad --mem-per-node \"1.5G\": unknown suffix \".5G\""},
        {"--mem-per-node abc -- true", 2, "bad --mem-per-node \"abc\": not a number"},
        {"--distances 10,x -- true", 2, "--distances: bad distance matrix \"10,x\": expected a number, found \"x\""},
        {"--distances ';' -- true", 2, "--distances: bad distance matrix \";\": expected a number, found \"\" at position 0"},
        {"--nodes 100001 -- true", 1, "nodes 100001 is not possible (expected 1..64)"},
        {"--cores-per-node 100001 -- true", 1, "CPU count 200002 (2 nodes x 100001 cores x 1 threads) is not possible"},
        {"--nodes 99999999999999999999 -- true", 2,
         "--nodes 99999999999999999999 is out of range (expected a whole number up to 4294967295"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.args);
        const result r = run(vm_tool + " " + c.args);
        expect_one_line_error(r, "ccnuma-vm", c.fragment);
        EXPECT_EQ(r.status, c.status) << r.err;
        EXPECT_EQ(r.err.find("needs a whole number"), std::string::npos) << r.err;
    }
}

// Issue 32, new user: OMP_NUM_THREADS=7 was replaced by the plan's team size without a word.
TEST(Run, Issue32_c_AReplacedOmpNumThreadsIsNoted) {
    const std::string note = "ccnuma-run: note: OMP_NUM_THREADS=7 is replaced by the plan's team size 1 (plan 1,compact)";
    const auto noted = run("OMP_NUM_THREADS=7 " + run_tool + " --bind 1,compact -- sh -c 'echo $OMP_NUM_THREADS'");
    ASSERT_EQ(noted.status, 0) << noted.err;
    EXPECT_EQ(noted.out, "1\n");
    EXPECT_NE(noted.err.find(note), std::string::npos) << noted.err;
    const auto pinned = run("OMP_NUM_THREADS=7 " + run_tool + " --cpus N:0 -- true");
    ASSERT_EQ(pinned.status, 0) << pinned.err;
    EXPECT_NE(pinned.err.find("OMP_NUM_THREADS=7 is replaced by the plan's team size 1 (--cpus N:0)"), std::string::npos)
        << pinned.err;
    // --quiet, and a value the plan keeps, say nothing.
    for (const std::string& quiet : {"OMP_NUM_THREADS=7 " + run_tool + " -q --bind 1,compact -- true",
                                    "OMP_NUM_THREADS=1 " + run_tool + " --bind 1,compact -- true"}) {
        const auto r = run(quiet);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err.find("OMP_NUM_THREADS"), std::string::npos) << quiet << ": " << r.err;
    }
}

TEST(Info, Issue12_InputOptionAsLstopo) {
    const auto by_env = run("CCNUMA_TOPOLOGY=topologies/two-socket-snc.xml " + info);
    for (const std::string form : {" -i topologies/two-socket-snc.xml", " --input topologies/two-socket-snc.xml",
                                   " --input=topologies/two-socket-snc.xml", " -itopologies/two-socket-snc.xml"}) {
        const auto r = run(info + form);
        ASSERT_EQ(r.status, 0) << form << r.err;
        EXPECT_EQ(r.out.substr(0, r.out.find("kernel (this host)")),
                  by_env.out.substr(0, by_env.out.find("kernel (this host)")))
            << form;
    }
    const auto syn = run(info + " --input 'pack:3 core:2 pu:1' --json");
    ASSERT_EQ(syn.status, 0) << syn.err;
    EXPECT_NE(syn.out.find("\"total_pus\":6"), std::string::npos) << syn.out;
    const auto hw = run("HWLOC_SYNTHETIC='pack:3 core:2 pu:1' " + info);
    ASSERT_EQ(hw.status, 0) << hw.err;
    EXPECT_EQ(hw.out.find("this machine"), std::string::npos) << hw.out;
    EXPECT_NE(hw.out.find("topology pack:3 core:2 pu:1 (from HWLOC_SYNTHETIC)"), std::string::npos) << hw.out;
    const auto missing = run(info + " --input");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("--input needs a value"), std::string::npos) << missing.err;
}

TEST(Run, Issue12_InputOption) {
    const auto by_env = run("CCNUMA_TOPOLOGY=topologies/two-socket-snc.xml " + run_tool + " --bind 4,scatter --print-plan");
    const auto by_option = run(run_tool + " --input topologies/two-socket-snc.xml --bind 4,scatter --print-plan");
    ASSERT_EQ(by_option.status, 0) << by_option.err;
    EXPECT_EQ(by_option.out, by_env.out);
    const auto eq = run(run_tool + " --input='pack:2 numa:1 core:2 pu:1' --bind 2,scatter --print-plan --json");
    ASSERT_EQ(eq.status, 0) << eq.err;
    EXPECT_NE(eq.out.find("\"numa\":1"), std::string::npos) << eq.out;
}

// Issue 25: one command-line convention (tools/common/cli.hpp): the same one-line messages and
// exit status 2 for what getopt_long refuses, and the same --version line, in every tool.
TEST(BadInput, Issue25_OneCommandLineConvention) {
    const std::pair<std::string, std::string> tools[] = {
        {info, "ccnuma-info"}, {run_tool, "ccnuma-run"}, {vm_tool, "ccnuma-vm"}};
    for (const auto& [tool, name] : tools) {
        const auto unknown = run(tool + " --frobnicate");
        expect_one_line_error(unknown, name, "unknown option \"--frobnicate\" (see " + name + " --help)");
        EXPECT_EQ(unknown.status, 2) << name;
        const auto letter = run(tool + " -k");
        expect_one_line_error(letter, name, "unknown option \"-k\" (see " + name + " --help)");
        EXPECT_EQ(letter.status, 2) << name;
        const auto valued = run(tool + " --help=yes");
        expect_one_line_error(valued, name, "option \"--help=yes\" takes no value");
        EXPECT_EQ(valued.status, 2) << name;
        const auto version = run(tool + " --version");
        EXPECT_EQ(version.status, 0) << name;
        EXPECT_EQ(version.out, name + " (ccnuma) " + ccnuma::library_version() + "\n");
    }
    const auto prefix = run(info + " --vers");  // a unique prefix works in every tool
    EXPECT_EQ(prefix.status, 0) << prefix.err;
    const auto empty = run(info + " --input=");
    expect_one_line_error(empty, "ccnuma-info", "--input= needs a value (the value given is empty)");
    EXPECT_EQ(empty.status, 2);
}

TEST(Info, Issue12_VersionAndSchema) {
    const auto v = run(info + " --version");
    ASSERT_EQ(v.status, 0);
    EXPECT_EQ(v.out, std::string("ccnuma-info (ccnuma) ") + ccnuma::version_string + "\n");  // issue 25: as every tool
    const auto j = run(info + " -i 'pack:2 core:2 pu:2' --json");
    ASSERT_EQ(j.status, 0) << j.err;
    EXPECT_EQ(j.out.rfind("{\"schema_version\":2,", 0), 0u) << j.out;
    EXPECT_NE(j.out.find("\"numa_balancing_modes\":["), std::string::npos) << j.out;
}

TEST(Info, Issue12_7_LoadingErrorsSayWhy) {
    expect_one_line_error(run(info + " -i topologies/bad/empty.xml"), "ccnuma-info", "which is empty");
    expect_one_line_error(run(info + " -i topologies/bad/truncated.xml"), "ccnuma-info", "which is truncated");
    expect_one_line_error(run(info + " -i topologies/bad/format3-cxlmem+dax.v3.xml"), "ccnuma-info",
                          "in XML format \"3.0\" (written by hwloc 3)");
    expect_one_line_error(run(info + " -i topologies/bad/pu-os-index-unknown.xml"), "ccnuma-info",
                          "has no OS index");
}

TEST(Run, Issue12_4_RestrictedXmlPlansOnTheAllowedPart) {
    const auto r = run("CCNUMA_TOPOLOGY=topologies/real/64intel64-3g2n+2n-irregulargroups+pci.xml " + info + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"total_pus\":64,\"total_numa_nodes\":8"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"restricted\":true"), std::string::npos);
    expect_one_line_error(run("CCNUMA_TOPOLOGY=topologies/real/64intel64-3g2n+2n-irregulargroups+pci.xml "
                              "CCNUMA_CPUSET=16-31 " + run_tool + " --bind 2,scatter --print-plan"),
                          "ccnuma-run", "selects no allowed PU (allowed: 0-15)");
}

}  // namespace

// --- issue 24: likwid-pin expressions, hwloc locations, numactl's letters ---------------------

// numactl's short letters mean numactl's options; ccnuma's own take letters numactl leaves free.
TEST(Issue24, RunShortLettersAreNumactls) {
    const std::string node = std::to_string(ccnuma::topology::current().allowed_nodes().front());
    // -b is --balancing: the policy the command inherits carries MPOL_F_NUMA_BALANCING.
    const auto balanced = run(run_tool + " -b -m " + node + " -- " + run_tool + " -s");
    ASSERT_EQ(balanced.status, 0) << balanced.err;
    EXPECT_EQ(balanced.out.rfind("policy: bind\npreferred node: " + node + "\n", 0), 0u) << balanced.out;
    EXPECT_NE(balanced.out.find("\nmembind: " + node + " \n"), std::string::npos) << balanced.out;
    EXPECT_NE(balanced.out.find("\nnuma balancing: on (MPOL_F_NUMA_BALANCING)\n"), std::string::npos) << balanced.out;
    expect_error_status(run(run_tool + " -b -i all true"), 2, "--balancing goes with --membind");
    expect_error_status(run(run_tool + " --balancing true"), 2, "--balancing goes with --membind");
    // -B is --bind; --cpubind is numactl's old --cpunodebind.
    EXPECT_EQ(run(run_tool + " -B 1,compact -n").out, run(run_tool + " --bind 1,compact --print-plan").out);
    EXPECT_EQ(run(run_tool + " --cpubind " + node + " -B 1,compact -n -j").out,
              run(run_tool + " -N " + node + " --bind 1,compact --print-plan --json").out);
    // -a plans on the cgroup's CPUs whatever the affinity mask.
    const auto all = run("taskset -c 0 " + run_tool + " -a -B 1,scatter -n -j");
    ASSERT_EQ(all.status, 0) << all.err;
    EXPECT_EQ(nlohmann::json::parse(all.out).at("threads").size(), 1u);
}

// Issue 26: --show prints the kernel's weighted-interleave weights, as its sysfs holds them, and
// under -w the round of pages they give; a kernel without them (before 6.9) is named, and the
// rest is skipped, saying why (issue 32: it returned early and passed).
TEST(Issue26, RunShowsTheKernelsInterleaveWeights) {
    const unsigned node = ccnuma::parse_node_set("all").front();
    std::ifstream file("/sys/kernel/mm/mempolicy/weighted_interleave/node" + std::to_string(node));
    unsigned weight = 0;
    const bool kernel_has_weights = static_cast<bool>(file >> weight);
    const auto plain = run(run_tool + " --show");
    ASSERT_EQ(plain.status, 0) << plain.err;
    if (!kernel_has_weights) {
        EXPECT_NE(plain.out.find("\nweighted interleave weights: none (no /sys/kernel/mm/mempolicy/weighted_interleave: "
                                 "Linux 6.9 or later has them)\n"),
                  std::string::npos)
            << plain.out;
        GTEST_SKIP() << "this kernel has no /sys/kernel/mm/mempolicy/weighted_interleave (Linux 6.9 or later): "
                        "the weights and the -w pattern cannot be checked here";
    }
    const std::string mine = "node" + std::to_string(node) + "=" + std::to_string(weight);
    EXPECT_NE(plain.out.find("\nweighted interleave weights: " + mine), std::string::npos) << plain.out;
    EXPECT_EQ(plain.out.find("weighted interleave pattern"), std::string::npos) << "no pattern without -w: " << plain.out;
    const auto weighted = run(run_tool + " -w " + std::to_string(node) + " -- " + run_tool + " --show");
    ASSERT_EQ(weighted.status, 0) << weighted.err;
    EXPECT_NE(weighted.out.find("\nweighted interleave pattern: node " + std::to_string(node) + " x" +
                                std::to_string(weight) + " (a round of " + std::to_string(weight) + " page"),
              std::string::npos)
        << weighted.out;
    const auto as_json = run(run_tool + " -w " + std::to_string(node) + " -- " + run_tool + " --show --json");
    ASSERT_EQ(as_json.status, 0) << as_json.err;
    const auto doc = nlohmann::json::parse(as_json.out);
    EXPECT_EQ(doc.at("interleave_pattern"), nlohmann::json::parse("[{\"node\":" + std::to_string(node) +
                                                                  ",\"pages\":" + std::to_string(weight) + "}]"));
    bool listed = false;
    for (const auto& w : doc.at("interleave_weights"))
        listed = listed || (w.at("node") == node && w.at("weight") == weight);
    EXPECT_TRUE(listed) << as_json.out;
}

// --show: numactl's labels and meanings first (policy: default; membind lists the policy's nodes).
TEST(Issue24, RunShowPrintsNumactlsLabels) {
    const auto plain = run(run_tool + " -s");
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(plain.out.rfind("policy: default\npreferred node: current\nphyscpubind: ", 0), 0u) << plain.out;
    const std::string labels[] = {"\ncpubind: ", "\nnodebind: ", "\nmembind: ", "\npreferred: \n", "\nccnuma policy: local\n",
                                  "\nnuma balancing: off\n", "\nweighted interleave weights: ", "\nbinding spec: none\n"};
    std::size_t at = 0;
    for (const auto& l : labels) {
        const auto found = plain.out.find(l, at);
        EXPECT_NE(found, std::string::npos) << l << " in order in " << plain.out;
        if (found != std::string::npos) at = found;
    }
    // -H: numactl's layout.
    const auto hw = run(run_tool + " -H");
    ASSERT_EQ(hw.status, 0) << hw.err;
    EXPECT_EQ(hw.out.rfind("available: ", 0), 0u) << hw.out;
    EXPECT_NE(hw.out.find(" cpus:"), std::string::npos);
    EXPECT_NE(hw.out.find(" size: "), std::string::npos);
    EXPECT_NE(hw.out.find("\nnode distances:\nnode "), std::string::npos) << hw.out;
}

// hwloc locations where CPUs or nodes are taken, numbered as lstopo numbers them.
TEST(Issue24, RunTakesHwlocLocations) {
    const std::string machine = run_tool + " -x 'pack:2 numa:2 core:2 pu:2' ";
    const auto pus = [&](const std::string& args) {
        const auto r = run(machine + args + " -n -j");
        EXPECT_EQ(r.status, 0) << args << ": " << r.err;
        std::vector<unsigned> out;
        if (r.status == 0) {
            const auto doc = nlohmann::json::parse(r.out);
            for (const auto& t : doc.at("threads")) out.push_back(t.at("pu"));
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    EXPECT_EQ(pus("-C core:1-2 -B 4,compact"), (std::vector<unsigned>{2, 3, 4, 5}));
    EXPECT_EQ(pus("-C package:1.core:1 -B 2,compact"), (std::vector<unsigned>{10, 11}));
    EXPECT_EQ(pus("-N numa:3 -B 1,compact"), (std::vector<unsigned>{12}));
    EXPECT_EQ(pus("-C 0x30 -B 2,compact"), (std::vector<unsigned>{4, 5}));
    const auto policy = [&](const std::string& args) { return run(machine + args + " -n").out; };
    EXPECT_EQ(policy("-m numa:1"), "memory policy: bind(1)\n");
    EXPECT_EQ(policy("-i package:1"), "memory policy: interleave(2-3)\n");
    EXPECT_EQ(policy("-p numa:2"), "memory policy: preferred(2)\n");
    EXPECT_EQ(policy("-m +0"), "memory policy: bind(0)\n");  // numactl's relative sets still work
    const auto env = run("CCNUMA_CPUSET=package:1 " + machine + "-B 1,compact -n -j");
    ASSERT_EQ(env.status, 0) << env.err;
    EXPECT_EQ(nlohmann::json::parse(env.out).at("threads").at(0).at("pu"), 8);
    expect_one_line_error(run(machine + "-C core:9 -B 1,compact -n"), "ccnuma-run",
                          "hwloc location \"core:9\": core:9 at position 0 does not exist: there are 8 cores there");
}

// likwid-pin's -c: threads pinned in the expression's order through OMP_PLACES.
TEST(Issue24, RunCpusFollowsLikwidPin) {
    const std::string machine = run_tool + " -x 'pack:2 core:4 pu:2' ";
    const auto r = run(machine + "-c S1:0-1@S0:0 -n -j");
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<unsigned> pus;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& t : doc.at("threads")) pus.push_back(t.at("pu"));
    EXPECT_EQ(pus, (std::vector<unsigned>{8, 10, 0}));
    const auto text = run(machine + "-c E:N:4:1:2 -n");
    EXPECT_NE(text.out.find("\nOMP_NUM_THREADS=4\nOMP_PLACES={0},{2},{4},{6}\nOMP_PROC_BIND=close\n"), std::string::npos)
        << text.out;
    // On this host the command runs pinned: thread 0 of the command sees the expression's CPUs.
    const auto host = run(run_tool + " -c N:0 -- sh -c 'echo $OMP_PLACES $OMP_NUM_THREADS'");
    EXPECT_EQ(host.status, 0) << host.err;
    EXPECT_EQ(host.out, "{" + std::to_string(ccnuma::topology::current().allowed_cpus().front()) + "} 1\n");
    expect_one_line_error(run(machine + "-c S2:0 -n"), "ccnuma-run",
                          "likwid-pin would use socket S2, but this process's part of the machine has 2 (S0-S1)");
    expect_error_status(run(machine + "-c N:0 -B 1,compact -n"), 2, "give --bind or --cpus, not both");
}

// One line naming the ccnuma form when the other tool's syntax comes where one is expected.
TEST(Issue24, RunHintsAtTheOtherToolsSyntax) {
    const std::string machine = run_tool + " -x 'pack:2 core:4 pu:2' ";
    expect_one_line_error(run(machine + "-C S0:0-1 -B 2,compact -n"), "ccnuma-run",
                          "--physcpubind \"S0:0-1\" is likwid-pin syntax: give it as --cpus S0:0-1 (-c; threads pinned "
                          "in its order), or here as --physcpubind 0,2");
    expect_one_line_error(run(machine + "-c core:0-1 -n"), "ccnuma-run",
                          "--cpus \"core:0-1\" is an hwloc location, and --cpus takes likwid-pin expressions: give it "
                          "as --physcpubind core:0-1 (-C), or as --cpus 0-3");
    expect_one_line_error(run(machine + "-m M1:0 -n"), "ccnuma-run", "--membind \"M1:0\" is likwid-pin syntax");
}

// Issue 24, part 5: what srun's task/affinity plugin says, set here by hand (the slurm test runs
// the real daemons): SLURM_CPUS_PER_TASK is the team size when no spec is given, the bindings
// are shown, and a memory policy against --mem-bind is refused naming both.
TEST(Issue24, RunTeamSizeFollowsSlurmCpusPerTask) {
    const std::string machine = run_tool + " -x 'pack:2 core:4 pu:2' --print-plan --json";
    const auto r = run("env SLURM_CPUS_PER_TASK=3 " + machine);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto plan = nlohmann::json::parse(r.out);
    ASSERT_EQ(plan["threads"].size(), 3u) << r.out;
    EXPECT_EQ(r.out, run(machine + " --bind 3,compact").out);
    const auto text = run("env SLURM_CPUS_PER_TASK=3 " + run_tool + " -x 'pack:2 core:4 pu:2' --print-plan");
    EXPECT_NE(text.err.find("SLURM_CPUS_PER_TASK=3 gives --bind 3,compact"), std::string::npos) << text.err;
    // A spec given, or CCNUMA_BIND, wins; a bad value is a usage error naming the variable.
    const auto given = run("env SLURM_CPUS_PER_TASK=3 CCNUMA_BIND=2,scatter " + machine);
    ASSERT_EQ(given.status, 0) << given.err;
    EXPECT_EQ(nlohmann::json::parse(given.out)["threads"].size(), 2u);
    expect_error_status(run("env SLURM_CPUS_PER_TASK=two " + machine), 2, "SLURM_CPUS_PER_TASK \"two\" is not a number");
    // Without it, no spec is still an error.
    expect_error_status(run("env SLURM_CPUS_PER_TASK= " + machine), 2, "no binding spec");
}

TEST(Issue24, RunShowAndInfoSayWhatSlurmBound) {
    const std::string vars =
        "env SLURM_CPU_BIND_TYPE=mask_cpu: SLURM_CPU_BIND_LIST=0x1,0x2 SLURM_MEM_BIND_TYPE=local SLURM_MEM_BIND_LIST= ";
    const auto show = run(vars + run_tool + " --show");
    ASSERT_EQ(show.status, 0) << show.err;
    EXPECT_NE(show.out.find("\nbinding spec: none\nslurm: SLURM_CPU_BIND_TYPE=mask_cpu:\nslurm: SLURM_CPU_BIND_LIST=0x1,0x2\n"
                            "slurm: SLURM_MEM_BIND_TYPE=local\n"),
              std::string::npos)
        << show.out;
    EXPECT_EQ(show.out.find("SLURM_MEM_BIND_LIST"), std::string::npos) << "empty counts as unset: " << show.out;
    const auto json = run(vars + run_tool + " --show --json");
    ASSERT_EQ(json.status, 0) << json.err;
    EXPECT_EQ(nlohmann::json::parse(json.out)["slurm"]["SLURM_CPU_BIND_LIST"], "0x1,0x2") << json.out;
    const auto text = run(vars + info);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("\nslurm:    SLURM_CPU_BIND_TYPE=mask_cpu:\nslurm:    SLURM_CPU_BIND_LIST=0x1,0x2\n"),
              std::string::npos)
        << text.out;
    const auto info_json = run(vars + info + " --json");
    ASSERT_EQ(info_json.status, 0) << info_json.err;
    EXPECT_EQ(nlohmann::json::parse(info_json.out)["slurm"]["SLURM_MEM_BIND_TYPE"], "local");
    // Nothing set, nothing said.
    EXPECT_EQ(run(run_tool + " --show").out.find("slurm"), std::string::npos);
    EXPECT_EQ(run(info).out.find("slurm"), std::string::npos);
}

TEST(Issue24, RunRefusesAMemoryPolicyAgainstSlurmsMemBind) {
    const std::string node = std::to_string(ccnuma::topology::current().allowed_nodes().front());
    const std::string other = std::to_string(ccnuma::topology::current().allowed_nodes().front() + 1);
    // Task 1 of map_mem:<node>,<other> is bound to <other>: --membind <node> contradicts it.
    const std::string map = "env SLURM_MEM_BIND_TYPE=map_mem: SLURM_MEM_BIND_LIST=" + node + "," + other + " ";
    expect_error_status(run(map + "SLURM_LOCALID=1 " + run_tool + " -m " + node + " true"), 2,
                        "--membind " + node + " contradicts Slurm's --mem-bind=map_mem:" + node + "," + other +
                            " (nodes " + other + " for this task");
    // Task 0 is bound to <node>: the same policy agrees, and the command runs.
    EXPECT_EQ(run(map + "SLURM_LOCALID=0 " + run_tool + " -m " + node + " true").status, 0);
    // mask_mem takes hexadecimal masks; an unreadable list is one line naming the variable.
    const unsigned long other_mask = 1ul << (ccnuma::topology::current().allowed_nodes().front() + 1);
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%lx", other_mask);
    expect_error_status(run("env SLURM_MEM_BIND_TYPE=mask_mem: SLURM_MEM_BIND_LIST=" + std::string(hex) + " " + run_tool +
                            " -i " + node + " true"),
                        2, "--interleave " + node + " contradicts Slurm's --mem-bind=mask_mem:" + hex);
    expect_one_line_error(run("env SLURM_MEM_BIND_TYPE=map_mem: SLURM_MEM_BIND_LIST=zz " + run_tool + " -m " + node + " true"),
                          "ccnuma-run", "cannot read SLURM_MEM_BIND_LIST \"zz\"");
    // --localalloc and Slurm's none bind nothing to contradict.
    EXPECT_EQ(run(map + "SLURM_LOCALID=1 " + run_tool + " -l true").status, 0);
    EXPECT_EQ(run("env SLURM_MEM_BIND_TYPE=none " + run_tool + " -m " + node + " true").status, 0);
}

// Issue 24, part 6: the OMPT tool is never loaded into a libgomp program; ccnuma-run says so
// where the command names libgomp, and points at --bind.
TEST(Issue24, RunSaysThatALibgompCommandIgnoresTheOmptTool) {
    const std::string probe = LIBGOMP_PROBE;
    auto r = run("OMP_TOOL_LIBRARIES=libccnuma-ompt.so " + run_tool + " -l -- " + test_support::quote(probe));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("ccnuma-run: note: " + probe + " links libgomp (GCC's OpenMP runtime), which has no OMPT: "
                         "OMP_TOOL_LIBRARIES=libccnuma-ompt.so is ignored there and binds nothing; use --bind SPEC"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    // Not without the tool, not under -q, and not for a program that links no libgomp.
    EXPECT_EQ(run(run_tool + " -l -- " + test_support::quote(probe)).err, "");
    EXPECT_EQ(run("OMP_TOOL_LIBRARIES=libccnuma-ompt.so " + run_tool + " -q -l -- " + test_support::quote(probe)).err, "");
    EXPECT_EQ(run("OMP_TOOL_LIBRARIES=libccnuma-ompt.so " + run_tool + " -l -- true").err, "");
}
