// likwid-pin expressions (ccnuma-run -c, issue 24) against likwid-pin itself inside a guest
// with two NUMA nodes and two sockets, a machine this host is not: `likwid-pin -p -c EXPR`
// prints the CPUs it would pin to, and ccnuma-run's plan must list the same CPUs in the same
// order. likwid-pin is a Lua script; the guest gets it with its interpreter (ccnuma-vm brings a
// script's interpreter and the libraries of ELF files), likwid.lua, liblikwid and liblikwidpin
// (which likwid.lua loads by path, not through ldd), and bash, which likwid.lua starts for some
// of its queries. One guest boot for every expression.
//
// The guest has no SMT: likwid 5.2 reads QEMU's TCG CPU as an "AMD Athlon64 X2" and gives every
// hardware thread of an SMT guest Thread 0 (likwid-topology there lists 0 0 0 0 ... in its Thread
// column for --threads-per-core 2), so its "physical cores first" sort does nothing in the guest
// and it pins in hardware-thread order, which says nothing about likwid on real SMT hardware.
// That order is checked by the golden plans of tests/unit/cpu_expression_test.cpp.

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using test_support::quote;
using test_support::result;
using test_support::run;
using test_support::tagged_lines;

TEST(VmLikwidPin, ExpressionsPinTheCpusLikwidPinPicks) {
    const std::string likwid_pin = CCNUMA_LIKWID_PIN;
    ASSERT_FALSE(likwid_pin.empty()) << "likwid-pin not found: install Debian's likwid (this test compares with it)";
    // 2 sockets x 3 cores, one node per socket: PUs 0-2 on node 0.
    const std::vector<std::string> exprs = {
        "N:0-5",     "S0:0-2",    "S1:1",      "M1:0-2",     "D1:0-1",       "C0:0-2",     "N:1@N:0",
        "S:scatter", "M:scatter", "E:N:6",     "E:N:3:1:2",  "E:S1:2",       "E:N:4:2:3",  "0,5,3",
        "S0:0-1@S1:2,0", "M1:2@0"};
    // Each line of a command's output comes back tagged, so one boot's output sorts itself, and
    // the commands can run side by side: one after another, the 16 likwid-pin runs (a Lua
    // interpreter each, emulated) kept one of the guest's CPUs busy for most of this test's 42 s.
    std::string script = "t() { tag=$1; shift; \"$@\" 2>&1 | while IFS= read -r l; do echo \"$tag $l\"; done; }\n";
    for (std::size_t i = 0; i < exprs.size(); ++i) {
        script += "t l" + std::to_string(i) + " " + likwid_pin + " -p -c '" + exprs[i] + "' &\n";
        script += "t c" + std::to_string(i) + " " + CCNUMA_RUN + " -c '" + exprs[i] + "' --print-plan --json &\n";
    }
    script += "wait\n";
    const std::string lib = "/usr/lib/x86_64-linux-gnu/";
    const result r = run(std::string(CCNUMA_VM) + " --nodes 2 --cores-per-node 3 --copy " +
                         quote(CCNUMA_RUN) + " --copy " + quote(likwid_pin) + " --copy /usr/share/lua/likwid.lua --copy " +
                         lib + "liblikwid.so --copy " + lib + "liblikwidpin.so.5.2 --copy /bin/bash -- sh -c " +
                         quote(script));
    ASSERT_EQ(r.status, 0) << r.out << r.err;

    auto out = tagged_lines(r.out);
    std::vector<std::string> theirs, ours;
    for (std::size_t i = 0; i < exprs.size(); ++i) {
        // likwid-pin -p prints the list on a line of its own; warnings may come with it.
        std::string list;
        for (const auto& line : out["l" + std::to_string(i)])
            if (list.empty() && !line.empty() && line.find_first_not_of("0123456789,") == std::string::npos) list = line;
        theirs.push_back(list);
        std::string pus;
        for (const auto& line : out["c" + std::to_string(i)]) {
            if (line.rfind('{', 0) != 0) continue;
            const auto plan = nlohmann::json::parse(line);
            for (const auto& thread : plan.at("threads"))
                pus += (pus.empty() ? "" : ",") + std::to_string(thread.at("pu").get<unsigned>());
        }
        ours.push_back(pus);
    }
    for (std::size_t i = 0; i < exprs.size(); ++i) {
        EXPECT_FALSE(theirs[i].empty()) << exprs[i] << ": likwid-pin printed nothing in the guest\n" << r.err;
        EXPECT_EQ(ours[i], theirs[i]) << exprs[i];
    }
    if (HasFailure()) ADD_FAILURE() << "the guest's output:\n" << r.out << r.err;
}

}  // namespace
