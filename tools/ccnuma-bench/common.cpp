#include "kernels.hpp"

#include <ccnuma/binding.hpp>

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <cmath>
#include <fstream>
#include <stdexcept>

namespace bench {

std::vector<unsigned> team_sizes(const options& o) {
    if (!o.threads.empty()) return o.threads;
    if (!o.bind.empty()) return {static_cast<unsigned>(ccnuma::current_plan().spec().levels().front().threads)};
    return {static_cast<unsigned>(omp_get_max_threads())};
}

void use_threads(unsigned threads) {
    omp_set_num_threads(static_cast<int>(threads));
    // With a plan, the team is bound before anything is placed or timed, so that the raw loops'
    // first touch and the library's placement see the same threads on the same PUs.
    if (!ccnuma::current_plan().empty()) {
#pragma omp parallel
        ccnuma::bind_this_thread();
    }
}

std::vector<std::size_t> sizes_or(const options& o, std::vector<std::size_t> fallback) {
    return o.sizes.empty() ? fallback : o.sizes;
}

void need_memory(const std::string& kernel, double arrays, std::size_t elements) {
    std::ifstream f("/proc/meminfo");
    std::string key;
    double kib = 0;
    while (f >> key >> kib)
        if (key == "MemAvailable:") break;
        else f.ignore(256, '\n');
    const double need = arrays * static_cast<double>(elements) * sizeof(double);
    if (kib > 0 && need > kib * 1024)
    {
        char buf[200];
        std::snprintf(buf, sizeof buf, ": N = %zu needs %.1f GB, more than the %.1f GB available (lower --n)", elements,
                      need / 1e9, kib * 1024 / 1e9);
        throw std::runtime_error(kernel + buf);
    }
}

void wrong(const std::string& what) { throw std::runtime_error("wrong result: " + what); }

void check_close(const std::string& what, const double* got, std::size_t n, double (*expected)(std::size_t), double tol) {
    for (std::size_t i = 0; i < n; ++i) {
        const double e = expected(i);
        if (!(std::fabs(got[i] - e) <= tol * std::fabs(e))) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "[%zu] = %.17g, expected %.17g", i, got[i], e);
            wrong(what + buf);
        }
    }
}

namespace affinity {

namespace {
cpu_set_t initial_mask() {
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    return s;
}
// Taken before any thread is bound: the mask the process was started with.
const cpu_set_t start_mask = initial_mask();
}  // namespace

void pin(const ccnuma::binding_plan& plan) {
    std::vector<unsigned> path;
    for (int l = 1; l <= omp_get_level(); ++l) path.push_back(static_cast<unsigned>(omp_get_ancestor_thread_num(l)));
    const auto* slot = plan.find(path);
    if (!slot) return;  // a thread beyond the plan floats, as it would with the runtime's binding
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(slot->pu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

void release() { pthread_setaffinity_np(pthread_self(), sizeof start_mask, &start_mask); }

released_scope::released_scope() {
    CPU_ZERO(&own_);
    pthread_getaffinity_np(pthread_self(), sizeof own_, &own_);
    release();
}
released_scope::~released_scope() { pthread_setaffinity_np(pthread_self(), sizeof own_, &own_); }

}  // namespace affinity

}  // namespace bench
