// libFuzzer target: ccnuma::cpu_location_pus and cpu_location_nodes, hwloc-calc's locations
// (-C, -N, -m, -i, -p, -P, -w, CCNUMA_CPUSET). The first byte picks a synthetic machine
// (fuzz_topologies.hpp). A location that parses gives allowed PUs, ascending and unique, and
// NUMA nodes the machine has; the PUs written back as a hex mask parse to the same PUs; and
// is_cpu_location(), which callers use to tell a location from a list or a likwid-pin
// expression, says yes to every location that parses.

#include "fuzz_check.hpp"
#include "fuzz_topologies.hpp"

#include <ccnuma/cpu_location.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

bool sorted_unique(const std::vector<unsigned>& v) {
    return std::is_sorted(v.begin(), v.end()) && std::adjacent_find(v.begin(), v.end()) == v.end();
}

// hwloc's mask syntax: 32-bit words, highest first.
std::string hex_mask(const std::vector<unsigned>& pus) {
    std::vector<std::uint32_t> words(pus.back() / 32 + 1, 0);
    for (unsigned pu : pus) words[pu / 32] |= std::uint32_t{1} << (pu % 32);
    std::string out;
    for (auto w = words.rbegin(); w != words.rend(); ++w) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%08x", *w);
        out += (out.empty() ? "" : ",") + std::string(buf);
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const ccnuma::topology& topo = fuzz::topology_for(data[0]);
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    bool parsed = false;
    fuzz::expect_value_or_error([&] {
        const auto pus = ccnuma::cpu_location_pus(text, topo);
        parsed = true;
        fuzz::check(!pus.empty() && sorted_unique(pus), "the PUs are empty, or not sorted and unique");
        const auto allowed = topo.allowed_cpus();
        fuzz::check(std::includes(allowed.begin(), allowed.end(), pus.begin(), pus.end()), "a PU outside the allowed set");
        fuzz::check(ccnuma::cpu_location_pus(hex_mask(pus), topo) == pus, "the PUs written as a hex mask parse differently");
    });
    fuzz::expect_value_or_error([&] {
        const auto nodes = ccnuma::cpu_location_nodes(text, topo);
        parsed = true;
        fuzz::check(!nodes.empty() && sorted_unique(nodes), "the nodes are empty, or not sorted and unique");
        for (unsigned n : nodes)
            fuzz::check(std::any_of(topo.numa_nodes().begin(), topo.numa_nodes().end(),
                                    [&](const ccnuma::numa_node& m) { return m.os_index == n; }),
                        "a NUMA node the machine does not have");
    });
    if (parsed) fuzz::check(ccnuma::is_cpu_location(text), "is_cpu_location() refuses a location that parses");
    return 0;
}
