// Runs inside ccnuma-vm, under the memory policy it inherits (ccnuma-run --interleave and so on,
// or none). A program that knows nothing of NUMA: it pins itself to one CPU, allocates with plain
// new, writes everything from that one thread, then asks the kernel where every page went. The
// host-side test (vm_test.cpp, VmMemoryPolicy) judges the output; this program only measures.
//
//   memory_policy_probe [--cpu N] [--mib N] [--json [--page-nodes]]
//
// Without --cpu it stays on the CPU it started on, so that "the node of the CPU that wrote" is
// one node even without a policy.

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/memory_policy.hpp>
#include <ccnuma/pages.hpp>

#include <sched.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

namespace {

int usage(const std::string& why) {
    std::fprintf(stderr, "memory_policy_probe: %s\nusage: memory_policy_probe [--cpu N] [--mib N] [--json [--page-nodes]]\n",
                 why.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) try {
    int cpu = -1;
    std::size_t mib = 64;
    bool json = false;
    bool page_nodes = false;  // each page's node, for comparing two launchers page by page
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--cpu" && i + 1 < argc) cpu = std::stoi(argv[++i]);
        else if (a == "--mib" && i + 1 < argc) mib = std::stoul(argv[++i]);
        else if (a == "--json") json = true;
        else if (a == "--page-nodes") page_nodes = true;
        else return usage("unknown argument " + a);
    }
    if (!ccnuma::emulated_machine::current())
        return usage("not inside the emulated machine (no /etc/ccnuma-vm), so every page would be on node 0 and "
                     "the test would prove nothing; run it with: ccnuma-vm --nodes 4 -- ccnuma-run --interleave=all "
                     "-- memory_policy_probe");

    if (cpu < 0) cpu = sched_getcpu();
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(cpu, &mask);
    if (sched_setaffinity(0, sizeof mask, &mask) != 0) return usage("cannot pin to CPU " + std::to_string(cpu));

    const std::size_t bytes = mib << 20;
    const std::unique_ptr<char[]> data(new char[bytes]);
    std::memset(data.get(), 0x5a, bytes);
    unsigned cpu_after = 0, node = 0;
    if (getcpu(&cpu_after, &node) != 0) return usage("getcpu failed");

    const auto histogram = ccnuma::node_histogram(data.get(), bytes);
    const auto policy = ccnuma::current_memory_policy();
    if (json) {
        std::ostringstream j;
        j << "{\"policy\":\"" << policy.to_string() << "\",\"cpu\":" << cpu_after << ",\"node\":" << node
          << ",\"pages\":" << histogram.total << ",\"not_present\":" << histogram.not_present << ",\"per_node\":[";
        for (std::size_t n = 0; n < histogram.pages.size(); ++n) j << (n ? "," : "") << histogram.pages[n];
        j << "]";
        if (page_nodes) {
            j << ",\"page_nodes\":\"";
            for (int n : ccnuma::page_nodes(data.get(), bytes)) j << (n >= 0 && n <= 9 ? static_cast<char>('0' + n) : '?');
            j << "\"";
        }
        j << "}";
        std::puts(j.str().c_str());
    } else {
        std::printf("policy %s, %zu MiB written by CPU %u (node %u)\n%s\n", policy.to_string().c_str(), mib, cpu_after,
                    node, histogram.to_string().c_str());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "memory_policy_probe: %s\n", e.what());
    return 1;
}
