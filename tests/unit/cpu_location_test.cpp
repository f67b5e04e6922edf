// hwloc locations (cpu_location.hpp) against hwloc-calc itself: the same location on the same
// topology, with and without a restriction, must give the same PUs
// (`hwloc-calc -i TOPO [--restrict MASK] --physical-output --intersect pu`, one LOCATION a line).

#include <ccnuma/cpu_location.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/topology.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

const std::string dir = CCNUMA_TOPOLOGY_DIR;

ccnuma::topology load(const std::string& source, const std::string& cpuset = "") {
    ccnuma::topology_options o;
    o.source = source;
    o.cpuset = cpuset;
    o.use_environment = false;
    return ccnuma::topology::load(o);
}

// Turns one line of hwloc-calc's output (PUs in logical order) into ccnuma's form (OS indexes
// ascending), or "error" where hwloc-calc selected nothing.
std::string sorted_pus(const std::string& line) {
    if (line.empty()) return "error";
    std::vector<unsigned> pus;
    for (std::size_t i = 0; i < line.size();) {
        std::size_t j = line.find(',', i);
        if (j == std::string::npos) j = line.size();
        pus.push_back(static_cast<unsigned>(std::stoul(line.substr(i, j - i))));
        i = j + 1;
    }
    std::sort(pus.begin(), pus.end());
    std::string out;
    for (unsigned pu : pus) out += (out.empty() ? "" : ",") + std::to_string(pu);
    return out;
}

// hwloc-calc's answers to every location, in one process: with no location among its arguments
// it reads one per line of its standard input and answers each on a line of its own, an empty
// one where the location fails or selects nothing. One process per topology rather than one per
// location: 968 process starts took 38 s of every build's test stage (17 and 21 s for the two
// tests in the gcc stage of a fresh CI run, 22 and 22 s under ASan).
std::vector<std::string> hwloc_calc(const std::string& source, const std::string& restrict_mask,
                                    const std::vector<std::string>& lines) {
    // Appended piece by piece: GCC 12's -Warray-bounds misreads `std::string(...) + "..."` once
    // inlined (GCC bug 105651, fixed in 13).
    std::string cmd = "printf '%s\\n'";
    for (const auto& l : lines) cmd += " '" + l + "'";
    cmd += " | ";
    cmd += CCNUMA_HWLOC_CALC;
    cmd += " -i '" + source + "'";
    if (!restrict_mask.empty()) cmd += " --restrict " + restrict_mask;
    cmd += " --physical-output --intersect pu 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return {};
    std::string out;
    char buf[4096];
    std::size_t got = 0;
    while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
    if (pclose(p) != 0) return {};
    std::vector<std::string> answers;
    for (std::size_t i = 0; i < out.size();) {
        std::size_t j = out.find('\n', i);
        if (j == std::string::npos) j = out.size();
        std::string line = out.substr(i, j - i);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        // Its prompt goes to standard output too.
        if (line.rfind("Waiting for locations", 0) != 0) answers.push_back(sorted_pus(line));
        i = j + 1;
    }
    return answers;
}

std::string ours(const std::string& location, const ccnuma::topology& topo) {
    try {
        std::string out;
        for (unsigned pu : ccnuma::cpu_location_pus(location, topo)) out += (out.empty() ? "" : ",") + std::to_string(pu);
        return out;
    } catch (const ccnuma::error&) {
        return "error";
    }
}

// An hwloc bitmap string ("0x000000f0") of PUs.
std::string mask_of(const std::vector<unsigned>& pus) {
    unsigned top = 0;
    for (unsigned p : pus) top = std::max(top, p);
    std::vector<std::uint32_t> words(top / 32 + 1, 0);
    for (unsigned p : pus) words[p / 32] |= 1u << (p % 32);
    std::string out;
    for (std::size_t i = words.size(); i-- > 0;) {
        char w[16];
        std::snprintf(w, sizeof w, "0x%08x", words[i]);
        out += (out.empty() ? "" : ",") + std::string(w);
    }
    return out;
}

const std::vector<std::string> locations = {
    "pu:0", "pu:3", "pu:all", "pu:odd", "core:0", "core:1-2", "core:all", "core:even", "core:odd", "core:2:3",
    "core:1-", "package:0", "package:1", "socket:1", "pack:all", "numa:0", "numa:1", "node:1", "numa:all",
    "numa:odd", "l3:0", "l3cache:1", "L3:all", "l2:0", "l2:1-2", "die:0", "die:1", "machine:0",
    "package:1.core:1", "package:0.core:0-1.pu:1", "numa:1.core:0", "core:all.pu:0", "package:1.numa:0",
    "numa:1.pu:all", "l3:0.core:1", "die:1.core:0", "0x5", "0x3,0x0", "core:0 core:2", "core:0-3 ~pu:1",
    "package:0 xcore:1-3", "core:0 xcore:0-1", "group:0", "core:9999"};

void compare_all(const std::string& source, const std::vector<unsigned>& restriction = {}) {
    const auto topo = load(source, restriction.empty() ? "" : ccnuma::format_list(restriction));
    const std::string mask = restriction.empty() ? "" : mask_of(restriction);
    // hwloc-calc splits a line at its blanks into arguments, as a shell splits a command line.
    const auto theirs = hwloc_calc(source, mask, locations);
    ASSERT_EQ(theirs.size(), locations.size())
        << source << ": hwloc-calc answered " << theirs.size() << " lines (none: it failed, or popen did)";
    int both = 0;
    for (std::size_t i = 0; i < locations.size(); ++i) {
        const std::string mine = ours(locations[i], topo);
        EXPECT_EQ(mine, theirs[i]) << source << (mask.empty() ? "" : " --restrict " + mask) << " " << locations[i];
        if (theirs[i] != "error") ++both;
    }
    EXPECT_GT(both, 10) << source;  // most locations exist, so the comparison says something
}

const std::vector<std::string> sources = {
    "pack:2 numa:2 l3:1 core:4 pu:2",
    "pack:2 die:2 l3:1 core:3 pu:2",
    "pack:4 core:2 pu:1",
    "pack:2 numa:4 core:8 pu:2",
    dir + "/two-socket-snc.xml",
    dir + "/real/16em64t-4s2c2t.xml",
    dir + "/real/64intel64-fakeKNL-SNC4-hybrid.xml",
    dir + "/real/linux-96em64t-4n4d3ca2co.xml",
    dir + "/real/linux-48amd64-4d2n6c-sparse.xml",
    dir + "/real/28intel64-2p2g7c-CoDgroups.v1tov2.xml",
    dir + "/real/linux-fakecpuid1f-64intel64-2p4d2n2c2t.xml",
};

TEST(CpuLocation, SameAsHwlocCalc) {
    ASSERT_NE(std::string(CCNUMA_HWLOC_CALC).find("hwloc-calc"), std::string::npos)
        << "hwloc-calc not found: install Debian's hwloc package (this test compares with it)";
    for (const auto& s : sources) compare_all(s);
}

TEST(CpuLocation, SameAsHwlocCalcUnderRestriction) {
    ASSERT_NE(std::string(CCNUMA_HWLOC_CALC).find("hwloc-calc"), std::string::npos)
        << "hwloc-calc not found: install Debian's hwloc package (this test compares with it)";
    for (const auto& s : sources) {
        // Drop the first PU of every core but one and the first core entirely: renumbering shows.
        const auto topo = load(s);
        std::vector<unsigned> keep;
        for (std::size_t i = 1; i < topo.cores().size(); ++i) {
            const auto& pus = topo.cores()[i].pus;
            for (std::size_t j = (i == 2 && pus.size() > 1 ? 1 : 0); j < pus.size(); ++j) keep.push_back(pus[j]);
        }
        std::sort(keep.begin(), keep.end());
        compare_all(s, keep);
    }
}

TEST(CpuLocation, NodesOfALocation) {
    const auto topo = load("pack:2 numa:2 core:2 pu:2");
    EXPECT_EQ(ccnuma::cpu_location_nodes("numa:1", topo), (std::vector<unsigned>{1}));
    EXPECT_EQ(ccnuma::cpu_location_nodes("package:1", topo), (std::vector<unsigned>{2, 3}));
    EXPECT_EQ(ccnuma::cpu_location_nodes("package:1.numa:1", topo), (std::vector<unsigned>{3}));
    EXPECT_EQ(ccnuma::cpu_location_nodes("core:0-2", topo), (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(ccnuma::cpu_location_nodes("numa:all ~numa:2", topo), (std::vector<unsigned>{0, 1, 3}));
}

TEST(CpuLocation, ErrorsNameThePosition) {
    const auto topo = load("pack:2 core:4 pu:2");
    const auto message = [&](const std::string& loc) {
        try {
            (void)ccnuma::cpu_location_pus(loc, topo);
        } catch (const ccnuma::error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("core:x"), "ccnuma: bad hwloc location \"core:x\": unexpected character \"x\" at position 5 "
                                 "(expected type:index as hwloc-calc takes it, e.g. core:0-3, package:0.core:1, "
                                 "numa:1, pu:all, 0x3)");
    EXPECT_NE(message("package:0.core:4").find("core:4 at position 10 does not exist: there are 4 cores there, "
                                               "core:0-3"),
              std::string::npos)
        << message("package:0.core:4");
    EXPECT_NE(message("l1:0").find("ccnuma's topology has no level \"l1\""), std::string::npos);
    // After an item, a multibyte character is quoted whole, as everywhere else (src/scan.hpp).
    EXPECT_NE(message("core:0\u00e9").find("unexpected character \"\u00e9\" at position 6"), std::string::npos)
        << message("core:0\u00e9");
    EXPECT_NE(message("core:3-1").find("descending range at position 7"), std::string::npos);
    EXPECT_NE(message("0x100000").find("no allowed PU is left"), std::string::npos);
}

TEST(CpuLocation, TellsLocationsFromListsAndLikwid) {
    for (const char* yes : {"core:0", "pu:3", "numa:1", "package:0.core:1", "0x3", "PU:0", "socket:1", "~core:1", "l1:0"})
        EXPECT_TRUE(ccnuma::is_cpu_location(yes)) << yes;
    for (const char* no : {"0-3", "all", "+0", "!1", "N:0-3", "S0:1", "M1:0", "E:N:2", "C0:1", "S:scatter", ""})
        EXPECT_FALSE(ccnuma::is_cpu_location(no)) << no;
}

}  // namespace
