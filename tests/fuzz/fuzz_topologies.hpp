#pragma once
// The synthetic machines the CPU-expression and location fuzz targets parse against, picked by
// the input's first byte: two packages of two NUMA nodes with SMT, the same machine restricted
// so that a NUMA node, a package or a core's sibling has no allowed PU (the cases where
// "a domain with no allowed PU does not exist" must hold), one without SMT, and one with dies
// and L3 caches. Loaded once: hwloc is not what these targets exercise.

#include <ccnuma/topology.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fuzz {

inline const std::vector<ccnuma::topology>& topologies() {
    static const std::vector<ccnuma::topology> all = [] {
        const std::pair<const char*, const char*> shapes[] = {
            {"pack:2 numa:2 core:3 pu:2", ""},
            {"pack:2 numa:2 core:3 pu:2", "1-5,12,13,20-23"},  // node 1 empty, cores with one PU
            {"pack:2 numa:2 core:3 pu:2", "0-11"},             // package 1 empty
            {"pack:1 numa:2 core:4 pu:1", ""},
            {"pack:2 die:2 l3:1 numa:1 core:2 pu:2", "0-13"},
        };
        std::vector<ccnuma::topology> out;
        for (const auto& [source, cpuset] : shapes) {
            ccnuma::topology_options o;
            o.source = source;
            o.cpuset = cpuset;
            o.use_environment = false;
            out.push_back(ccnuma::topology::load(o));
        }
        return out;
    }();
    return all;
}

inline const ccnuma::topology& topology_for(std::uint8_t first_byte) {
    return topologies()[first_byte % topologies().size()];
}

}  // namespace fuzz
