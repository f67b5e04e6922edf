// Runs inside ccnuma-vm (2 and 4 nodes, base pages and THP; see tests/CMakeLists.txt): every
// placement policy on every carrier, checked page by page against an expectation computed here,
// independently of the library's own partition code.

#include <ccnuma/allocator.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/topology.hpp>

#include "../support/page_expectations.hpp"
#include "../support/pagemap.hpp"

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory_resource>
#include <vector>

namespace {

// 16 MiB of doubles: with 4 threads each chunk is 4 MiB, whole huge pages under THP.
constexpr std::size_t n = (std::size_t{16} << 20) / sizeof(double);

using test_support::expected_first_touch;
using test_support::matching;
using test_support::nodes;
using test_support::page;

void serial_fill(double* p, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) p[i] = static_cast<double>(i);
}

// The checks of one policy, whatever carried the allocation.
void expect_local(const double* p, std::size_t count, const char* what) {
    const auto actual = ccnuma::page_nodes(p, count * sizeof(double));
    const double m = matching(actual, expected_first_touch(p, count));
    EXPECT_GE(m, 0.99) << what << ": " << ccnuma::node_histogram(actual).to_string();
}

void expect_round_robin(const double* p, std::size_t count, const std::vector<unsigned>& set, const char* what) {
    const auto actual = ccnuma::page_nodes(p, count * sizeof(double));
    std::size_t steps = 0, good = 0;
    for (std::size_t i = 0; i + 1 < actual.size(); ++i) {
        const auto at = std::find(set.begin(), set.end(), static_cast<unsigned>(actual[i]));
        if (actual[i] < 0 || at == set.end()) continue;
        ++steps;
        const unsigned next = set[static_cast<std::size_t>(at - set.begin() + 1) % set.size()];
        good += actual[i + 1] == static_cast<int>(next);
    }
    const auto h = ccnuma::node_histogram(actual);
    EXPECT_GE(static_cast<double>(good) / static_cast<double>(std::max<std::size_t>(steps, 1)), 0.99)
        << what << ": consecutive pages must follow the node set " << h.to_string();
    EXPECT_EQ(h.not_present, 0u) << what;
    for (unsigned node : set) EXPECT_GE(h.share(node), 0.9 / static_cast<double>(set.size())) << what << " node " << node;
}

void expect_on(const double* p, std::size_t count, unsigned node, const char* what) {
    const auto h = ccnuma::node_histogram(p, count * sizeof(double));
    EXPECT_GE(h.share(node), 0.99) << what << ": " << h.to_string();
}

class Placement : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(ccnuma::emulated_machine::current().has_value())
            << "run inside ccnuma-vm: ccnuma-vm --nodes 2 --env CCNUMA_BIND=4,scatter -- placement_vm_test";
        ASSERT_GE(nodes().size(), 2u);
        ASSERT_TRUE(ccnuma::support().move_pages && ccnuma::support().mbind) << ccnuma::support().to_string();
    }
    ccnuma::page_kind pg = std::getenv("CCNUMA_TEST_HUGE") ? ccnuma::page_kind::huge : ccnuma::page_kind::base;
    unsigned last = nodes().back();
};

// --- the baseline: what the library is for ---------------------------------------------------

TEST_F(Placement, PlainVectorPutsEveryPageOnOneNode) {
    std::vector<double> v(n);
    const auto h = ccnuma::node_histogram(v.data(), n * sizeof(double));
    double top = 0;
    for (unsigned node : nodes()) top = std::max(top, h.share(node));
    EXPECT_GE(top, 0.99) << "std::vector's serial value-init: " << h.to_string();
    EXPECT_LT(ccnuma::locality(v.data(), n, sizeof(double)), 0.75) << "so a static loop over it is mostly remote";
}

// --- every policy on every carrier ---------------------------------------------------------

TEST_F(Placement, FirstTouch) {
    const auto pol = ccnuma::first_touch{}.pages(pg);
    {
        auto* raw = static_cast<double*>(ccnuma::allocate(n * sizeof(double), pol, sizeof(double)));
        expect_local(raw, n, "raw allocate");
        serial_fill(raw, n);  // already placed: a serial write moves nothing
        expect_local(raw, n, "raw allocate after a serial fill");
        ccnuma::deallocate(raw, n * sizeof(double), pol);
    }
    std::vector<double, ccnuma::allocator<double>> v(n, 1.0, ccnuma::allocator<double>(pol));
    expect_local(v.data(), n, "std::vector with ccnuma::allocator");
    ccnuma::memory_resource res{pol};
    std::pmr::vector<double> pv(n, 1.0, &res);
    expect_local(pv.data(), n, "std::pmr::vector on ccnuma::memory_resource");
    EXPECT_GE(ccnuma::locality(v.data(), n, sizeof(double)), 0.99);
}

// parallel_new takes its policy as a type; these give the huge-page variants for the THP run.
struct huge_first_touch : ccnuma::first_touch {
    huge_first_touch() { page = ccnuma::page_kind::huge; }
};
struct huge_blocked : ccnuma::blocked {
    huge_blocked() { page = ccnuma::page_kind::huge; }
};
struct huge_interleave : ccnuma::interleave {
    huge_interleave() { page = ccnuma::page_kind::huge; }
};

template <class Policy>
struct cell : ccnuma::parallel_new<cell<Policy>, Policy> {
    double v[8] = {};
};

// new[] of `cells` cells with Policy, checked by `check`. The array cookie of the sized delete[]
// comes first; the cells start on the placement unit after it (issue 35), as for raw allocate.
template <class Policy, class Check>
void with_cells(Check check) {
    constexpr std::size_t cells = n / 8;
    auto* c = new cell<Policy>[cells];
    const std::size_t huge = ccnuma::support().huge_page_size;
    const std::size_t unit = ccnuma::page_kind_of(Policy{}) == ccnuma::page_kind::huge && huge ? huge : page;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) % unit, 0u) << static_cast<const void*>(c);
    check(reinterpret_cast<const double*>(c), cells * 8);
    delete[] c;
}

TEST_F(Placement, FirstTouchWithParallelNew) {
    auto check = [](const double* p, std::size_t count) { expect_local(p, count, "parallel_new, first_touch"); };
    if (pg == ccnuma::page_kind::huge) with_cells<huge_first_touch>(check);
    else with_cells<ccnuma::first_touch>(check);
}

TEST_F(Placement, BlockedSurvivesSerialInitialization) {
    const auto pol = ccnuma::blocked{}.pages(pg);
    {
        auto* raw = static_cast<double*>(ccnuma::allocate(n * sizeof(double), pol, sizeof(double)));
        serial_fill(raw, n);  // the whole point: the master writes everything, pages still go local
        expect_local(raw, n, "raw allocate, serial fill");
        ccnuma::deallocate(raw, n * sizeof(double), pol);
    }
    ccnuma::allocator<double, ccnuma::blocked> al(pol);
    std::vector<double, ccnuma::allocator<double, ccnuma::blocked>> v(n, 2.0, al);  // serial value-init
    expect_local(v.data(), n, "std::vector with allocator<blocked>");
    ccnuma::memory_resource res{pol};
    std::pmr::vector<double> pv(n, 2.0, &res);
    expect_local(pv.data(), n, "std::pmr::vector on a blocked resource");
}

// Issue 11: reports say how many pages are in transparent huge pages, since one first touch then
// places 512 pages at once. Huge-page policies get them; base-page policies under THP "madvise"
// (the default machine) get none.
TEST_F(Placement, ReportsCountTransparentHugePages) {
    for (const auto& pol : {ccnuma::policy{ccnuma::first_touch{}.pages(pg)}, ccnuma::policy{ccnuma::blocked{}.pages(pg)}}) {
        auto* p = static_cast<double*>(ccnuma::allocate(n * sizeof(double), pol, sizeof(double)));
        serial_fill(p, n);
        const auto r = ccnuma::report_placement(p, n, sizeof(double));
        EXPECT_EQ(r.pages.huge_unknown, 0u) << r.to_string();
        EXPECT_EQ(r.pages.zero_page, 0u) << r.to_string();
        // The count smaps gives, independently; the kernel may fail a huge page under
        // fragmentation, so a huge-page policy is only asked to get most of them. (Before issue
        // 11 it got none on this kernel: first touch read, mapping the huge zero page, then
        // wrote, which split it into base pages.)
        const long kb = test_support::anon_huge_kb_in(p, n * sizeof(double));
        EXPECT_EQ(r.pages.huge * page, static_cast<std::size_t>(kb) * 1024) << r.to_string();
        if (pg == ccnuma::page_kind::huge) {
            EXPECT_GE(static_cast<double>(r.pages.huge), 0.5 * static_cast<double>(r.pages.total)) << r.to_string();
            EXPECT_NE(r.to_string().find("in transparent huge pages"), std::string::npos) << r.to_string();
        } else if (ccnuma::support().thp_mode != "always") {
            EXPECT_EQ(r.pages.huge, 0u) << r.to_string();
        }
        ccnuma::deallocate(p, n * sizeof(double), pol);
    }
}

TEST_F(Placement, BlockedWithParallelNew) {
    auto check = [](const double* p, std::size_t count) { expect_local(p, count, "parallel_new, blocked"); };
    if (pg == ccnuma::page_kind::huge) with_cells<huge_blocked>(check);
    else with_cells<ccnuma::blocked>(check);
}

TEST_F(Placement, InterleaveAllNodesAndASubset) {
    const auto all = ccnuma::interleave{}.pages(pg);
    {
        auto* raw = static_cast<double*>(ccnuma::allocate(n * sizeof(double), all, sizeof(double)));
        serial_fill(raw, n);
        // Huge pages interleave per 2 MiB, so only the shares are checked for them.
        if (pg == ccnuma::page_kind::base) expect_round_robin(raw, n, nodes(), "raw allocate");
        const auto h = ccnuma::node_histogram(raw, n * sizeof(double));
        for (unsigned node : nodes()) EXPECT_GE(h.share(node), 0.9 / static_cast<double>(nodes().size())) << h.to_string();
        ccnuma::deallocate(raw, n * sizeof(double), all);
    }
    if (pg == ccnuma::page_kind::huge) return;
    const std::vector<unsigned> subset = {nodes().front(), last};
    ccnuma::allocator<double, ccnuma::interleave> al(ccnuma::interleave{}.nodes(subset));
    std::vector<double, decltype(al)> v(n, 3.0, al);
    expect_round_robin(v.data(), n, subset, "std::vector with allocator<interleave(first,last)>");
    ccnuma::memory_resource res{ccnuma::interleave{}};
    std::pmr::vector<double> pv(n, 3.0, &res);
    expect_round_robin(pv.data(), n, nodes(), "std::pmr::vector on an interleave resource");
}

TEST_F(Placement, InterleaveWithParallelNew) {
    const auto all = nodes();
    if (pg == ccnuma::page_kind::huge) {
        with_cells<huge_interleave>([&](const double* p, std::size_t count) {
            const auto h = ccnuma::node_histogram(p, count * sizeof(double));
            for (unsigned node : all) EXPECT_GE(h.share(node), 0.9 / static_cast<double>(all.size())) << h.to_string();
        });
    } else {
        with_cells<ccnuma::interleave>(
            [&](const double* p, std::size_t count) { expect_round_robin(p, count, all, "parallel_new, interleave"); });
    }
}

TEST_F(Placement, OnNodeAndPreferred) {
    for (const ccnuma::policy& pol : {ccnuma::policy(ccnuma::on_node(last, pg)), ccnuma::policy(ccnuma::preferred(last, pg))}) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        auto* raw = static_cast<double*>(ccnuma::allocate(n * sizeof(double), pol, sizeof(double)));
        serial_fill(raw, n);
        expect_on(raw, n, last, "raw allocate");
        ccnuma::deallocate(raw, n * sizeof(double), pol);
        ccnuma::memory_resource res{pol};
        std::pmr::vector<double> pv(n, 4.0, &res);
        expect_on(pv.data(), n, last, "std::pmr::vector");
    }
    ccnuma::allocator<double, ccnuma::on_node> al(ccnuma::on_node(last, pg));
    std::vector<double, decltype(al)> v(n, 5.0, al);
    expect_on(v.data(), n, last, "std::vector with allocator<on_node>");
}

// --- migration -----------------------------------------------------------------------------

TEST_F(Placement, MigrateMovesExistingPagesToTheNewPolicy) {
    const auto start = ccnuma::on_node(nodes().front(), pg);
    const std::size_t bytes = n * sizeof(double);
    auto* p = static_cast<double*>(ccnuma::allocate(bytes, start, sizeof(double)));
    serial_fill(p, n);
    expect_on(p, n, nodes().front(), "before");
    // Targets of the same page size: moving single base pages of huge pages would split them.
    ccnuma::migrate(p, bytes, ccnuma::interleave{}.pages(pg));
    auto h = ccnuma::node_histogram(p, bytes);
    for (unsigned node : nodes()) EXPECT_GE(h.share(node), 0.9 / static_cast<double>(nodes().size())) << h.to_string();
    if (pg == ccnuma::page_kind::base) expect_round_robin(p, n, nodes(), "after migrate to interleave");
    ccnuma::migrate(p, bytes, ccnuma::blocked{}.pages(pg));
    expect_local(p, n, "after migrate to blocked");
    ccnuma::migrate(p, bytes, ccnuma::on_node(last, pg));
    expect_on(p, n, last, "after migrate to on_node(last)");
    ccnuma::migrate(p, bytes, ccnuma::first_touch{}.pages(pg));
    expect_local(p, n, "after migrate to first_touch");
    for (std::size_t i = 0; i < n; i += 4097) ASSERT_EQ(p[i], static_cast<double>(i)) << "migration kept the data";
    ccnuma::deallocate(p, bytes, start);
}

// --- edge cases ----------------------------------------------------------------------------

struct alignas(64) wide {
    double v[8];
};

TEST_F(Placement, OddSizesAndOverAlignedTypes) {
    for (std::size_t count : {std::size_t{1}, page / sizeof(double) * 3 + 13, n + 1}) {
        SCOPED_TRACE(count);
        std::vector<double, ccnuma::allocator<double, ccnuma::blocked>> v(count, 1.0);
        if (count * sizeof(double) >= page * 16) expect_local(v.data(), count, "blocked, odd size");
        EXPECT_EQ(v.back(), 1.0);
    }
    std::vector<wide, ccnuma::allocator<wide>> w(n / 8);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data()) % 64, 0u);
    expect_local(reinterpret_cast<const double*>(w.data()), n, "first_touch of alignas(64) elements");
}

TEST_F(Placement, CallocTrapIsVisible) {
    // Read-only access to untouched memory maps the shared zero page: nothing is placed yet.
    // 64 MiB: above glibc's largest mmap threshold, so calloc maps fresh memory rather than
    // recycling (and clearing) heap pages.
    const std::size_t bytes = std::size_t{64} << 20;
    auto* p = static_cast<double*>(std::calloc(bytes / sizeof(double), sizeof(double)));
    ASSERT_NE(p, nullptr);
    double sum = 0;
    for (std::size_t i = 0; i < bytes / sizeof(double); i += page / sizeof(double)) sum += p[i];
    EXPECT_EQ(sum, 0.0);
    // Issue 11: zero-page pages are counted apart from the never-faulted ones; which is which
    // comes from the test's own reading of the page tables (the guest kernel maps the zero page).
    std::size_t zero = 0;
    const auto first = reinterpret_cast<std::uintptr_t>(p) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) / page * page;
    for (auto a = first; a < end; a += page) zero += test_support::on_zero_page(test_support::read_raw_page(reinterpret_cast<const void*>(a)));
    const auto h = ccnuma::node_histogram(p, bytes);
    EXPECT_GE(static_cast<double>(zero) / static_cast<double>(h.total), 0.99) << "the guest kernel maps the zero page";
    EXPECT_EQ(h.zero_page, zero) << h.to_string();
    EXPECT_GE(static_cast<double>(h.not_present + h.zero_page) / static_cast<double>(h.total), 0.99) << h.to_string();
    EXPECT_NE(h.to_string().find("read but never written (zero page)"), std::string::npos) << h.to_string();
    const auto nodes = ccnuma::page_nodes(p, bytes);
    EXPECT_GE(static_cast<double>(std::count(nodes.begin(), nodes.end(), ccnuma::page_not_present)) /
                  static_cast<double>(nodes.size()),
              0.99);
    std::free(p);
}

}  // namespace
