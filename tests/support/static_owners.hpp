#pragma once
// Which thread owns what under a static schedule, as the OpenMP runtime itself hands it out:
// a `schedule(static)` (or `schedule(static, chunk)`) loop run in a team of `threads`,
// independent of the library's own partition code. Shared by the container tests.

#include <omp.h>

#include <cstddef>
#include <vector>

namespace test_support {

/// The thread that runs iteration i of a static loop over `count` iterations, for every i.
inline std::vector<int> static_owners(std::size_t count, unsigned threads, std::size_t chunk = 0) {
    std::vector<int> owner(count, -1);
#pragma omp parallel num_threads(static_cast<int>(threads))
    {
        if (chunk == 0) {
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < count; ++i) owner[i] = omp_get_thread_num();
        } else {
#pragma omp for schedule(static, chunk)
            for (std::size_t i = 0; i < count; ++i) owner[i] = omp_get_thread_num();
        }
    }
    return owner;
}

}  // namespace test_support
