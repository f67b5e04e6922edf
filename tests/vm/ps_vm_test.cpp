// ccnuma-ps (issue 33) against programs that know their own placement, in a guest of four nodes
// with one CPU each. tests/vm/ps/ps_probe.c, plain C with OpenMP, is built with GCC (libgomp) and
// with clang (libomp); in each mode it writes its truth (move_pages on its array, its pagemap
// and kpageflags, sched_getcpu and the affinity of every thread) and blocks, and `ccnuma-ps
// --json` must agree: pages per node within 1% of the array, zero and huge pages, the policy, the
// layout, every thread's CPU, node and allowed CPUs, and the serial-first-touch verdict on the
// serially written array only. Then, with NUMA balancing switched on and its scan periods
// shortened by the script, a serially written array swept from another node, run under
// `ccnuma-run --watch 1`, must show its local share rising and pages migrated, as the program's
// own move_pages series does.
// One guest boot for everything: each costs about a minute of CPU under TCG.

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using nlohmann::json;
using test_support::quote;
using test_support::result;
using test_support::run;
using test_support::tagged_lines;

const std::vector<std::string> builds = {"gcc", "clang"};
// Each case: the probe's mode and the launcher it runs under (the truth file follows the mode).
struct case_t {
    std::string name, mode, launcher;
};
const std::vector<case_t> cases = {
    {"serial", "serial", ""},
    {"parallel", "parallel", ""},
    {"calloc", "calloc", ""},
    {"interleave", "interleave", ""},
    {"bound", "parallel", std::string(CCNUMA_RUN) + " --quiet --bind 4,scatter --"},
};

struct guest_run {
    result r;
    std::map<std::string, std::vector<std::string>> out;
};

std::string probe_path(const std::string& build) { return build == "gcc" ? PS_PROBE_GCC : PS_PROBE_CLANG; }

const guest_run& guest() {
    static const guest_run g = [] {
        const std::string ps = CCNUMA_PS, ccnuma_run = CCNUMA_RUN;
        // observe TAG PROGRAM MODE [LAUNCHER...]: start the probe, wait for its truth, let
        // ccnuma-ps look, print both under the tag, end the probe.
        std::string script =
            "t() { local tag=$1; shift; \"$@\" 2>&1 | while IFS= read -r l; do echo \"$tag $l\"; done; }\n"
            "observe() {\n"
            "  local name=$1 prog=$2 mode=$3; shift 3\n"
            "  \"$@\" \"$prog\" \"$mode\" /tmp/$name.truth --timeout 300 >/tmp/$name.log 2>&1 &\n"
            "  local pid=$! i=0\n"
            "  while [ ! -e /tmp/$name.truth ] && [ $i -lt 1200 ] && kill -0 $pid 2>/dev/null; do\n"
            "    sleep 0.1; i=$((i+1)); done\n"
            "  t $name.ps " + ps + " --json --min-region 32M $pid\n"
            "  t $name.truth cat /tmp/$name.truth\n"
            "  t $name.log cat /tmp/$name.log\n"
            "  kill $pid; wait $pid 2>/dev/null\n"
            "}\n";
        for (const auto& build : builds)
            for (const auto& c : cases)
                script += "observe " + build + "." + c.name + " " + probe_path(build) + " " + c.mode + " " +
                          c.launcher + "\n";
        // NUMA balancing, as the recipe sets it: on, and scanning every 100 ms.
        script +=
            "echo 1 > /proc/sys/kernel/numa_balancing\n"
            "mount -t debugfs none /sys/kernel/debug 2>/dev/null\n"
            "for f in scan_delay_ms scan_period_min_ms; do echo 100 > /sys/kernel/debug/sched/numa_balancing/$f; "
            "done\n"
            "t bal.settings cat /proc/sys/kernel/numa_balancing /sys/kernel/debug/sched/numa_balancing/scan_delay_ms "
            "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms\n"
            "t bal.run sh -c '" + ccnuma_run + " --watch 1 --watch-json /tmp/bal.json -- " + probe_path("gcc") +
            " balance /tmp/bal.truth --init-cpu 0 --run-cpu 1 --seconds 60; echo \"exit $?\"'\n"
            "t bal.series cat /tmp/bal.json\n"
            "t bal.truth cat /tmp/bal.truth\n";
        guest_run booted;
        booted.r = run(std::string(CCNUMA_VM) + " --nodes 4 --cores-per-node 1 --mem-per-node 512M --copy " + quote(ps) +
                  " --copy " + quote(ccnuma_run) + " --copy " + quote(PS_PROBE_GCC) + " --copy " +
                  quote(PS_PROBE_CLANG) + " -- sh -c " + quote(script));
        booted.out = tagged_lines(booted.r.out);
        return booted;
    }();
    return g;
}

// The lines under a tag, for messages.
std::string lines(const std::string& tag) {
    const auto it = guest().out.find(tag);
    return it == guest().out.end() ? "(nothing)" : testing::PrintToString(it->second);
}

// |a - b| <= tolerance, with both figures in the message.
#define EXPECT_WITHIN(a, b, tolerance) EXPECT_LE(std::labs((a) - (b)), (tolerance)) << #a " = " << (a) << ", " #b " = " << (b)

// The lines under a tag, joined: one JSON document.
json document(const std::string& tag) {
    const auto& g = guest();
    const auto it = g.out.find(tag);
    if (it == g.out.end()) return json();
    std::string text;
    for (const auto& l : it->second) text += l + "\n";
    return json::parse(text, nullptr, false);
}

std::uint64_t address(const json& region, const char* key) {
    const auto& v = region.at(key);
    return v.is_string() ? std::stoull(v.get<std::string>(), nullptr, 16) : v.get<std::uint64_t>();
}

// The region of a snapshot that holds [start, end); null if none does.
json region_holding(const json& snapshot, std::uint64_t start, std::uint64_t end) {
    for (const auto& r : snapshot.at("regions"))
        if (r.at("kind") != "other" && address(r, "start") <= start && address(r, "end") >= end) return r;
    return json();
}

long pages_on(const json& pages, int node) {
    const auto it = pages.find(std::to_string(node));
    return it == pages.end() ? 0 : it->get<long>();
}

class VmPs : public ::testing::Test {
protected:
    void SetUp() override {
        const auto& g = guest();
        ASSERT_EQ(g.r.status, 0) << g.r.out << g.r.err;
    }
    void TearDown() override {
        if (HasFailure())  // once is enough: the rest of a large output is in the failures above
            std::fprintf(stderr, "the guest's output (first 200000 bytes):\n%s\n%s\n", guest().r.out.substr(0, 200000).c_str(),
                         guest().r.err.c_str());
    }
};

TEST_F(VmPs, EveryProgramsPagesThreadsAndVerdictsMatchItsOwnTruth) {
    for (const auto& build : builds)
        for (const auto& c : cases) {
            const std::string tag = build + "." + c.name;
            SCOPED_TRACE(tag + " (" + probe_path(build) + " " + c.mode + (c.launcher.empty() ? "" : " under ccnuma-run --bind 4,scatter") + ")");
            const json truth = document(tag + ".truth"), ps = document(tag + ".ps");
            ASSERT_TRUE(truth.is_object()) << "no truth; the probe said:\n" << lines(tag + ".log");
            ASSERT_TRUE(ps.is_object()) << "ccnuma-ps said:\n" << lines(tag + ".ps");
            EXPECT_EQ(ps.at("pid"), truth.at("pid"));

            // Threads: the same TIDs, each on the CPU sched_getcpu gave, that CPU's node (CPU i is
            // node i in this guest), the same allowed CPUs.
            std::map<long, json> seen;
            for (const auto& t : ps.at("threads")) seen[t.at("tid").get<long>()] = t;
            ASSERT_EQ(seen.size(), truth.at("threads").size()) << ps.at("threads").dump();
            std::set<int> nodes;
            for (const auto& t : truth.at("threads")) {
                const long tid = t.at("tid");
                ASSERT_TRUE(seen.count(tid)) << "thread " << tid << " missing: " << ps.at("threads").dump();
                const json& s = seen[tid];
                EXPECT_EQ(s.at("cpu"), t.at("cpu")) << "thread " << tid;
                EXPECT_EQ(s.at("node"), t.at("cpu")) << "thread " << tid << ": CPU i is on node i here";
                EXPECT_EQ(s.at("allowed"), t.at("allowed")) << "thread " << tid;
                nodes.insert(t.at("cpu").get<int>());
            }
            if (c.name == "bound") {
                EXPECT_EQ(nodes.size(), 4u) << "4,scatter puts one thread on each node";
                for (const auto& t : truth.at("threads")) EXPECT_EQ(t.at("allowed").size(), 1u) << t.dump();
            }

            // The array: pages per node within 1% of its pages, zero and huge pages, policy, layout.
            const json& a = truth.at("regions").at(0);
            const std::uint64_t start = a.at("start"), end = a.at("end");
            const long total = static_cast<long>((end - start) / truth.at("page_size").get<std::uint64_t>());
            const json r = region_holding(ps, start, end);
            ASSERT_TRUE(r.is_object()) << "no region holds the array " << std::hex << start << "-" << end << ": "
                                       << ps.at("regions").dump();
            EXPECT_LE(address(r, "end") - address(r, "start"), end - start + 2 * 4096)
                << "the array's region is another mapping's too: " << r.dump();
            const long tolerance = total / 100;
            for (int node = 0; node < 4; ++node)
                EXPECT_WITHIN(pages_on(r.at("pages"), node), pages_on(a.at("pages"), node), tolerance)
                    << "node " << node << ": " << r.at("pages").dump() << " against move_pages " << a.at("pages").dump();
            ASSERT_FALSE(r.at("zero_pages").is_null()) << "zero pages unknown to ccnuma-ps as root: " << r.dump();
            EXPECT_WITHIN(r.at("zero_pages").get<long>(), a.at("zero_pages").get<long>(), tolerance);
            if (c.name == "calloc") {
                EXPECT_GT(a.at("zero_pages").get<long>(), total * 99 / 100) << "the truth itself";
            }
            ASSERT_FALSE(r.at("huge_pages").is_null()) << r.dump();
            EXPECT_WITHIN(r.at("huge_pages").get<long>(), a.at("huge_pages").get<long>(), tolerance);
            EXPECT_EQ(r.at("policy"), a.at("policy"));
            // Every 5% part that lies inside one span of ccnuma-ps's layout has that span's node.
            const json& parts = a.at("parts");
            ASSERT_FALSE(r.at("layout").empty()) << r.dump();
            for (const auto& span : r.at("layout")) {
                const double b = span.at("begin"), e = span.at("end");
                for (std::size_t p = 0; p < parts.size(); ++p) {
                    const double count = static_cast<double>(parts.size());
                    const double pb = static_cast<double>(p) / count, pe = static_cast<double>(p + 1) / count;
                    if (pb >= b - 1e-9 && pe <= e + 1e-9) {
                        EXPECT_EQ(span.at("node"), parts[p]) << "part " << p << " in span " << span.dump();
                    }
                }
            }

            // The serial first-touch verdict names the serially written array, and only it.
            bool serial_verdict = false;
            for (const auto& v : ps.at("verdicts"))
                if (v.at("kind") == "serial_first_touch" &&
                    v.at("subject").get<std::string>().find(r.at("start").get<std::string>()) != std::string::npos)
                    serial_verdict = true;
            EXPECT_EQ(serial_verdict, c.name == "serial") << ps.at("verdicts").dump();
        }
}

TEST_F(VmPs, NumaBalancingHealsASerialInitUnderCcnumaRunWatch) {
    const auto& g = guest();
    const auto settings = g.out.count("bal.settings") ? g.out.at("bal.settings") : std::vector<std::string>{};
    ASSERT_EQ(settings, (std::vector<std::string>{"1", "100", "100"})) << "balancing on, scanning every 100 ms";
    const auto& lines = g.out.count("bal.run") ? g.out.at("bal.run") : std::vector<std::string>{};
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back(), "exit 0") << "ccnuma-run exits with its command's status";
    const json truth = document("bal.truth"), series = document("bal.series");
    // PS_VM_TEST_SERIES=FILE keeps the series (tests/tools/data/ps_watch_balancing.json came from one).
    if (const char* keep = std::getenv("PS_VM_TEST_SERIES"); keep && *keep && series.is_object())
        std::ofstream(keep) << series.dump() << "\n";
    ASSERT_TRUE(truth.is_object()) << g.r.out;
    ASSERT_TRUE(series.is_object()) << testing::PrintToString(lines);
    const int init_node = truth.at("init_node"), run_node = truth.at("run_node");
    ASSERT_NE(init_node, run_node);

    // The program's own view: written on the init node, and all of it moved to the run node.
    const json& own = truth.at("samples");
    ASSERT_GE(own.size(), 2u);
    const json& a = own.front().at("region");
    const std::uint64_t start = a.at("start"), end = a.at("end");
    const long total = static_cast<long>((end - start) / truth.at("page_size").get<std::uint64_t>());
    EXPECT_GE(pages_on(a.at("pages"), init_node), total * 9 / 10) << a.dump();
    EXPECT_GE(pages_on(own.back().at("region").at("pages"), run_node), total * 99 / 100)
        << "NUMA balancing did not move the array in " << own.back().at("elapsed_s") << " s: " << own.back().dump();

    // ccnuma-run's series: the share on the run node rises from below half to the program's own
    // final share, and the machine's pages migrated grow by at least what moved.
    std::vector<double> share;
    std::uint64_t migrated = 0, thread_migrated = 0;
    for (const auto& s : series.at("samples")) {
        migrated += s.at("vmstat_pages_migrated").get<std::uint64_t>();
        for (const auto& [tid, n] : s.at("thread_pages_migrated").items()) thread_migrated += n.get<std::uint64_t>();
        const json r = region_holding(s, start, end);
        if (!r.is_object() || r.at("resident").get<long>() < total * 9 / 10) continue;  // before the array is written
        share.push_back(static_cast<double>(pages_on(r.at("pages"), run_node)) / static_cast<double>(total));
    }
    ASSERT_GE(share.size(), 3u) << "samples with the array written: " << series.dump().substr(0, 4000);
    EXPECT_LT(share.front(), 0.5);
    EXPECT_GE(share.back(), 0.9);
    EXPECT_GT(share.back(), share.front() + 0.4);
    const long moved = pages_on(own.back().at("region").at("pages"), run_node) - pages_on(a.at("pages"), run_node);
    EXPECT_GE(migrated, static_cast<std::uint64_t>(moved) * 9 / 10) << "numa_pages_migrated over the series";
    EXPECT_GE(thread_migrated, static_cast<std::uint64_t>(moved) * 9 / 10) << "the task's numa_pages_migrated";
    bool migration_verdict = false;
    for (const auto& v : series.at("verdicts")) migration_verdict = migration_verdict || v.at("kind") == "pages_migrated";
    EXPECT_TRUE(migration_verdict) << series.at("verdicts").dump();
    // The report at the child's exit names the verdicts too (ccnuma-run prints it on stderr).
    bool reported = false;
    for (const auto& l : lines) reported = reported || l.find("migrated") != std::string::npos;
    EXPECT_TRUE(reported) << testing::PrintToString(lines);
}

}  // namespace

// Both probes are built whenever the tests are: tests/CMakeLists.txt requires gcc and clang.
int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
