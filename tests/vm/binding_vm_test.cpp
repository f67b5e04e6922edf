// Runs inside ccnuma-vm on two nodes of two cores, under `ccnuma-run --bind 4,scatter`
// (tests/CMakeLists.txt), so through the OpenMP runtime's places: every team of 1 to 4 threads
// runs its thread t on the plan's PU t, as bind_this_thread() and the OMPT tool would put it.
// Each thread's mask comes from the kernel (sched_getaffinity) and its node from getcpu(), not
// from the library. A team smaller than the plan is what seg::per_node builds (one thread per
// node) and what a program that asks for fewer threads gets: under OMP_PROC_BIND=spread at the
// innermost level, which ccnuma-run exported until 2026-12-02, a team of 2 took places 0 and 2
// of "4,scatter" (PUs 0 and 1), both on node 0.

#include <ccnuma/binding.hpp>
#include <ccnuma/emulated_machine.hpp>

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct where {
    std::vector<unsigned> mask;
    unsigned node = 0;
    bool node_known = false;  ///< getcpu() answered
};

// Each thread's affinity mask and node, in a team of `team` threads.
std::vector<where> team_of(int team) {
    std::vector<where> w(static_cast<std::size_t>(team));
    int started = 0;
#pragma omp parallel num_threads(team)
    {
        cpu_set_t set;
        CPU_ZERO(&set);
        auto& mine = w[static_cast<std::size_t>(omp_get_thread_num())];
        if (::sched_getaffinity(0, sizeof set, &set) == 0)
            for (unsigned c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &set)) mine.mask.push_back(c);
        unsigned cpu = 0;
        mine.node_known = ::getcpu(&cpu, &mine.node) == 0;
#pragma omp single
        started = omp_get_num_threads();
    }
    EXPECT_EQ(started, team) << "the runtime started another team size";
    return w;
}

TEST(Binding, EveryTeamUpToThePlansSizeRunsOnThePlansFirstPUs) {
    ASSERT_TRUE(ccnuma::emulated_machine::current().has_value())
        << "run inside ccnuma-vm: ccnuma-vm --nodes 2 --cores-per-node 2 --copy binding_vm_test -- ccnuma-run --bind "
           "4,scatter -- binding_vm_test";
    const ccnuma::binding_plan& plan = ccnuma::current_plan();
    ASSERT_EQ(plan.threads().size(), 4u) << "run under ccnuma-run --bind 4,scatter";
    ASSERT_EQ(plan.numa_nodes_used(), 2u);
    for (int team = 1; team <= 4; ++team) {
        const auto w = team_of(team);
        std::string line;
        for (std::size_t t = 0; t < w.size(); ++t) {
            const unsigned pu = plan.threads()[t].pu;
            EXPECT_EQ(w[t].mask, std::vector<unsigned>{pu}) << "team of " << team << ", thread " << t;
            EXPECT_TRUE(w[t].node_known) << "getcpu() failed in thread " << t;
            EXPECT_EQ(w[t].node, static_cast<unsigned>(plan.threads()[t].numa)) << "team of " << team << ", thread " << t;
            line += " " + std::to_string(t) + "->PU " + (w[t].mask.size() == 1 ? std::to_string(w[t].mask[0]) : "several") +
                    " (node " + std::to_string(w[t].node) + ")";
        }
        const char* bind = std::getenv("OMP_PROC_BIND");
        std::printf("[figure] OMP_PROC_BIND=%s, team of %d:%s\n", bind ? bind : "(unset)", team, line.c_str());
    }
    // The scatter order itself: the first two threads on different nodes, as seg::per_node needs.
    const auto two = team_of(2);
    ASSERT_TRUE(two[0].node_known && two[1].node_known);
    EXPECT_NE(two[0].node, two[1].node) << "a team of 2 under 4,scatter on two nodes must span both";
}

}  // namespace
