// Runs inside ccnuma-vm. Initializes an array by first touch, in parallel with the static
// schedule or serially, then asks the kernel where every page went (move_pages without a
// target) and prints one JSON object. The host-side test (vm_test.cpp) judges it; this program
// only measures, so that the same numbers can be looked at by hand.
//
//   first_touch_probe --init parallel|serial [--mib N] [--chunk BYTES]
//
// --chunk makes the parallel init hand out whole BYTES-sized blocks (e.g. 2M, so that no huge
// page is shared by two threads); without it, the partition is `schedule(static)` over the
// elements, exactly as a compute loop would use it.

#include <ccnuma/binding.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct thread_record {
    unsigned pu = 0;
    int node = -1;
    int cpu_after = -1;
    std::size_t first = SIZE_MAX, last = 0;  // element range this thread touched (or computes on)
};

// AnonHugePages of the mapping that contains addr, from /proc/self/smaps.
long anon_huge_kib(const void* addr) {
    std::ifstream in("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const auto a = reinterpret_cast<std::uintptr_t>(addr);
    while (std::getline(in, line)) {
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
            inside = a >= lo && a < hi;
            continue;
        }
        long kib = 0;
        if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kib) == 1) return kib;
    }
    return 0;
}

int usage(const char* why) {
    std::fprintf(stderr, "first_touch_probe: %s\nusage: first_touch_probe --init parallel|serial [--mib N] [--chunk BYTES]\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) try {
    std::string init;
    std::size_t mib = 64, chunk = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--init" && i + 1 < argc) init = argv[++i];
        else if (a == "--mib" && i + 1 < argc) mib = std::stoul(argv[++i]);
        else if (a == "--chunk" && i + 1 < argc) chunk = ccnuma::parse_size(argv[++i], "--chunk");
        else return usage(("unknown argument " + a).c_str());
    }
    if (init != "parallel" && init != "serial") return usage("--init must be parallel or serial");

    const auto vm = ccnuma::emulated_machine::current();
    if (!vm) {
        std::fprintf(stderr,
                     "first_touch_probe: not inside the emulated machine (no /etc/ccnuma-vm), so every page "
                     "would be on node 0 and the test would prove nothing; run it with: ccnuma-vm --nodes 2 "
                     "-- first_touch_probe --init %s\n",
                     init.c_str());
        return 2;
    }

    const auto& topo = ccnuma::topology::current();
    const std::size_t threads = topo.pus().size();
    ccnuma::set_nesting_info(std::to_string(threads) + ",scatter");

    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t bytes = mib << 20;
    // The array starts on a 2 MiB boundary, so where huge pages meet chunk boundaries is known.
    const std::size_t align = std::max<std::size_t>(chunk, std::size_t{2} << 20);
    if (chunk != 0 && bytes % chunk != 0) return usage("--mib must be a multiple of --chunk");
    void* raw = ::mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return usage("mmap failed");
    auto* base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + align - 1) / align * align);
    auto* a = reinterpret_cast<double*>(base);
    const std::size_t n = bytes / sizeof(double);

    std::vector<thread_record> rec(threads);
    auto bind = [&](thread_record& r) {
        r.pu = ccnuma::bind_this_thread();
        for (const auto& p : topo.pus())
            if (p.os_index == r.pu) r.node = p.numa;
    };
    if (init == "parallel") {
#pragma omp parallel num_threads(static_cast<int>(threads))
        {
            auto& r = rec[static_cast<std::size_t>(omp_get_thread_num())];
            bind(r);
            if (chunk == 0) {
#pragma omp for schedule(static)
                for (std::size_t i = 0; i < n; ++i) {
                    a[i] = static_cast<double>(i);
                    if (i < r.first) r.first = i;
                    r.last = i;
                }
            } else {
                const std::size_t per = chunk / sizeof(double);
#pragma omp for schedule(static)
                for (std::size_t b = 0; b < bytes / chunk; ++b) {
                    for (std::size_t i = b * per; i < (b + 1) * per; ++i) a[i] = static_cast<double>(i);
                    if (b * per < r.first) r.first = b * per;
                    r.last = (b + 1) * per - 1;
                }
            }
            r.cpu_after = sched_getcpu();
        }
    } else {
        // Serial init by the master, then the partition a static compute loop would use, which
        // is what "local" is measured against.
#pragma omp parallel num_threads(static_cast<int>(threads))
        {
            auto& r = rec[static_cast<std::size_t>(omp_get_thread_num())];
            bind(r);
#pragma omp master
            for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<double>(i);
#pragma omp barrier
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < n; ++i) {
                if (i < r.first) r.first = i;
                r.last = i;
            }
            r.cpu_after = sched_getcpu();
        }
    }

    // The writes must have happened: 0 + 1 + ... + n-1.
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    const bool checksum_ok = sum == static_cast<double>(n) * static_cast<double>(n - 1) / 2;

    const std::size_t pages = bytes / page;
    std::vector<void*> addrs(pages);
    std::vector<int> status(pages, -1);
    for (std::size_t p = 0; p < pages; ++p) addrs[p] = base + p * page;
    if (::syscall(SYS_move_pages, 0, pages, addrs.data(), nullptr, status.data(), 0) != 0) {
        std::fprintf(stderr, "first_touch_probe: move_pages: %s\n", std::strerror(errno));
        return 1;
    }
    std::vector<std::size_t> per_node(topo.total_numa_nodes(), 0);
    std::size_t local = 0, on_node0 = 0, not_present = 0;
    const std::size_t per_page = page / sizeof(double);
    for (std::size_t p = 0; p < pages; ++p) {
        const int node = status[p];
        if (node < 0) {
            ++not_present;
            continue;
        }
        if (static_cast<std::size_t>(node) < per_node.size()) ++per_node[static_cast<std::size_t>(node)];
        if (node == 0) ++on_node0;
        const std::size_t first_elem = p * per_page;
        for (const auto& r : rec)
            if (first_elem >= r.first && first_elem <= r.last && r.node == node) ++local;
    }

    std::ostringstream j;
    j << "{\"machine\":\"" << vm->to_string() << "\",\"init\":\"" << init << "\",\"chunk\":" << chunk
      << ",\"page_size\":" << page << ",\"pages\":" << pages << ",\"not_present\":" << not_present
      << ",\"local\":" << local << ",\"on_node0\":" << on_node0 << ",\"checksum_ok\":" << (checksum_ok ? "true" : "false")
      << ",\"anon_huge_kib\":" << anon_huge_kib(base) << ",\"per_node\":[";
    for (std::size_t i = 0; i < per_node.size(); ++i) j << (i ? "," : "") << per_node[i];
    j << "],\"threads\":[";
    for (std::size_t t = 0; t < rec.size(); ++t)
        j << (t ? "," : "") << "{\"pu\":" << rec[t].pu << ",\"node\":" << rec[t].node << ",\"cpu\":" << rec[t].cpu_after
          << ",\"first\":" << rec[t].first << ",\"last\":" << rec[t].last << "}";
    j << "]}";
    std::puts(j.str().c_str());
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "first_touch_probe: %s\n", e.what());
    return 1;
}
