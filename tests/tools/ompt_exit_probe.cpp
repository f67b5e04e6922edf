// Issue 32, item 3: a plain OpenMP program with a global whose destructor runs a parallel region,
// as a global ccnuma::vector<std::string> does when it frees its elements. The global is built
// before the runtime starts, so it is destroyed after everything the tool built while libomp
// initialized it: the tool must still be valid then (it stays so until ompt_finalize).
// Prints "main <cpu mask>" from each thread of one region in main, then "exit <cpu mask>" from
// each thread of the destructor's region; one line per thread, the thread number first.

#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace {

std::mutex out_mutex;

std::string mask() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
    std::string s;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) s += (s.empty() ? "" : ",") + std::to_string(c);
    return s;
}

void region(const char* when) {
#pragma omp parallel
    {
        const std::string m = mask();
        const std::lock_guard lock(out_mutex);
        std::printf("%s %d %s\n", when, omp_get_thread_num(), m.c_str());
    }
    std::fflush(stdout);
}

struct runs_a_region_when_destroyed {
    ~runs_a_region_when_destroyed() { region("exit"); }
} global;

}  // namespace

int main() {
    region("main");
    return 0;
}
