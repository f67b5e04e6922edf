#include <ccnuma/topology.hpp>
#include <ccnuma/topology.hpp>
int ccnuma_topology_hpp_compiled = 1;
