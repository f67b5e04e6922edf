// ccnuma::parallel and ccnuma::team: the team's reductions give every thread the bits of
// ccnuma::sum with a team of that size (and over a seg_array, of par::reduce and par::accumulate), each thread reads exactly the part of the operand that
// the runtime's own static loop gives it (or its partition's part), calls repeat in one region
// without a second barrier going wrong, and a broken rule (a thread that throws, returns early,
// or makes another call) ends in an exception on the calling thread, never in a hang or a sum.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/team.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>

#include "../support/quiet_diagnostics.hpp"
#include "../support/static_owners.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

double value(std::size_t i) { return 1.0 / (1.0 + static_cast<double>(i % 977)) - 0.25 * static_cast<double>(i % 3); }

// The bits of a double, so that "the same result" means the same bits.
std::uint64_t bits(double x) {
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// What each thread of a team returned, by rank.
template <class T>
struct by_rank {
    std::vector<T> got;
    std::mutex m;
    void put(unsigned rank, T v) {
        std::lock_guard lock(m);
        if (got.size() <= rank) got.resize(rank + 1);
        got[rank] = v;
    }
};

TEST(Team, EveryThreadGetsTheBitsOfCcnumaSumForItsTeamSize) {
    constexpr std::size_t n = 100'003;
    for (unsigned threads : {1U, 2U, 3U, 4U}) {
        const auto policy = ccnuma::first_touch{}.threads(threads);
        const ccnuma::vector<double> a(n, [](std::size_t i) { return value(i); }, policy);
        const ccnuma::vector<double> b(n, [](std::size_t i) { return value(i + 7) * 3.0; }, policy);
        struct results {
            double sum, min, max, dot, norm2;
        };
        by_rank<results> r;
        std::atomic<unsigned> sizes{0};
        ccnuma::parallel(policy.sched, [&](ccnuma::team& team) {
            sizes += team.size();
            r.put(team.rank(), {team.sum(a), team.min(a), team.max(b), team.dot(a, b), team.norm2(a + b)});
        });
        SCOPED_TRACE("team of " + std::to_string(threads));
        ASSERT_EQ(sizes.load(), threads * threads);
        ASSERT_EQ(r.got.size(), threads);
        for (const auto& x : r.got) {
            EXPECT_EQ(bits(x.sum), bits(ccnuma::sum(a)));
            EXPECT_EQ(bits(x.min), bits(ccnuma::min(a)));
            EXPECT_EQ(bits(x.max), bits(ccnuma::max(b)));
            EXPECT_EQ(bits(x.dot), bits(ccnuma::dot(a, b)));
            EXPECT_EQ(bits(x.norm2), bits(ccnuma::norm2(a + b)));
        }
        // And the value: a serial sum of the same elements, to a relative 1e-12.
        double serial = 0;
        for (std::size_t i = 0; i < n; ++i) serial += value(i);
        EXPECT_NEAR(r.got[0].sum, serial, 1e-12 * std::abs(serial) + 1e-12);
    }
}

// An element that says who added it: sum_fold adds every element of a thread's range but the
// first to the thread's accumulator, and its operator+= records the adding thread.
struct probe {
    double x = 0;
    std::size_t index = 0;
    static std::vector<int>* readers;
    probe& operator+=(const probe& r) {
        (*readers)[r.index] = omp_get_thread_num();
        x += r.x;
        return *this;
    }
    friend probe operator+(probe l, const probe& r) {
        l.x += r.x;
        return l;
    }
};
std::vector<int>* probe::readers = nullptr;

// Each index read by its owner, and the unrecorded ones (the first of each of a thread's
// ranges) no more than the ranges.
void expect_readers(const std::vector<int>& readers, const std::vector<int>& owners, std::size_t max_unrecorded) {
    std::size_t unrecorded = 0;
    for (std::size_t i = 0; i < readers.size(); ++i) {
        if (readers[i] == -1) {
            ++unrecorded;
            continue;
        }
        ASSERT_EQ(readers[i], owners[i]) << "element " << i;
    }
    EXPECT_LE(unrecorded, max_unrecorded);
    EXPECT_GE(unrecorded, 1U);
}

TEST(Team, EachThreadReadsThePartTheRuntimesStaticLoopGivesIt) {
    constexpr std::size_t n = 30'011;
    for (std::size_t chunk : {std::size_t{0}, std::size_t{1000}}) {
        const auto policy = ccnuma::first_touch{}.threads(3).chunk(chunk);
        const ccnuma::vector<probe> v(n, [](std::size_t i) { return probe{1.0, i}; }, policy);
        std::vector<int> readers(n, -1);
        probe::readers = &readers;
        by_rank<double> r;
        ccnuma::parallel(policy.sched, [&](ccnuma::team& team) { r.put(team.rank(), team.sum(v).x); });
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        for (double s : r.got) EXPECT_EQ(s, static_cast<double>(n));
        // The runtime's own schedule(static[, chunk]) loop says who owns what.
        const std::size_t ranges = chunk == 0 ? 3 : (n + chunk - 1) / chunk;
        expect_readers(readers, test_support::static_owners(n, 3, chunk), ranges);
    }
    // A partition: thread t reads part t.
    const auto parts = ccnuma::partition(std::vector<std::size_t>{0, 10, 25'000, n});
    const auto policy = ccnuma::first_touch{}.partition(parts);
    const ccnuma::vector<probe> v(n, [](std::size_t i) { return probe{1.0, i}; }, policy);
    std::vector<int> readers(n, -1);
    probe::readers = &readers;
    ccnuma::parallel(policy.sched, [&](ccnuma::team& team) { EXPECT_EQ(team.sum(v).x, static_cast<double>(n)); });
    std::vector<int> owners(n);
    for (std::size_t i = 0; i < n; ++i) owners[i] = static_cast<int>(parts.owner(i));
    expect_readers(readers, owners, 3);
    probe::readers = nullptr;
}

TEST(Team, ManyCallsInOneRegionEachSeeTheirOwnOperands) {
    // Alternating operands and barriers: a thread that overwrote a slot another still reads
    // (the double-buffering) would show up as a wrong sum, or as a call of another number, in
    // some iteration. Also in a team larger than the CPUs, where threads are preempted between
    // a barrier and their reads of the slots.
    constexpr std::size_t n = 4099;
    const ccnuma::vector<double> a(n, [](std::size_t i) { return static_cast<double>(i % 5); });
    const ccnuma::vector<double> b(n, [](std::size_t i) { return static_cast<double>(i % 7); });
    const double sa = ccnuma::sum(a), sb = ccnuma::sum(b);
    for (unsigned threads : {2U, 2 * static_cast<unsigned>(omp_get_num_procs()) + 1}) {
        std::vector<std::size_t> counted(threads * 64, 0);
        std::atomic<int> wrong{0};
        ccnuma::parallel(ccnuma::schedule{.threads = threads}, [&](ccnuma::team& team) {
            for (int it = 0; it < 3000; ++it) {
                if (team.sum(it % 3 == 0 ? b : a) != (it % 3 == 0 ? sb : sa)) ++wrong;
                if (team.max(a) != 4.0) ++wrong;
                if (it % 4 != 0) continue;
                // The barrier orders plain writes too: each thread's write is seen by all after it.
                counted[team.rank() * 64] = static_cast<std::size_t>(it);
                team.barrier();
                for (unsigned t = 0; t < team.size(); ++t)
                    if (counted[t * 64] != static_cast<std::size_t>(it)) ++wrong;
                team.barrier();
            }
        });
        EXPECT_EQ(wrong.load(), 0) << "team of " << threads;
    }
}

TEST(Team, AnExceptionInOneThreadReleasesTheOthersAndIsRethrown) {
    const ccnuma::vector<double> a(1000, 1.0, ccnuma::first_touch{}.threads(3));
    for (bool in_barrier : {false, true}) {
        std::atomic<int> released{0};
        try {
            ccnuma::parallel(ccnuma::schedule{.threads = 3}, [&](ccnuma::team& team) {
                if (team.rank() == 1) throw std::runtime_error("thread 1 failed");
                try {
                    for (;;) {
                        if (in_barrier)
                            team.barrier();
                        else
                            (void)team.sum(a);
                    }
                } catch (...) {
                    ++released;
                    throw;
                }
            });
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "thread 1 failed");
        }
        EXPECT_EQ(released.load(), 2);
    }
}

TEST(Team, AThreadThatReturnsEarlyIsAnErrorNotAHang) {
    const ccnuma::vector<double> a(1000, 1.0, ccnuma::first_touch{}.threads(2));
    try {
        ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) {
            if (team.rank() == 0) (void)team.sum(a);
        });
        ADD_FAILURE() << "no exception";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("ccnuma::team::sum: a thread of the team returned from its function"), std::string::npos) << e.what();
    }
}

TEST(Team, ThreadsLeavingAfterTheirLastCallAreNoError) {
    // The last arriver completes the barrier and may return before the others have seen the
    // completion: they must read it as done, not as a thread that left.
    const ccnuma::vector<double> a(1000, 1.0);
    for (unsigned threads : {2U, 2 * static_cast<unsigned>(omp_get_num_procs()) + 1}) {
        std::atomic<int> right{0};
        for (int region = 0; region < 1000; ++region)
            ccnuma::parallel(ccnuma::schedule{.threads = threads}, [&](ccnuma::team& team) {
                if (team.sum(a) == 1000.0 && team.rank() == 0) ++right;
            });
        EXPECT_EQ(right.load(), 1000) << "team of " << threads;
    }
}

TEST(Team, CallsThatDifferBetweenThreadsAreAnError) {
    const ccnuma::vector<double> a(1000, 1.0, ccnuma::first_touch{}.threads(2));
    const ccnuma::vector<double> b(999, 1.0, ccnuma::first_touch{}.threads(2));
    try {
        ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) { (void)team.sum(team.rank() == 0 ? a : b); });
        ADD_FAILURE() << "no exception";
    } catch (const ccnuma::error& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.find("ccnuma::team::sum: thread 0's operand has 1000 elements and thread 1's 999") != std::string::npos ||
                    what.find("ccnuma::team::sum: thread 1's operand has 999 elements and thread 0's 1000") != std::string::npos)
            << what;
    }
    // A barrier against a reduction: each thread finds the other's slot holding another kind of
    // call, and the first to throw names the other.
    try {
        ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) {
            if (team.rank() == 0)
                (void)team.sum(a);
            else
                team.barrier();
            team.barrier();
        });
        ADD_FAILURE() << "no exception";
    } catch (const ccnuma::error& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.find("ccnuma::team::sum: thread 1 made another call than thread 0's") != std::string::npos ||
                    what.find("ccnuma::team::barrier: thread 0 made another call than thread 1's") != std::string::npos)
            << what;
    }
    // Another reduction of the same size.
    try {
        ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) {
            if (team.rank() == 0)
                (void)team.sum(a);
            else
                (void)team.max(a);
        });
        ADD_FAILURE() << "no exception";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("made another call than"), std::string::npos) << e.what();
    }
}

TEST(Team, ABarrierAgainstAReductionOfTheSameSizeIsAnErrorNotAWrongSum) {
    // Thread 0 sums a then waits at a barrier, thread 1 waits at a barrier then sums b: counted
    // by barrier episodes the calls pair up, so only the kinds in the slots can tell (a review
    // of 271c1e8 found both threads returning a + b there, 50 times in 50).
    const auto policy = ccnuma::first_touch{}.threads(2);
    const ccnuma::vector<double> a(1000, 1.0, policy), b(1000, 100.0, policy);
    for (int round = 0; round < 50; ++round) {
        std::atomic<int> wrong_sums{0};
        try {
            ccnuma::parallel(policy, [&](ccnuma::team& team) {
                if (team.rank() == 0) {
                    if (team.sum(a) != 1000.0) ++wrong_sums;
                    team.barrier();
                } else {
                    team.barrier();
                    if (team.sum(b) != 100000.0) ++wrong_sums;
                }
            });
            ADD_FAILURE() << "no exception in round " << round;
        } catch (const ccnuma::error& e) {
            EXPECT_NE(std::string(e.what()).find("made another call than"), std::string::npos) << e.what();
        }
        EXPECT_EQ(wrong_sums.load(), 0) << "round " << round;
    }
}

TEST(Team, AParallelInsideTheFunctionPassesTheOuterTeamsStopOn) {
    // A team of one inside thread 0's function calls the outer team's sum; thread 1 throws. The
    // inner ccnuma::parallel must not take the outer team's stop for its own and return as if
    // the call had given a value.
    const ccnuma::vector<double> a(1000, 1.0);
    std::atomic<int> iterations{0};
    try {
        ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& outer) {
            if (outer.rank() == 1) throw std::runtime_error("thread 1 failed");
            double rest = 1.0;
            for (int it = 0; it < 1000 && rest > 0.0; ++it) {
                ccnuma::parallel(ccnuma::schedule{.threads = 1}, [&](ccnuma::team&) { rest = outer.sum(a) - 1000.0; });
                ++iterations;
            }
        });
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "thread 1 failed");
    }
    EXPECT_EQ(iterations.load(), 0);
}

// What ccnuma::parallel opens a team with: a schedule or a placement policy, and nothing else
// (a review found `parallel(1, f)` and `parallel("oops", f)` compiling, as the default team).
template <class P>
concept opens_a_team = requires(const P& p) { ccnuma::parallel(p, [](ccnuma::team&) {}); };
static_assert(opens_a_team<ccnuma::schedule>);
static_assert(opens_a_team<ccnuma::first_touch>);
static_assert(opens_a_team<ccnuma::interleave>);
static_assert(opens_a_team<ccnuma::policy>);
static_assert(!opens_a_team<int>);
static_assert(!opens_a_team<const char*>);
static_assert(!opens_a_team<ccnuma::vector<double>>);

TEST(Team, APoliciesTeamIsTheTeamThatPlacedTheContainer) {
    const ccnuma::vector<double> v(30'000, 1.0, ccnuma::first_touch{}.threads(3));
    std::atomic<unsigned> sizes{0};
    ccnuma::parallel(v.policy(), [&](ccnuma::team& team) {
        sizes += team.size();
        EXPECT_EQ(team.sum(v), 30'000.0);
    });
    EXPECT_EQ(sizes.load(), 9U);
}

TEST(Team, AnEmptyOperandSumsToZeroAndHasNoMinimum) {
    const ccnuma::vector<double> empty;
    by_rank<double> r;
    ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) { r.put(team.rank(), team.sum(empty)); });
    ASSERT_EQ(r.got.size(), 2U);
    EXPECT_EQ(r.got[0], 0.0);
    EXPECT_EQ(r.got[1], 0.0);
    EXPECT_THROW(ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) { (void)team.min(empty); }), std::length_error);
}

TEST(Team, ATeamOfOneAndTeamsInsideAUsersRegion) {
    const ccnuma::vector<double> a(5000, [](std::size_t i) { return value(i); }, ccnuma::first_touch{}.threads(1));
    const double expected = ccnuma::sum(a);
    ccnuma::parallel(ccnuma::schedule{.threads = 1}, [&](ccnuma::team& team) {
        EXPECT_EQ(team.size(), 1U);
        EXPECT_EQ(bits(team.sum(a)), bits(expected));
        team.barrier();
    });
    // Inside a user's team of two: each thread's ccnuma::parallel is a nested team of its own
    // (of one with nesting off), whose sum is the whole vector's.
    std::atomic<int> right{0};
#pragma omp parallel num_threads(2)
    {
        ccnuma::parallel([&](ccnuma::team& team) {
            const double s = team.sum(a);
            if (team.rank() == 0 && std::abs(s - expected) <= 1e-12 * std::abs(expected)) ++right;
        });
    }
    EXPECT_EQ(right.load(), 2);
}

// ---- assign ----------------------------------------------------------------------------------

// team.assign writes what vector assignment writes, with either store mode, whatever the
// team's size and the destination's schedule.
TEST(Team, AssignWritesWhatVectorAssignmentWrites) {
    constexpr std::size_t n = 50'021;
    for (unsigned threads : {1U, 2U, 3U, 4U})
        for (ccnuma::stores mode : {ccnuma::stores::regular, ccnuma::stores::streaming, ccnuma::stores::automatic}) {
            const auto policy = ccnuma::first_touch{}.threads(threads);
            const ccnuma::vector<double> b(n, [](std::size_t i) { return value(i); }, policy);
            const ccnuma::vector<double> c(n, [](std::size_t i) { return value(i + 5); }, policy);
            ccnuma::vector<double> a(n, 0.0, policy), expected(n, 0.0, policy);
            a.set_store_mode(mode);
            expected = b + 3.0 * c;
            ccnuma::parallel(policy, [&](ccnuma::team& team) {
                team.assign(a, b + 3.0 * c);
                // Every thread reads every element after the call: the barrier is in it.
                for (std::size_t i = 0; i < n; i += 997)
                    if (bits(a[i]) != bits(expected[i])) ADD_FAILURE() << "thread " << team.rank() << " reads a[" << i << "] early";
                team.barrier();  // before the next assign overwrites what the others read
                team.assign(a, a * 2.0);  // the destination as its own operand, element for element
                team.assign(ccnuma::view(a.data() + 100, 1000), 7.0);
            });
            SCOPED_TRACE("team of " + std::to_string(threads) + ", stores " + std::to_string(static_cast<int>(mode)));
            for (std::size_t i = 0; i < n; ++i) {
                const double want = i >= 100 && i < 1100 ? 7.0 : expected[i] * 2.0;
                ASSERT_EQ(bits(a[i]), bits(want)) << "element " << i;
            }
        }
}

// An element whose assignment records the thread that wrote it.
struct written {
    double x = 0;
    std::size_t index = 0;
    static std::vector<int>* by;
    written() = default;
    written(double v, std::size_t i) : x(v), index(i) {}
    written(const written&) = default;
    written& operator=(const written& r) {
        x = r.x;
        index = r.index;
        if (by != nullptr) (*by)[r.index] = omp_get_thread_num();
        return *this;
    }
};
std::vector<int>* written::by = nullptr;

// Which thread wrote each element of a team.assign(dst, src) under `policy`.
template <class Policy>
std::vector<int> writers_of_assign(std::size_t n, const Policy& policy) {
    const ccnuma::vector<written> src(n, [](std::size_t i) { return written{1.0, i}; }, policy);
    ccnuma::vector<written> dst(n, written{}, policy);
    std::vector<int> by(n, -1);
    written::by = &by;
    ccnuma::parallel(policy, [&](ccnuma::team& team) { team.assign(dst, src); });
    written::by = nullptr;
    return by;
}

TEST(Team, AssignWritesEachElementOnTheThreadThatPlacedIt) {
    constexpr std::size_t n = 30'011;
    for (std::size_t chunk : {std::size_t{0}, std::size_t{1000}}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        EXPECT_EQ(writers_of_assign(n, ccnuma::first_touch{}.threads(3).chunk(chunk)), test_support::static_owners(n, 3, chunk));
    }
    const auto parts = ccnuma::partition(std::vector<std::size_t>{0, 10, 25'000, n});
    const auto by = writers_of_assign(n, ccnuma::first_touch{}.partition(parts));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(by[i], static_cast<int>(parts.owner(i))) << "element " << i;
}

// An operand that overlaps the destination shifted is read whole before anything is written:
// y[i + 1] = y[i] moves every element, as the serial loop over a copy would.
TEST(Team, AssignFromAShiftedViewOfItselfReadsBeforeItWrites) {
    constexpr std::size_t n = 20'000;
    for (unsigned threads : {1U, 2U, 3U}) {
        ccnuma::vector<double> y(n, [](std::size_t i) { return static_cast<double>(i); }, ccnuma::first_touch{}.threads(threads));
        ccnuma::parallel(ccnuma::schedule{.threads = threads}, [&](ccnuma::team& team) {
            team.assign(ccnuma::view(y.data() + 1, n - 1), ccnuma::view(y.data(), n - 1) + 0.5);
        });
        SCOPED_TRACE("team of " + std::to_string(threads));
        EXPECT_EQ(y[0], 0.0);
        for (std::size_t i = 1; i < n; ++i) ASSERT_EQ(y[i], static_cast<double>(i - 1) + 0.5) << "element " << i;
    }
}

TEST(Team, AssignOfAnotherSizeOrAgainstAnotherCallIsAnError) {
    ccnuma::vector<double> a(1000, 0.0), b(999, 1.0);
    EXPECT_THROW(ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) { team.assign(a, b); }), std::length_error);
    try {
        ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) {
            if (team.rank() == 0)
                team.assign(a, 1.0);
            else
                (void)team.sum(a);
        });
        ADD_FAILURE() << "no error";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string_view(e.what()).find("made another call"), std::string_view::npos) << e.what();
    }
}

// An element type whose assignment from the operand's type throws, though its own copy
// assignment cannot, and which cannot be built from that type: assign needs only what vector
// assignment needs, and the exception leaves the team (not std::terminate from an `omp simd`
// loop) and is rethrown, from team.assign as from vector assignment.
struct from_int {
    double x = 0;
    from_int() = default;
    from_int(const from_int&) noexcept = default;
    from_int& operator=(const from_int&) noexcept = default;
    from_int& operator=(int v) {
        if (v == 700) throw std::runtime_error("from_int: 700");
        x = v;
        return *this;
    }
};
static_assert(!std::is_constructible_v<from_int, int> && std::is_nothrow_copy_assignable_v<from_int>);

TEST(Team, AnAssignmentFromAnotherTypeThatThrowsIsRethrown) {
    const ccnuma::vector<int> s(1000, [](std::size_t i) { return static_cast<int>(i); }, ccnuma::first_touch{}.threads(2));
    ccnuma::vector<from_int> d(1000, from_int{}, ccnuma::first_touch{}.threads(2));
    try {
        ccnuma::parallel(d.policy(), [&](ccnuma::team& team) { team.assign(d, s); });
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "from_int: 700");
    }
    EXPECT_THROW(d = s, std::runtime_error);
    // Below 700 every element was written.
    EXPECT_EQ(d[699].x, 699.0);
}

// A shifted assign meets the others twice, both times as an assign: a thread that made another
// call meanwhile (a barrier, then an assign of the same size) is found, under assign's name.
TEST(Team, AShiftedAssignAgainstABarrierAndAnAssignIsAnError) {
    ccnuma::vector<double> y(1000, 1.0, ccnuma::first_touch{}.threads(2));
    for (int run = 0; run < 20; ++run) {
        try {
            ccnuma::parallel(y.policy(), [&](ccnuma::team& team) {
                if (team.rank() == 0) {
                    team.assign(ccnuma::view(y.data() + 1, 999), ccnuma::view(y.data(), 999));
                } else {
                    team.barrier();
                    team.assign(ccnuma::view(y.data() + 1, 999), 2.0);
                }
            });
            ADD_FAILURE() << "no error";
        } catch (const ccnuma::error& e) {
            const std::string_view m = e.what();
            EXPECT_TRUE(m.find("ccnuma::team::assign: thread 1 made another call") != m.npos ||
                        m.find("ccnuma::team::barrier: thread 0 made another call") != m.npos)
                << m;
        }
    }
}

// assign writes to ccnuma's vectors and writable views only.
template <class D>
concept team_assigns = requires(ccnuma::team& t, D&& d) { t.assign(std::forward<D>(d), 1.0); };
static_assert(team_assigns<ccnuma::vector<double>&>);
static_assert(team_assigns<ccnuma::vector_view<double>>);
static_assert(team_assigns<const ccnuma::vector_view<double>&>);
static_assert(!team_assigns<ccnuma::vector<double>>);  // a temporary: its elements would go with it
static_assert(!team_assigns<ccnuma::vector_view<const double>>);
static_assert(!team_assigns<std::vector<double>>);
static_assert(!team_assigns<double*>);
static_assert(!team_assigns<const ccnuma::vector<double>&>);

// ---- reduce and accumulate over a seg_array ------------------------------------------------

using seg_t = ccnuma::seg_array<double>;

// Each thread's reduce and accumulate of a whole seg_array and of a subrange that starts and
// ends inside segments, in the team of the array's schedule.
TEST(Team, ReduceAndAccumulateOverASegArrayAreParReducesAndParAccumulatesBits) {
    constexpr std::size_t n = 100'003;
    for (unsigned threads : {1U, 2U, 3U, 4U}) {
        const seg_t a(n, [](std::size_t i) { return value(i); }, ccnuma::seg::per_thread, ccnuma::pad::page,
                      ccnuma::first_touch{}.threads(threads));
        ASSERT_EQ(a.segment_count(), threads);
        const auto inner_first = a.begin() + 13, inner_last = a.end() - 7;
        struct results {
            double all, inner, max, acc, inner_acc;
        };
        by_rank<results> r;
        const auto larger = [](double x, double y) { return x < y ? y : x; };
        ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) {
            r.put(team.rank(), {team.reduce(a.begin(), a.end(), 0.5), team.reduce(inner_first, inner_last),
                                team.reduce(a.begin(), a.end(), -1e300, larger), team.accumulate(a.begin(), a.end(), 0.25),
                                team.accumulate(inner_first, inner_last, 0.0)});
        });
        SCOPED_TRACE("team of " + std::to_string(threads));
        ASSERT_EQ(r.got.size(), threads);
        for (const auto& x : r.got) {
            EXPECT_EQ(bits(x.all), bits(ccnuma::par::reduce(a.begin(), a.end(), 0.5)));
            EXPECT_EQ(bits(x.inner), bits(ccnuma::par::reduce(inner_first, inner_last)));
            EXPECT_EQ(bits(x.max), bits(ccnuma::par::reduce(a.begin(), a.end(), -1e300, larger)));
            EXPECT_EQ(bits(x.acc), bits(ccnuma::par::accumulate(a.begin(), a.end(), 0.25)));
            EXPECT_EQ(bits(x.inner_acc), bits(ccnuma::par::accumulate(inner_first, inner_last, 0.0)));
        }
        double serial = 0.5;
        for (std::size_t i = 0; i < n; ++i) serial += value(i);
        EXPECT_NEAR(r.got[0].all, serial, 1e-12 * std::abs(serial) + 1e-12);
        EXPECT_EQ(r.got[0].max, *std::max_element(a.begin(), a.end()));
    }
}

// An element that records which thread folded it into a partial result. Partial results carry
// no index, so that only elements are recorded, each by the thread whose part holds it.
struct traced {
    double x = 0;
    std::size_t index = std::numeric_limits<std::size_t>::max();
};
struct tracing_plus {
    std::vector<int>* readers;
    traced operator()(const traced& l, const traced& r) const {
        for (const traced* e : {&l, &r})
            if (e->index != std::numeric_limits<std::size_t>::max()) (*readers)[e->index] = omp_get_thread_num();
        return {l.x + r.x};
    }
};

// Thread t folds the segments that the static schedule of the array's segments gives it in a
// team of this size: its own segments in the team that placed the array, the owners' split
// over the team in another.
TEST(Team, EachThreadFoldsTheSegmentsItsRankGetsByTheOwnersSchedule) {
    constexpr std::size_t n = 40'009;
    using arr = ccnuma::seg_array<traced>;
    for (unsigned placed_by : {3U, 4U})
        for (unsigned team_size : {placed_by, 2U}) {
            const arr a(n, [](std::size_t i) { return traced{1.0, i}; }, ccnuma::seg::per_thread, ccnuma::pad::page,
                        ccnuma::first_touch{}.threads(placed_by));
            std::vector<int> readers(n, -1);
            by_rank<double> r;
            ccnuma::parallel(ccnuma::schedule{.threads = team_size}, [&](ccnuma::team& team) {
                r.put(team.rank(), team.reduce(a.begin(), a.end(), traced{}, tracing_plus{&readers}).x);
            });
            SCOPED_TRACE("placed by " + std::to_string(placed_by) + ", team of " + std::to_string(team_size));
            ASSERT_EQ(r.got.size(), team_size);
            for (double s : r.got) EXPECT_EQ(s, static_cast<double>(n));
            // Segment g falls to thread t by schedule(static) over the segments in a team of
            // team_size: the runtime's own loop says which.
            const auto segment_owner = test_support::static_owners(a.segment_count(), team_size);
            std::size_t at = 0;
            for (std::size_t g = 0; g < a.segment_count(); ++g)
                for (std::size_t i = 0; i < a.segment_size(g); ++i, ++at)
                    ASSERT_EQ(readers[at], segment_owner[g]) << "element " << at << " of segment " << g;
            ASSERT_EQ(at, n);
        }
}

TEST(Team, ReduceCallsThatDifferOrThrowAreErrorsNotHangs) {
    const seg_t a(10'000, 1.0, ccnuma::seg::per_thread, ccnuma::pad::page, ccnuma::first_touch{}.threads(2));
    const ccnuma::vector<double> v(10'000, 1.0, ccnuma::first_touch{}.threads(2));
    // Ranges of another size on each thread.
    try {
        ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) { (void)team.reduce(a.begin(), a.end() - team.rank()); });
        ADD_FAILURE() << "no error";
    } catch (const ccnuma::error& e) {
        // Each thread finds the other's call different; whichever threw first is rethrown.
        const std::string_view m = e.what();
        EXPECT_TRUE(m.find("ccnuma::team::reduce: thread 0's operand has 10000 elements and thread 1's 9999") != m.npos ||
                    m.find("ccnuma::team::reduce: thread 1's operand has 9999 elements and thread 0's 10000") != m.npos)
            << m;
    }
    // A reduce against a sum of the same size.
    try {
        ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) {
            if (team.rank() == 0)
                (void)team.reduce(a.begin(), a.end());
            else
                (void)team.sum(v);
        });
        ADD_FAILURE() << "no error";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string_view(e.what()).find("made another call"), std::string_view::npos) << e.what();
    }
    // An op that throws on one thread: the other is released, the exception rethrown.
    const auto throwing = [](double x, double y) {
        if (omp_get_thread_num() == 1) throw std::runtime_error("op");
        return x + y;
    };
    EXPECT_THROW(ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) { (void)team.reduce(a.begin(), a.end(), 0.0, throwing); }),
                 std::runtime_error);
    // The empty range: init on every thread.
    by_rank<double> r;
    ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) { r.put(team.rank(), team.reduce(a.begin(), a.begin(), 4.0)); });
    ASSERT_EQ(r.got.size(), 2U);
    EXPECT_EQ(r.got[0], 4.0);
    EXPECT_EQ(r.got[1], 4.0);
}

// An orphaned `omp for` inside the function binds to the team (docs/team.md): each iteration
// runs on the thread that the runtime's static schedule gives it in a team of this size.
TEST(Team, AnOrphanedOmpForInsideTheFunctionSharesItsIterationsOverTheTeam) {
    constexpr std::size_t n = 1000;
    std::vector<int> ran(n, -1);
    std::atomic<unsigned> sizes{0};
    ccnuma::parallel(ccnuma::schedule{.threads = 2}, [&](ccnuma::team& team) {
        sizes += team.size();
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < n; ++i) ran[i] = omp_get_thread_num();
        team.barrier();
    });
    ASSERT_EQ(sizes.load(), 4U);
    EXPECT_EQ(ran, test_support::static_owners(n, 2));
}

// accumulate's op need not commute: where the owners' schedule would give a thread segments
// apart (a chunk, here thread 0 segments 0 and 2 of 3), the team still folds in segment order.
// "last" (x, y) -> y is associative and not commutative: the fold of a range is its last element.
TEST(Team, AccumulateKeepsSegmentOrderWhenTheOwnersAreChunked) {
    const auto last = [](double, double y) { return y; };
    for (std::size_t chunk : {std::size_t{0}, std::size_t{1}})
        for (unsigned threads : {2U, 3U}) {
            const seg_t a(30, [](std::size_t i) { return static_cast<double>(i); }, ccnuma::seg::count(3), ccnuma::pad::none,
                          ccnuma::first_touch{}.threads(2).chunk(chunk));
            by_rank<double> r;
            ccnuma::parallel(ccnuma::schedule{.threads = threads}, [&](ccnuma::team& team) {
                r.put(team.rank(), team.accumulate(a.begin(), a.end(), -1.0, last));
            });
            SCOPED_TRACE("chunk " + std::to_string(chunk) + ", team of " + std::to_string(threads));
            ASSERT_EQ(ccnuma::par::accumulate(a.begin(), a.end(), -1.0, last), 29.0);
            for (double x : r.got) EXPECT_EQ(x, 29.0);
        }
}

// A value type with no default constructor crosses the slots as bytes.
struct no_default {
    explicit no_default(double v) : x(v) {}
    double x;
};
static_assert(std::is_trivially_copyable_v<no_default> && !std::is_default_constructible_v<no_default>);

TEST(Team, ValuesWithoutADefaultConstructorAndCallsOfAnotherValueType) {
    const seg_t a(1000, 1.0, ccnuma::seg::per_thread, ccnuma::pad::page, ccnuma::first_touch{}.threads(2));
    const auto add = [](no_default l, no_default r) { return no_default{l.x + r.x}; };
    const ccnuma::seg_array<no_default> b(10, [](std::size_t i) { return no_default{static_cast<double>(i)}; }, ccnuma::seg::per_thread,
                                          ccnuma::pad::none, ccnuma::first_touch{}.threads(2));
    by_rank<double> r;
    ccnuma::parallel(b.schedule(), [&](ccnuma::team& team) { r.put(team.rank(), team.accumulate(b.begin(), b.end(), no_default{0.5}, add).x); });
    ASSERT_EQ(r.got.size(), 2U);
    EXPECT_EQ(r.got[0], 45.5);
    EXPECT_EQ(r.got[1], 45.5);
    // The same size, another value type: an error, not one thread's float read as a double.
    try {
        ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) {
            if (team.rank() == 0)
                (void)team.reduce(a.begin(), a.end(), 0.0);
            else
                (void)team.reduce(a.begin(), a.end(), 0.0F);
        });
        ADD_FAILURE() << "no error";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string_view(e.what()).find("another value type"), std::string_view::npos) << e.what();
    }
}

// reduce and accumulate take ranges whose segments have owners: a seg_array's, not a plain
// pointer's or a std::vector's (ccnuma::team::sum takes those, as vectors and views).
template <class It>
concept team_reduces = requires(ccnuma::team& t, It i) { t.reduce(i, i, 0.0); };
static_assert(team_reduces<seg_t::iterator>);
static_assert(team_reduces<seg_t::const_iterator>);
static_assert(!team_reduces<double*>);
static_assert(!team_reduces<std::vector<double>::iterator>);

// Run by ctest with OMP_WAIT_POLICY unset, passive and active (tests/CMakeLists.txt).
TEST(TeamWaitPolicyEnvironment, PollsAsOmpWaitPolicySays) {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const auto procs = static_cast<unsigned>(std::max(1, omp_get_num_procs()));
    EXPECT_EQ(ccnuma::detail::team_spins(procs + 1), 0U) << "a team larger than the CPUs never polls";
    if (policy == nullptr)
        EXPECT_EQ(ccnuma::detail::team_spins(procs), 20000U);
    else if (std::string_view(policy) == "passive")
        EXPECT_EQ(ccnuma::detail::team_spins(procs), 0U);
    else if (std::string_view(policy) == "ACTIVE" || std::string_view(policy) == "active")
        EXPECT_EQ(ccnuma::detail::team_spins(procs), std::numeric_limits<unsigned>::max());
    else
        FAIL() << "OMP_WAIT_POLICY=" << policy << ": this test is run with it unset, passive, active or ACTIVE";
    // And a team's calls still meet under it.
    const ccnuma::vector<double> a(10'000, 1.0, ccnuma::first_touch{}.threads(2));
    std::atomic<int> right{0};
    ccnuma::parallel(a.policy(), [&](ccnuma::team& team) {
        for (int it = 0; it < 200; ++it)
            if (team.sum(a) == 10'000.0) ++right;
    });
    EXPECT_EQ(right.load(), 400);
}

}  // namespace
