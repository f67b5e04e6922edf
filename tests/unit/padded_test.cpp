// padded<T> and per_thread<T>: layout that avoids false sharing, and the reductions.

#include <ccnuma/padded.hpp>

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <stdexcept>

namespace {

TEST(Padded, OwnsAWholeBlock) {
    static_assert(sizeof(ccnuma::padded<double>) == 128 && alignof(ccnuma::padded<double>) == 128);
    static_assert(sizeof(ccnuma::padded<char, 64>) == 64);
    static_assert(sizeof(ccnuma::padded<double[20]>) == 256);
    ccnuma::padded<int> p = 5;
    int& r = p;
    r += 1;
    EXPECT_EQ(p.get(), 6);
    ccnuma::padded<double> arr[3];
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&arr[1]) - reinterpret_cast<std::uintptr_t>(&arr[0]), 128u);
}

TEST(PerThread, EachThreadWritesItsOwnSlot) {
    ccnuma::per_thread<long> partial(4);
    EXPECT_EQ(partial.size(), 4u);
#pragma omp parallel num_threads(4)
    {
        for (int i = 0; i < 1000; ++i) partial.local() += omp_get_thread_num() + 1;
    }
    EXPECT_EQ(partial.reduce(), 1000 * (1 + 2 + 3 + 4));
    EXPECT_EQ(partial.combine([](long a, long b) { return a > b ? a : b; }, 0L), 4000);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&partial[1]) - reinterpret_cast<std::uintptr_t>(&partial[0]), 128u);
}

TEST(PerThread, ATeamLargerThanTheSlotsIsAnError) {
    ccnuma::per_thread<int> one(1);
    bool threw = false;
#pragma omp parallel num_threads(2) reduction(|| : threw)
    {
        try {
            one.local() = 1;
        } catch (const std::out_of_range&) {
            threw = true;
        }
    }
    EXPECT_TRUE(threw || omp_get_max_threads() == 1);
}

}  // namespace
