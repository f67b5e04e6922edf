// The OMPT tool's nesting probe (issue 22): opens nested teams in the shapes that went wrong
// and checks, from inside every implicit task, that the thread's affinity mask is the single PU
// the plan gives its omp_get_ancestor_thread_num() path. It binds nothing and links no ccnuma
// code: the plan comes in as arguments, so the tool is not checked with itself.
//
//   ompt_nesting_probe race   STEPS SIZES PUS   planned nest, two regions per level per step
//   ompt_nesting_probe shapes STEPS SIZES PUS   deeper than planned, serialized, tasks, resized
//   ompt_nesting_probe unbind STEPS SIZES PUS   one team whose threads widen their own masks
//                                               after the check: a binding the tool no longer has
//
// SIZES are the plan's team sizes ("2,2"); PUS its PUs in depth-first path order (path (i,j) of
// SIZES a,b at i*b+j), or @FILE: ccnuma-run --print-plan --json's output, read for its "path"
// and "pu" keys (in a guest, where the plan is made right before the run). Prints "entries N checked C off O" and the first few threads off the plan.
// A path shorter than the plan is its own master's slot (padded with zeros); a path deeper than
// the plan is checked only where it is the same thread as a planned one (all-zero tail); indices
// beyond a planned team are not checked: the tool leaves those threads alone.

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<int> sizes, pus;
std::atomic<long> entries{0}, checked{0}, off{0};
std::mutex report_mutex;
int reported = 0;

std::vector<int> numbers(const char* text) {
    std::vector<int> v;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::atoi(item.c_str()));
    return v;
}

// The PUs of ccnuma-run's JSON plan, in depth-first path order; empty if it cannot be read.
std::vector<int> plan_pus(const char* file) {
    std::FILE* f = std::fopen(file, "r");
    if (f == nullptr) return {};
    std::string text;
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    std::fclose(f);
    std::size_t total = 1;
    for (int s : sizes) total *= static_cast<std::size_t>(s);
    std::vector<int> table(total, -1);
    for (std::size_t at = 0; (at = text.find("\"path\":[", at)) != std::string::npos;) {
        at += 8;
        const auto close = text.find(']', at);
        const auto pu_at = text.find("\"pu\":", close);
        if (close == std::string::npos || pu_at == std::string::npos) return {};
        const std::vector<int> path = numbers(text.substr(at, close - at).c_str());
        if (path.size() != sizes.size()) return {};
        std::size_t index = 0;
        for (std::size_t l = 0; l < path.size(); ++l) index = index * static_cast<std::size_t>(sizes[l]) + static_cast<std::size_t>(path[l]);
        if (index >= total) return {};
        table[index] = std::atoi(text.c_str() + pu_at + 5);
    }
    for (int pu : table)
        if (pu < 0) return {};
    return table;
}

// The planned PU of this thread's path, or -1 where the plan says nothing about it.
int planned_pu() {
    const int level = omp_get_level();
    const auto levels = static_cast<int>(sizes.size());
    int index = 0;
    for (int l = 1; l <= std::max(level, levels); ++l) {
        const int i = l <= level ? omp_get_ancestor_thread_num(l) : 0;
        if (l > levels) {
            if (i != 0) return -1;  // a worker of a team deeper than the plan
            continue;
        }
        if (i < 0 || i >= sizes[static_cast<std::size_t>(l - 1)]) return -1;
        index = index * sizes[static_cast<std::size_t>(l - 1)] + i;
    }
    return pus[static_cast<std::size_t>(index)];
}

void check() {
    entries.fetch_add(1, std::memory_order_relaxed);
    const int pu = planned_pu();
    if (pu < 0) return;
    checked.fetch_add(1, std::memory_order_relaxed);
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof set, &set);
    if (CPU_COUNT(&set) == 1 && CPU_ISSET(pu, &set)) return;
    off.fetch_add(1, std::memory_order_relaxed);
    std::string line = "off:";
    for (int l = 1; l <= omp_get_level(); ++l) line += (l > 1 ? "," : " (") + std::to_string(omp_get_ancestor_thread_num(l));
    line += ") planned " + std::to_string(pu) + " mask";
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) line += " " + std::to_string(c);
    std::lock_guard lock(report_mutex);
    if (reported++ < 10) std::printf("%s\n", line.c_str());
}

// The planned nest, two regions at every inner level: masters fork again right after a
// sibling's team has gone back to libomp's pool, where the old tool read positions back.
void nest(std::size_t level) {
#pragma omp parallel num_threads(sizes[level])
    {
        check();
        if (level + 1 < sizes.size())
            for (int k = 0; k < 2; ++k) nest(level + 1);
    }
}

// `extra` more levels of 2 below the planned nest.
void deeper(std::size_t level, std::size_t extra) {
    const int n = level < sizes.size() ? sizes[level] : 2;
#pragma omp parallel num_threads(n)
    {
        check();
        if (level + 1 < sizes.size() + extra) deeper(level + 1, extra);
    }
}

void shapes() {
    const auto levels = static_cast<int>(sizes.size());
    omp_set_max_active_levels(levels + 2);
    deeper(0, 1);
    deeper(0, 2);
    // Serialized: inner regions beyond the active levels run in teams of one.
    omp_set_max_active_levels(1);
    deeper(0, 2);
    omp_set_max_active_levels(levels + 2);
#pragma omp parallel num_threads(sizes[0])
    {
        check();
#pragma omp parallel if (0)
        {
            check();
#pragma omp parallel if (0)
            check();
        }
    }
    // Regions forked from explicit tasks: the thread that runs the task is the ancestor.
#pragma omp parallel num_threads(sizes[0])
#pragma omp single
    for (int t = 0; t < 4; ++t) {
#pragma omp task
        {
            check();
            if (levels > 1) {
#pragma omp parallel num_threads(sizes[1])
                check();
            } else {
#pragma omp parallel num_threads(2)
                check();
            }
        }
    }
    // omp_set_num_threads changes: a team larger than planned (its extra thread is left alone),
    // then one of one.
    omp_set_num_threads(sizes[0] + 1);
#pragma omp parallel
    check();
    omp_set_num_threads(1);
#pragma omp parallel
    check();
    omp_set_num_threads(sizes[0]);
    nest(0);
}

cpu_set_t initial_mask;

// The program moves its threads itself, behind the tool's back: the next region finds them
// where the tool did not put them, which CCNUMA_OMPT_VERIFY must see.
void unbind() {
#pragma omp parallel num_threads(sizes[0])
    {
        check();
        pthread_setaffinity_np(pthread_self(), sizeof initial_mask, &initial_mask);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: ompt_nesting_probe race|shapes|unbind STEPS SIZES PUS\n");
        return 2;
    }
    const std::string mode = argv[1];
    const int steps = std::atoi(argv[2]);
    sizes = numbers(argv[3]);
    pus = argv[4][0] == '@' ? plan_pus(argv[4] + 1) : numbers(argv[4]);
    std::size_t total = 1;
    for (int s : sizes) total *= static_cast<std::size_t>(s);
    if (sizes.empty() || pus.size() != total || (mode != "race" && mode != "shapes" && mode != "unbind")) {
        std::fprintf(stderr, "ompt_nesting_probe: bad arguments\n");
        return 2;
    }
    sched_getaffinity(0, sizeof initial_mask, &initial_mask);
    omp_set_max_active_levels(static_cast<int>(sizes.size()));
    for (int s = 0; s < steps; ++s) {
        if (mode == "race")
            nest(0);
        else if (mode == "shapes")
            shapes();
        else
            unbind();
    }
    std::printf("entries %ld checked %ld off %ld\n", entries.load(), checked.load(), off.load());
    return 0;
}
