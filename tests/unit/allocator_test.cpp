// ccnuma::allocator, memory_resource and parallel_new as the standard library uses them.

#include <ccnuma/allocator.hpp>
#include <ccnuma/error.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

#include <list>
#include <map>
#include <memory_resource>
#include <numeric>
#include <vector>

namespace {

TEST(Allocator, WorksWithStandardContainers) {
    std::vector<double, ccnuma::allocator<double>> v(100000, 1.5);
    EXPECT_DOUBLE_EQ(std::accumulate(v.begin(), v.end(), 0.0), 150000.0);
    v.resize(200001, 2.0);
    EXPECT_DOUBLE_EQ(v.back(), 2.0);
    std::list<int, ccnuma::allocator<int, ccnuma::blocked>> l{1, 2, 3};  // rebinds to list nodes
    EXPECT_EQ(l.size(), 3u);
    std::map<int, int, std::less<>, ccnuma::allocator<std::pair<const int, int>, ccnuma::interleave>> m{{1, 2}};
    EXPECT_EQ(m.at(1), 2);
}

TEST(Allocator, RebindAndEqualityFollowThePolicy) {
    using a = ccnuma::allocator<double, ccnuma::interleave>;
    const a x(ccnuma::interleave{}.nodes({0}));
    const std::allocator_traits<a>::rebind_alloc<int> y(x);
    EXPECT_TRUE(y == x);
    EXPECT_EQ(y.policy(), x.policy());
    EXPECT_FALSE(x == a(ccnuma::interleave{}));
    EXPECT_THROW((void)a().allocate(~std::size_t{0} / 4), std::bad_array_new_length);
}

TEST(MemoryResource, ServesPmrContainersAndComparesByPolicy) {
    ccnuma::memory_resource r1{ccnuma::blocked{}}, r2{ccnuma::blocked{}}, r3{ccnuma::on_node(0)};
    std::pmr::vector<double> v(50000, 3.0, &r1);
    EXPECT_DOUBLE_EQ(std::accumulate(v.begin(), v.end(), 0.0), 150000.0);
    EXPECT_TRUE(r1.is_equal(r2));
    EXPECT_FALSE(r1.is_equal(r3));
    EXPECT_FALSE(r1.is_equal(*std::pmr::new_delete_resource()));
}

struct tracked : ccnuma::parallel_new<tracked> {
    static inline int live = 0;
    tracked() { ++live; }
    ~tracked() { --live; }
    double v[4] = {};
};

struct alignas(64) wide : ccnuma::parallel_new<wide, ccnuma::blocked> {
    double v[8] = {};
};

TEST(ParallelNew, ArraysAreConstructedInPlacedStorageAndFreed) {
    tracked* t = new tracked[10000];
    EXPECT_EQ(tracked::live, 10000);
    t[9999].v[3] = 1;
    delete[] t;
    EXPECT_EQ(tracked::live, 0);
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{70000}}) {
        wide* w = new wide[n];
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w) % 64, 0u) << n;
        w[n - 1].v[7] = 2;
        delete[] w;
    }
}

// Issue 35: the array cookie of a sized delete[] (8 bytes, the element count) used to come first
// on the block's page, so every cell sat 8 bytes off its line and page: the slowest arrays of
// `ccnuma-bench placement`. From one page up the cells now start on a page, the cookie just
// before them, and the elements are what the partition splits.
struct number : ccnuma::parallel_new<number> {
    double v = 0;
};
constexpr std::size_t cells = 30000;  // 240,000 bytes: mapped, whatever the page size up to 64 KiB
struct exactly_partitioned : ccnuma::first_touch {
    exactly_partitioned() { sched.partition = ccnuma::partition::equal(cells, 2); }
};
struct counted : ccnuma::parallel_new<counted, exactly_partitioned> {
    double v = 0;
};
// Classes derived from a parallel_new class inherit its operators, with their own cookie: 16
// bytes for one aligned to 16 (through the plain operator new[]), its alignment for an
// over-aligned one. Their elements must be aligned for them.
struct number16 : number {
    alignas(16) double w = 0;
};
struct number64 : number {
    alignas(64) double w = 0;
};

TEST(Issue35, ParallelNewCellsStartOnAPage) {
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    auto offset = [&](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % page; };
    for (std::size_t n : {std::size_t{page / 8}, std::size_t{page / 8 + 1}, std::size_t{100000}}) {
        SCOPED_TRACE(n);
        number* a = new number[n];  // trivially destructible: the cookie is the sized delete[]'s
        // An odd count of 8-byte cells asks for what 16-byte-aligned cells could: the block stays
        // on the page, the cells 8 bytes in.
        EXPECT_EQ(offset(a), n % 2 == 0 ? 0u : 8u) << a;
        a[n - 1].v = 1;
        delete[] a;
        tracked* t = new tracked[n];
        EXPECT_EQ(offset(t), 0u) << t;
        EXPECT_EQ(tracked::live, static_cast<int>(n));
        delete[] t;
        EXPECT_EQ(tracked::live, 0);
        wide* w = new wide[n];  // over-aligned: a 64-byte cookie
        EXPECT_EQ(offset(w), 0u) << w;
        w[n - 1].v[7] = 2;
        delete[] w;
        number16* d16 = new number16[n];
        EXPECT_EQ(offset(d16) % alignof(number16), 0u) << d16;
        d16[n - 1].w = 3;
        delete[] d16;
        number64* d64 = new number64[n];
        EXPECT_EQ(offset(d64), 0u) << d64;
        d64[n - 1].w = 4;
        delete[] d64;
    }
    // Below a page the heap serves the block (the cookie, then the cells) aligned as operator
    // new[] is.
    number* small = new number[100];
    EXPECT_EQ((reinterpret_cast<std::uintptr_t>(small) - sizeof(std::size_t)) % __STDCPP_DEFAULT_NEW_ALIGNMENT__, 0u);
    delete[] small;
    // A partition of exactly the cells is accepted: the cookie is not counted as an element (it
    // made the range one element longer, which such a partition refuses).
    counted* c = nullptr;
    EXPECT_NO_THROW(c = new counted[cells]);
    EXPECT_EQ(offset(c), 0u) << c;
    delete[] c;
    EXPECT_THROW((void)new counted[cells + 2], ccnuma::error);
}

// Issue 17 (newcomer friction): the policy types an allocator takes, as a concept. A wrong one is
// a one-line static_assert (allocator.Issue17.WrongPolicyIsOneErrorNamingTheValidTypes compiles
// tests/unit/allocator_wrong_policy.cpp to check that); a derived policy stays valid.
TEST(Issue17, AllocatorTakesPlacementPoliciesOnly) {
    struct huge_first_touch : ccnuma::first_touch {
        huge_first_touch() { page = ccnuma::page_kind::huge; }
    };
    static_assert(ccnuma::placement_policy<ccnuma::first_touch> && ccnuma::placement_policy<ccnuma::interleave> &&
                  ccnuma::placement_policy<ccnuma::policy> && ccnuma::placement_policy<huge_first_touch>);
    static_assert(!ccnuma::placement_policy<int> && !ccnuma::placement_policy<unsigned> &&
                  !ccnuma::placement_policy<double>);
    std::vector<double, ccnuma::allocator<double, huge_first_touch>> v(1000, 1.0);
    EXPECT_EQ(v.size(), 1000u);
    EXPECT_EQ(v.get_allocator().policy().page, ccnuma::page_kind::huge);
}

// Issue 26: the tier policies serve every carrier that takes a policy, by type and at run time.
TEST(Issue26, TierPoliciesServeAllocatorsAndResources) {
    const auto wi = ccnuma::weighted_interleave{}.nodes({0}).weights({2});
    using weighted = ccnuma::allocator<double, ccnuma::weighted_interleave>;
    std::vector<double, weighted> a(100000, 1.5, weighted(wi));
    EXPECT_DOUBLE_EQ(std::accumulate(a.begin(), a.end(), 0.0), 150000.0);
    EXPECT_EQ(a.get_allocator().policy(), wi);
    std::vector<double, ccnuma::allocator<double, ccnuma::fastest>> b(100000, 2.0);
    EXPECT_DOUBLE_EQ(b.back(), 2.0);
    using any = ccnuma::allocator<double, ccnuma::policy>;
    std::vector<double, any> c(100000, 3.0, any(ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth)));
    EXPECT_DOUBLE_EQ(c.front(), 3.0);
    EXPECT_FALSE(any(ccnuma::fastest{}) == any(ccnuma::first_touch{}));
    ccnuma::memory_resource r1{wi}, r2{ccnuma::fastest{}}, r3{ccnuma::weighted_interleave{}.nodes({0})};
    for (auto* r : {&r1, &r2, &r3}) {
        std::pmr::vector<double> v(50000, 3.0, r);
        EXPECT_DOUBLE_EQ(std::accumulate(v.begin(), v.end(), 0.0), 150000.0);
    }
    EXPECT_FALSE(r1.is_equal(r2));
    EXPECT_TRUE(r1.is_equal(ccnuma::memory_resource{wi}));
    // Bad weights are refused by the allocator as by allocate.
    const weighted zero(ccnuma::weighted_interleave{}.nodes({0}).weights({0}));
    EXPECT_THROW((void)weighted(zero).allocate(1000), ccnuma::error);
}

}  // namespace
