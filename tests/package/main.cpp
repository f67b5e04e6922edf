// Plans 4,scatter on a two-package synthetic machine through the installed headers and library;
// prints the PUs so the test can compare them with the library's documented result.
#include <ccnuma/ccnuma.hpp>

#include <cstdio>

int main() {
    const auto topo = ccnuma::topology::load({.source = "pack:2 numa:2 core:2 pu:1", .cpuset = {}, .use_environment = false});
    const auto plan = ccnuma::make_plan(topo, ccnuma::binding_spec::parse("4,scatter"));
    for (const auto& t : plan.threads()) std::printf("%u ", t.pu);
    std::printf("\n%s\n", ccnuma::library_version());
    return 0;
}
