// Runs under ccnuma-run: opens nested parallel regions shaped by OMP_NUM_THREADS and prints,
// from inside every innermost thread, its path, the CPU it runs on and its affinity mask.
// Also the OMPT tool's probe: it binds nothing itself.
// Deliberately independent of ccnuma::report_binding(), so the tools test does not check the
// library with itself.

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<int> team_sizes() {
    std::vector<int> sizes;
    const char* env = std::getenv("OMP_NUM_THREADS");
    std::stringstream in(env ? env : "1");
    std::string item;
    while (std::getline(in, item, ',')) sizes.push_back(std::atoi(item.c_str()));
    return sizes;
}

std::mutex out_mutex;

void report() {
    std::string line;
    for (int l = 1; l <= omp_get_level(); ++l) line += (l > 1 ? "," : "") + std::to_string(omp_get_ancestor_thread_num(l));
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof set, &set);
    std::string mask;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) mask += (mask.empty() ? "" : ",") + std::to_string(c);
    line += " " + std::to_string(sched_getcpu()) + " " + mask;
    std::lock_guard lock(out_mutex);
    std::printf("%s\n", line.c_str());
}

void region(const std::vector<int>& sizes, std::size_t level) {
#pragma omp parallel num_threads(sizes[level])
    {
        if (level + 1 < sizes.size())
            region(sizes, level + 1);
        else
            report();
    }
}

}  // namespace

// An optional argument repeats the regions: pooled threads come back to new teams, which is
// where a binding made once at start-up and one made at every fork (OMPT) differ.
int main(int argc, char** argv) {
    const auto sizes = team_sizes();
    const int repetitions = argc > 1 ? std::atoi(argv[1]) : 1;
    omp_set_max_active_levels(static_cast<int>(sizes.size()));
    for (int r = 0; r < repetitions; ++r) region(sizes, 0);
    return 0;
}
