// Binds a nested OpenMP program in process, without ccnuma-run, and checks the result from
// inside every thread.
//
//   ./nested_binding                 # plan: <NUMA nodes>,scatter,<cores per node>,subcompact
//   ./nested_binding 2,scatter,2,subcompact

#include <ccnuma/ccnuma.hpp>

#include <omp.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    try {
        const auto& topo = ccnuma::topology::current();
        std::string spec;
        if (argc > 1) {
            spec = argv[1];
        } else {
            const std::size_t nodes = std::max<std::size_t>(1, topo.numa_nodes().size());
            spec = std::to_string(nodes) + ",scatter," + std::to_string(std::max<std::size_t>(1, topo.cores().size() / nodes)) +
                   ",subcompact";
        }
        ccnuma::set_nesting_info(spec);
        const auto& plan = ccnuma::current_plan();
        std::fputs(plan.to_text().c_str(), stdout);

        // The pattern for real code: bind at the start of every parallel region.
#pragma omp parallel num_threads(plan.team_size(1))
        {
            ccnuma::bind_this_thread();
#pragma omp parallel num_threads(plan.team_size(2))
            {
                ccnuma::bind_this_thread();
            }
        }

        const auto check = ccnuma::report_binding({.bind_first = true});
        std::fputs(check.to_text().c_str(), stdout);
        return check.ok() ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nested_binding: %s\n", e.what());
        return 1;
    }
}
