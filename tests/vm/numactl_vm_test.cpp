// ccnuma-run's numactl letters against Debian's numactl itself (issue 24), inside a guest with
// four nodes of one CPU each: for every memory policy and CPU binding both launchers take, the
// same program (memory_policy_probe, 8 MiB written by one thread) must find every page on the
// same node, page by page; and `--show` must print what numactl's --show prints, field by field,
// for numactl's labels. numactl is copied in with libnuma (ccnuma-vm brings an ELF file's
// libraries). Debian's numactl 2.0.16 has no -w (weighted interleave), so -w is not compared.
// One guest boot for everything: each costs about a minute of CPU under TCG.

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using test_support::quote;
using test_support::result;
using test_support::run;
using test_support::tagged_lines;

struct case_t {
    std::string options, probe_args;
};

// Interleaving counts pages from the mapping's address, so both launchers must give the probe
// the same addresses: the guest runs without address-space randomisation.
const std::vector<case_t> placements = {
    {"-i all", "--cpu 0"},  {"-i 1,3", "--cpu 0"},   {"-i +1-2", "--cpu 0"}, {"-m 2", "--cpu 0"},
    {"-m 1,2", "--cpu 3"},  {"-m +3", "--cpu 0"},    {"-p 3", "--cpu 0"},    {"-P 1,2", "--cpu 0"},
    {"-P 1,2", "--cpu 2"},  {"-N 2", ""},            {"-C 3", ""},           {"--localalloc -C 1", ""},
    {"-N 1 -m 3", ""},      {"-C 2 -i 0,1", ""},
};
const std::vector<std::string> shows = {"", "-i all", "-m 1", "-m 1,3 -C 2", "-p 2", "-P 1,2", "-N 1", "-C 3",
                                        "--localalloc", "-i +0-1"};

// Where ccnuma-run's --show still differs from numactl 2.0.16's, pinned so that a change shows:
// - under --localalloc numactl prints "policy: local" and a "preferred node: " with neither value
//   nor newline (physcpubind runs on in the same line); ccnuma::current_memory_policy() reports
//   MPOL_LOCAL and MPOL_DEFAULT both as mode::local, so ccnuma-run prints the default's lines;
// - under -P 1,2 numactl's libnuma names node 0, which is not in the set, as the preferred node;
//   ccnuma-run names the set's first node;
const std::map<std::pair<std::string, std::string>, std::string> known_differences = {
    {{"--localalloc", "policy"}, "default"},
    {{"--localalloc", "preferred node"}, "current"},
    {{"-P 1,2", "preferred node"}, "1 (preferred-many)"},
};

// Under an interleave policy both print the kernel's next interleave node of their own process
// (get_mempolicy(MPOL_F_NODE)). It moves with each process's kernel allocations (numactl's was 0
// in most guest runs, 2 in one fresh-root CI run of 2026-11-27), so the two need not agree:
// each must be a node of the interleave mask, in numactl's format.
bool names_a_node_of(const std::string& value, const std::string& mask, const std::string& suffix) {
    if (value.size() <= suffix.size() || value.compare(value.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
    const std::string node = value.substr(0, value.size() - suffix.size());
    std::istringstream nodes(mask);
    for (std::string n; nodes >> n;)
        if (n == node) return true;
    return false;
}

// numactl --show's "label: value" lines, values with their blanks collapsed (libnuma's warnings,
// which numactl 2.0.16 prints in the guest as "libnuma.c:...", and ccnuma's additions aside).
std::map<std::string, std::string> fields(const std::vector<std::string>& lines) {
    static const std::vector<std::string> labels = {"policy",   "preferred node", "interleavemask", "interleavenode",
                                                    "physcpubind", "cpubind",     "nodebind",       "membind",
                                                    "preferred"};
    std::map<std::string, std::string> out;
    for (const auto& line : lines) {
        const auto colon = line.find(':');
        if (colon == std::string::npos || std::find(labels.begin(), labels.end(), line.substr(0, colon)) == labels.end())
            continue;
        std::istringstream words(line.substr(colon + 1));
        std::string value;
        for (std::string w; words >> w;) value += (value.empty() ? "" : " ") + w;
        out.emplace(line.substr(0, colon), value);
    }
    return out;
}

TEST(VmNumactl, EveryPolicyPlacesEveryPageWhereNumactlDoesAndShowAgrees) {
    const std::string numactl = CCNUMA_NUMACTL;
    ASSERT_FALSE(numactl.empty()) << "numactl not found: install Debian's numactl (this test compares with it)";
    const std::string ccnuma_run = CCNUMA_RUN, probe = MEMORY_POLICY_PROBE;
    // Each line of a command's output comes back tagged, so one boot's output sorts itself.
    std::string script =
        "echo 0 > /proc/sys/kernel/randomize_va_space\n"
        "t() { tag=$1; shift; \"$@\" 2>&1 | while IFS= read -r l; do echo \"$tag $l\"; done; }\n";
    for (std::size_t i = 0; i < placements.size(); ++i) {
        const auto& c = placements[i];
        const std::string run_probe = " -- " + probe + " --mib 8 --json --page-nodes " + c.probe_args;
        script += "t n" + std::to_string(i) + " " + numactl + " " + c.options + run_probe + "\n";
        script += "t c" + std::to_string(i) + " " + ccnuma_run + " " + c.options + run_probe + "\n";
    }
    for (std::size_t i = 0; i < shows.size(); ++i) {
        // Without options ccnuma-run runs nothing (it asks for a spec or a policy), so the
        // process's own state is shown directly.
        const std::string launch_n = shows[i].empty() ? "" : numactl + " " + shows[i] + " -- ";
        const std::string launch_c = shows[i].empty() ? "" : ccnuma_run + " " + shows[i] + " -- ";
        script += "t N" + std::to_string(i) + " " + launch_n + numactl + " --show\n";
        script += "t C" + std::to_string(i) + " " + launch_c + ccnuma_run + " --show\n";
    }
    const result r = run(std::string(CCNUMA_VM) + " --nodes 4 --cores-per-node 1 --mem-per-node 256M --copy " +
                         quote(numactl) + " --copy " + quote(ccnuma_run) + " --copy " + quote(probe) + " -- sh -c " +
                         quote(script));
    ASSERT_EQ(r.status, 0) << r.out << r.err;

    auto out = tagged_lines(r.out);

    for (std::size_t i = 0; i < placements.size(); ++i) {
        SCOPED_TRACE("placement under \"" + placements[i].options + "\", probe " + placements[i].probe_args);
        const auto& theirs = out["n" + std::to_string(i)];
        const auto& ours = out["c" + std::to_string(i)];
        ASSERT_EQ(theirs.size(), 1u) << r.out;
        ASSERT_EQ(ours.size(), 1u) << r.out;
        const auto a = nlohmann::json::parse(theirs[0]), b = nlohmann::json::parse(ours[0]);
        EXPECT_GE(a.at("pages").get<long long>(), 2048);  // 8 MiB, and one more page where unaligned
        EXPECT_EQ(b.at("pages"), a.at("pages"));
        EXPECT_EQ(b.at("policy"), a.at("policy"));
        EXPECT_EQ(b.at("cpu"), a.at("cpu"));
        EXPECT_EQ(b.at("per_node"), a.at("per_node"));
        const std::string pa = a.at("page_nodes").get<std::string>(), pb = b.at("page_nodes").get<std::string>();
        EXPECT_EQ(pa.find('?'), std::string::npos) << "numactl's probe has pages on no node";
        ASSERT_EQ(pb.size(), pa.size());
        for (std::size_t p = 0; p < pa.size(); ++p)
            if (pb[p] != pa[p]) {
                ADD_FAILURE() << "page " << p << ": node " << pb[p] << " under ccnuma-run, " << pa[p] << " under numactl";
                break;
            }
    }
    for (std::size_t i = 0; i < shows.size(); ++i) {
        SCOPED_TRACE("--show under \"" + shows[i] + "\"");
        const auto theirs = fields(out["N" + std::to_string(i)]);
        const auto ours = fields(out["C" + std::to_string(i)]);
        ASSERT_FALSE(theirs.empty()) << r.out;
        for (const auto& [label, value] : theirs) {
            if (theirs.count("interleavemask") && (label == "interleavenode" || label == "preferred node")) {
                const std::string mask = theirs.at("interleavemask"), suffix = label == "interleavenode" ? "" : " (interleave next)";
                EXPECT_TRUE(names_a_node_of(value, mask, suffix)) << "numactl's " << label << ": " << value;
                EXPECT_TRUE(ours.count(label) && names_a_node_of(ours.at(label), mask, suffix))
                    << "ccnuma-run's " << label << ": " << (ours.count(label) ? ours.at(label) : "(none)") << ", mask " << mask;
                continue;
            }
            const auto known = known_differences.find({shows[i], label});
            if (known != known_differences.end()) {
                EXPECT_EQ(ours.count(label) ? ours.at(label) : "(none)", known->second) << label << ", numactl: " << value;
                continue;
            }
            const auto it = ours.find(label);
            if (it == ours.end())
                ADD_FAILURE() << "ccnuma-run --show has no \"" << label << ":\" line (numactl: \"" << value << "\")";
            else
                EXPECT_EQ(it->second, value) << label;
        }
    }
    if (HasFailure()) ADD_FAILURE() << "the guest's output:\n" << r.out << r.err;
}

}  // namespace
