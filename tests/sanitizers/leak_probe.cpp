// The leak check of sanitized builds still sees ccnuma's leaks beside libomp's suppressed ones
// (sanitizers/lsan_libomp.supp): this program grows a hot team from 2 to 7 threads, which makes
// LLVM's runtime 14 leak, and leaks a block of its own inside the parallel region, where libomp's
// frames lie below the allocating one. ctest expects the report to name that block and this
// function, under whatever LSAN_OPTIONS the caller exported (scripts/test.sh's).

#include <omp.h>

#include <cstdio>
#include <initializer_list>

namespace {
int* volatile kept = nullptr;

[[gnu::noinline]] void leak_inside_a_parallel_region() {
    // 77 ints: a size no runtime's block has, so the expected line is this one's. Once, in the
    // grown team, so the report has one such block.
    if (omp_get_num_threads() == 7 && omp_get_thread_num() == 1) kept = new int[77];
}
}  // namespace

int main() {
    int sum = 0;
    for (int threads : {2, 7}) {
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        {
            sum += omp_get_thread_num();
            leak_inside_a_parallel_region();
        }
    }
    kept = nullptr;  // the last reference gone: LSan reports the block at exit
    std::printf("threads' numbers sum to %d\n", sum);
}
