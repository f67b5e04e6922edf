// Thread affinity: the one caller of sched_setaffinity/sched_getaffinity (see os.hpp).

#include "os.hpp"

#include <sched.h>

#include <cerrno>

namespace ccnuma::detail {

// A fixed cpu_set_t (CPU_SETSIZE, 1024 CPUs) as glibc's own callers use; a machine with more
// CPUs gets EINVAL for the ones beyond, never a silently truncated mask.
std::vector<unsigned> this_thread_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<unsigned> cpus;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

int set_this_thread_cpus(std::span<const unsigned> cpus) noexcept {
    if (cpus.empty()) return EINVAL;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned c : cpus) {
        if (c >= CPU_SETSIZE) return EINVAL;
        CPU_SET(c, &set);
    }
    // pid 0 is the calling thread, not the process: the kernel keeps one mask per task.
    return ::sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

int current_cpu() noexcept { return ::sched_getcpu(); }

int current_node() noexcept {
    unsigned cpu = 0, node = 0;
    return ::getcpu(&cpu, &node) == 0 ? static_cast<int>(node) : -1;
}

}  // namespace ccnuma::detail
