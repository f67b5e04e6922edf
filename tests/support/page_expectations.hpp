#pragma once
// Where the pages of a placed array should be, computed independently of the library's own
// partition code: by running the `schedule(static)` loop itself and asking each thread's CPU
// for its node. Shared by the placement tests that run inside ccnuma-vm.

#include <ccnuma/topology.hpp>

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace test_support {

inline const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

inline std::vector<unsigned> nodes() {
    std::vector<unsigned> v;
    for (const auto& node : ccnuma::topology::current().numa_nodes()) v.push_back(node.os_index);
    return v;
}

/// The node of the thread that a `schedule(static)` loop over `count` elements runs element i
/// on, for every i.
inline std::vector<int> element_nodes(std::size_t count) {
    std::vector<int> node_of(count, -1);
#pragma omp parallel
    {
        unsigned cpu = 0, node = 0;
        ::getcpu(&cpu, &node);
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < count; ++i) node_of[i] = static_cast<int>(node);
    }
    return node_of;
}

/// For each page of [p, p + count * sizeof(T)), the node of the thread that a
/// `schedule(static)` loop over the elements runs the page's first element on.
template <class T>
std::vector<int> expected_first_touch(const T* p, std::size_t count) {
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    const auto first_page = begin / page;
    const auto pages = (begin + count * sizeof(T) + page - 1) / page - first_page;
    std::vector<int> expected(pages, -1);
    const auto node_of = element_nodes(count);
    for (std::size_t i = 0; i < count; ++i) {
        const auto addr = begin + i * sizeof(T);
        if (i == 0 || addr / page != (addr - sizeof(T)) / page) expected[addr / page - first_page] = node_of[i];
    }
    return expected;
}

/// Fraction of pages whose node is the expected one (pages never written count as wrong).
inline double matching(const std::vector<int>& actual, const std::vector<int>& expected) {
    std::size_t same = 0;
    for (std::size_t i = 0; i < actual.size(); ++i) same += actual[i] >= 0 && actual[i] == expected[i];
    return actual.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(actual.size());
}

}  // namespace test_support
