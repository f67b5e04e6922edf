// Runs inside ccnuma-vm (2 and 4 nodes; see tests/CMakeLists.txt), under ccnuma-run's binding:
// ccnuma::vector's pages, and the heap memory its elements own, are on the node of the thread
// that the static schedule gives each element to; the std::vector equivalents are not.

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/vector.hpp>

#include "../support/page_expectations.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

namespace {

using test_support::expected_first_touch;
using test_support::matching;

constexpr std::size_t n = (std::size_t{16} << 20) / sizeof(double);  // 16 MiB
constexpr std::size_t rows = 1024, row_length = 4096;                  // 1024 rows of 32 KiB

class VectorPlacement : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(ccnuma::emulated_machine::current().has_value())
            << "run inside ccnuma-vm: ccnuma-vm --nodes 2 --copy vector_vm_test -- ccnuma-run --bind 4,scatter -- "
               "vector_vm_test";
        ASSERT_GE(test_support::nodes().size(), 2u);
    }
};

template <class V>
double local_fraction(const V& v) {
    return matching(ccnuma::page_nodes(v.data(), v.size() * sizeof(double)), expected_first_touch(v.data(), v.size()));
}

// Fraction of the pages of the rows' own buffers that are on the node of the thread owning the
// row (element) under schedule(static) over the rows.
template <class Rows>
double inner_locality(const Rows& r) {
    const auto owner_node = test_support::element_nodes(r.size());
    std::size_t local = 0, total = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
        const auto pages = ccnuma::page_nodes(r[i].data(), r[i].size() * sizeof(double));
        for (int node : pages) local += node == owner_node[i];
        total += pages.size();
    }
    return static_cast<double>(local) / static_cast<double>(total);
}

TEST_F(VectorPlacement, ElementsAreLocalToTheirThreads) {
    ccnuma::vector<double> v(n, 1.0);
    const double local = local_fraction(v);
    std::printf("[figure] ccnuma::vector<double>(16 MiB): %.1f%% of pages local; %s\n", 100 * local,
                v.placement().to_string().c_str());
    EXPECT_GE(local, 0.99);
    EXPECT_GE(v.placement().locality, 0.99) << "the library's own report must agree";

    ccnuma::vector<double> copy(v);
    EXPECT_GE(local_fraction(copy), 0.99) << "copy";
    ccnuma::vector<double> sum = v + copy * 2.0;
    EXPECT_GE(local_fraction(sum), 0.99) << "constructed from an expression";
}

TEST_F(VectorPlacement, ResizeKeepsPagesLocal) {
    ccnuma::vector<double> v(n / 2, 1.0);
    v.resize(n, 2.0);  // the old elements move to the new partition: another thread owns most
    const double up = local_fraction(v);
    EXPECT_EQ(v[n / 2 - 1], 1.0);
    EXPECT_EQ(v[n / 2], 2.0);
    v.resize(n / 3);
    const double down = local_fraction(v);
    std::printf("[figure] after resize(n/2 -> n): %.1f%% local; after resize(n -> n/3): %.1f%% local\n", 100 * up,
                100 * down);
    EXPECT_GE(up, 0.99);
    EXPECT_GE(down, 0.99);
    EXPECT_EQ(v[n / 3 - 1], 1.0);
}

TEST_F(VectorPlacement, HeapMemoryOwnedByElementsIsLocalOnlyWithParallelConstruction) {
    const std::vector<double> prototype(row_length, 1.0);
    double ours = 0, theirs = 0;
    {
        ccnuma::vector<std::vector<double>> r(rows, prototype);
        ours = inner_locality(r);
    }
    {
        std::vector<std::vector<double>> r(rows, prototype);
        theirs = inner_locality(r);
    }
    const double nodes = static_cast<double>(test_support::nodes().size());
    std::printf("[figure] inner buffers local to their row's thread: ccnuma::vector %.1f%%, std::vector %.1f%% "
                "(1/nodes = %.1f%%)\n",
                100 * ours, 100 * theirs, 100 / nodes);
    EXPECT_GE(ours, 0.99) << "ccnuma::vector<std::vector<double>>: each row copied by its owner thread";
    EXPECT_LE(theirs, 1.0 / nodes + 0.1) << "std::vector<std::vector<double>>: every row copied by the main thread";
}

}  // namespace
