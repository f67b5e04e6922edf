// Placement by tier, seen page by page: on a machine with CPU-less memory (a CXL expander, HBM,
// far DRAM) each tier policy decides how much of an array goes to the fast and the slow node.
// The nodes are the main thread's local nodes (its DRAM, then the CPU-less memory near it), so
// the program needs a tiered machine, such as ccnuma-vm's:
//
//   ccnuma-vm --nodes 2 --cores-per-node 2 --memory-node 512M,near=0 --memory-node 512M,near=1
//       -- ccnuma-run --bind 4,scatter -- ./tier_placement [MiB]     (one line)

#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

template <class Policy>
void show(std::size_t n, const Policy& policy) {
    const ccnuma::vector<double, Policy> v(n, 1.0, policy);
    std::printf("%s:\n  %s\n", ccnuma::to_string(policy).c_str(), v.placement().to_string().c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 24;
    if (mib == 0 || mib > (std::size_t{1} << 20)) {
        std::fprintf(stderr, "tier_placement: the size must be 1 to 1048576 MiB, not \"%s\"\n", argv[1]);
        return 2;
    }
    const std::size_t n = (mib << 20) / sizeof(double);
    try {
        const auto& topo = ccnuma::topology::current();
        const int cpu = ::sched_getcpu();
        const auto& pu = topo.pu(static_cast<unsigned>(cpu < 0 ? 0 : cpu));
        const auto& local = pu.local_nodes;
        if (local.size() < 2) {
            // Exit 0: there is nothing to split on a machine without a tier near this PU.
            std::printf("tier_placement: PU %d has one local node (no CPU-less memory near it): nothing to split\n",
                        cpu);
            return 0;
        }
        // The PU's own node is its DRAM; the far node is the fastest CPU-less one near it
        // (local_nodes is ordered by bandwidth, so on an HBM machine local[0] is not DRAM).
        const unsigned dram = pu.numa >= 0 ? static_cast<unsigned>(pu.numa) : local[0];
        unsigned far = dram;
        for (unsigned node : local)
            if (node != dram) {
                far = node;
                break;
            }
        std::printf("%zu MiB per array; PU %d: DRAM node %u, far node %u\n", mib, cpu, dram, far);
        show(n, ccnuma::weighted_interleave{}.nodes({dram, far}).weights({2, 1}));
        show(n, ccnuma::weighted_interleave{}.nodes({dram, far}).weights(ccnuma::by_bandwidth));
        show(n, ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth));
        show(n, ccnuma::fastest{});
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tier_placement: %s\n", e.what());
        return 1;
    }
}
