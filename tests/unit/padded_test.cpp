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

// A team of 2 on one slot, on any machine: num_threads(2) with dynamic adjustment off gives two
// threads even on one core (or under OMP_NUM_THREADS=1), so the second thread always finds no
// slot and the test cannot pass by running single-threaded.
TEST(PerThread, ATeamLargerThanTheSlotsIsAnError) {
    ccnuma::per_thread<int> one(1);
    const int dynamic = omp_get_dynamic();
    omp_set_dynamic(0);
    int team = 0;
    int threw = 0;
#pragma omp parallel num_threads(2) reduction(+ : threw)
    {
#pragma omp single
        team = omp_get_num_threads();
        try {
            one.local() = 1;
        } catch (const std::out_of_range&) {
            threw = 1;
        }
    }
    omp_set_dynamic(dynamic);
    ASSERT_EQ(team, 2) << "the runtime refused a team of 2 (OMP_THREAD_LIMIT?)";
    EXPECT_EQ(threw, 1) << "thread 1 of 2 wrote into a per_thread of 1 slot";
    EXPECT_EQ(one[0], 1) << "thread 0 owns slot 0";
}

}  // namespace
