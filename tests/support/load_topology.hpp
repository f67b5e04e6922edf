#pragma once
// Loads a topology for a test from an explicit source, never from the environment, so a
// CCNUMA_TOPOLOGY set by the caller cannot change what a test sees.

#include <ccnuma/topology.hpp>

#include <string>

namespace test_support {

inline ccnuma::topology load(const std::string& source, const std::string& cpuset = {}) {
    ccnuma::topology_options o;
    o.source = source;
    o.cpuset = cpuset;
    o.use_environment = false;
    return ccnuma::topology::load(o);
}

}  // namespace test_support
