// What a whole-range write costs the OpenMP runtime, counted by an OMPT tool inside this test
// (LLVM's libomp; libgomp has no OMPT): an expression assignment, a scalar or copy assignment
// and a streamed write each open one parallel region and synchronize no more than the
// hand-written `#pragma omp parallel for schedule(static)` does; par::fill and par::transform
// on a seg_array open one region. Counts, not timings: the same on every machine.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/vector.hpp>

#include <gtest/gtest.h>
#include <omp-tools.h>
#include <omp.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

namespace {

// Events by kind, summed over the team's threads (a begin endpoint counts once).
struct counts {
    int regions = 0;
    std::array<int, 16> sync{};  // by ompt_sync_region_t
    int loops = 0;               // worksharing loops begun, one per thread
};

std::atomic<int> regions{0}, loops{0};
std::array<std::atomic<int>, 16> sync_kinds{};

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int, int, const void*) { ++regions; }
void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, const void*) {
    if (endpoint == ompt_scope_begin && static_cast<std::size_t>(kind) < sync_kinds.size()) ++sync_kinds[kind];
}
void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, uint64_t, const void*) {
    if (endpoint == ompt_scope_begin && type == ompt_work_loop) ++loops;
}

bool tool_active = false;

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
    auto set = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
    const bool ok = set(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&on_parallel_begin)) == ompt_set_always &&
                    set(ompt_callback_sync_region, reinterpret_cast<ompt_callback_t>(&on_sync_region)) != ompt_set_never &&
                    set(ompt_callback_work, reinterpret_cast<ompt_callback_t>(&on_work)) != ompt_set_never;
    tool_active = ok;
    return 1;
}
void finalize(ompt_data_t*) {}

// Runs f and returns what it made the runtime do.
template <class F>
counts count(F&& f) {
    regions = 0;
    loops = 0;
    for (auto& k : sync_kinds) k = 0;
    f();
    counts c;
    c.regions = regions;
    c.loops = loops;
    for (std::size_t k = 0; k < c.sync.size(); ++k) c.sync[k] = sync_kinds[k];
    return c;
}

std::string describe(const counts& c) {
    std::string s = std::to_string(c.regions) + " region(s), " + std::to_string(c.loops) + " loop(s), sync:";
    for (std::size_t k = 0; k < c.sync.size(); ++k)
        if (c.sync[k] != 0) s += " kind " + std::to_string(k) + " x" + std::to_string(c.sync[k]);
    return s;
}

// The library's write against the raw loop: one region each, and no kind of synchronization
// more often than the raw loop has it.
void expect_no_more_than_raw(const counts& ours, const counts& raw, const char* what) {
    SCOPED_TRACE(std::string(what) + ": " + describe(ours) + "; raw loop: " + describe(raw));
    EXPECT_EQ(raw.regions, 1);
    EXPECT_EQ(ours.regions, 1);
    for (std::size_t k = 0; k < ours.sync.size(); ++k) EXPECT_LE(ours.sync[k], raw.sync[k]) << "sync kind " << k;
    EXPECT_LE(ours.loops, raw.loops);
}

__attribute__((noinline)) void raw_triad(double* a, const double* b, const double* c, const double* d, std::size_t n) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + c[i] * d[i];
}

class Regions : public ::testing::Test {
protected:
    static constexpr std::size_t n = 1 << 16;
    void SetUp() override {
        omp_set_num_threads(2);
        // libomp calls the tool's initialize at its first parallel region.
#pragma omp parallel
        { (void)omp_get_thread_num(); }
        ASSERT_TRUE(tool_active) << "the OMPT tool of this test did not start (is the runtime libomp?)";
    }
};

TEST_F(Regions, ExpressionAssignmentsCostWhatTheRawParallelForCosts) {
    ccnuma::vector<double> a(n), b(n, 1.0), c(n, 2.0), d(n, 3.0);
    std::vector<double> ra(n), rb(n, 1.0), rc(n, 2.0), rd(n, 3.0);
    for (const ccnuma::stores mode : {ccnuma::stores::automatic, ccnuma::stores::regular, ccnuma::stores::streaming}) {
        a.set_store_mode(mode);
        a = b + c * d;  // the first write of a process reads the streaming threshold once
        raw_triad(ra.data(), rb.data(), rc.data(), rd.data(), n);
        const counts raw = count([&] { raw_triad(ra.data(), rb.data(), rc.data(), rd.data(), n); });
        const std::string m(ccnuma::to_string(mode));
        expect_no_more_than_raw(count([&] { a = b + c * d; }), raw, ("a = b + c * d, " + m).c_str());
        expect_no_more_than_raw(count([&] { a = 0.5; }), raw, ("a = 0.5, " + m).c_str());
        expect_no_more_than_raw(count([&] { a = b; }), raw, ("a = b, " + m).c_str());
        expect_no_more_than_raw(count([&] { a += c; }), raw, ("a += c, " + m).c_str());
        EXPECT_EQ(a[n - 1], 3.0);
    }
}

TEST_F(Regions, ParallelAlgorithmsOpenOneRegion) {
    ccnuma::seg_array<double> a(n, 0.0), b(n, 1.0);
    std::vector<double> ra(n), rb(n, 1.0), rc(n, 2.0), rd(n, 3.0);
    raw_triad(ra.data(), rb.data(), rc.data(), rd.data(), n);
    const counts raw = count([&] { raw_triad(ra.data(), rb.data(), rc.data(), rd.data(), n); });
    for (const ccnuma::stores mode : {ccnuma::stores::regular, ccnuma::stores::streaming}) {
        const std::string m(ccnuma::to_string(mode));
        expect_no_more_than_raw(count([&] { ccnuma::par::fill(mode, a.begin(), a.end(), 2.0); }), raw,
                                ("par::fill, " + m).c_str());
        expect_no_more_than_raw(count([&] { ccnuma::par::transform(mode, b.begin(), b.end(), a.begin(), [](double x) { return 2 * x; }); }),
                                raw, ("par::transform, " + m).c_str());
        expect_no_more_than_raw(count([&] { ccnuma::par::copy(mode, b.begin(), b.end(), a.begin()); }), raw,
                                ("par::copy, " + m).c_str());
    }
    EXPECT_EQ(a[n - 1], 1.0);
}

// Issue 35: a team of one outside any region forks once per thread, then runs on the calling
// thread (an empty region of one thread cost 1.2 to 1.5 us, a flat-MPI rank paid it at every
// call). On a thread of its own, so that its first call is the thread's first fork; the
// results are checked element by element. Inside a user's region the library always forks:
// there an orphaned loop would share out its iterations among the enclosing team.
TEST_F(Regions, Issue35ATeamOfOneForksOnceThenRunsOnTheCallingThread) {
    counts first, later, inner, nesting_on, nested;
    std::vector<double> values;
    double total = 0, inner_total = 0, total_nesting = 0, nested_total[2] = {0, 0};
    std::thread alone([&] {
        omp_set_num_threads(1);
        first = count([&] { ccnuma::vector<double> x(n, 1.0); });
        ccnuma::vector<double> a(n), b(n, 1.0), c(n, 2.0), d(n, 3.0);
        ccnuma::seg_array<double> s(n, 0.0);
        later = count([&] {
            a = b + c * d;
            a += b;
            total = ccnuma::sum(a);
            ccnuma::par::fill(s.begin(), s.end(), 2.0);
            total += ccnuma::par::reduce(s.begin(), s.end(), 0.0);
        });
        values.assign(a.begin(), a.end());
        // A container built inside an inline region (each element's copy constructor) forks:
        // worksharing may not nest in worksharing. One region per element copied.
        inner = count([&] {
            ccnuma::vector<ccnuma::vector<double>> vv(3, ccnuma::vector<double>(8, 1.0));
            inner_total = ccnuma::sum(vv[0]) + ccnuma::sum(vv[2]);
        });
        // With nesting on, a level-1 region's ICVs may differ from level 0's: every call forks.
        omp_set_max_active_levels(2);
        nesting_on = count([&] { total_nesting = ccnuma::sum(a); });
        omp_set_max_active_levels(1);
        omp_set_num_threads(2);
        nested = count([&] {
#pragma omp parallel num_threads(2)
            nested_total[omp_get_thread_num()] = ccnuma::sum(a);
        });
    });
    alone.join();
    EXPECT_EQ(first.regions, 1) << describe(first);
    EXPECT_EQ(later.regions, 0) << describe(later);
    ASSERT_EQ(values.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(values[i], 8.0) << "a[" << i << "]";
    EXPECT_EQ(total, 8.0 * n + 2.0 * n);
    EXPECT_EQ(inner.regions, 3) << describe(inner);
    EXPECT_EQ(inner_total, 16.0);
    EXPECT_EQ(nesting_on.regions, 1) << describe(nesting_on);
    EXPECT_EQ(total_nesting, 8.0 * n);
    // The user's team of two and one team of one inside each of its threads, each summing all.
    EXPECT_EQ(nested.regions, 3) << describe(nested);
    EXPECT_EQ(nested_total[0], 8.0 * n);
    EXPECT_EQ(nested_total[1], 8.0 * n);
}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
    static ompt_start_tool_result_t result{&initialize, &finalize, {0}};
    return &result;
}
