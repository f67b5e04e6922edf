// Runs inside ccnuma-vm (2 and 4 nodes; see tests/CMakeLists.txt), under ccnuma-run's binding:
// with page padding every page of segment s is on the node of the thread that owns s; with
// pad::none the pages at segment boundaries are shared, and shown; par::for_each and
// par::transform touch each segment only from its owner thread, on the node of its pages.
// Owners and their nodes are found here by running the static loop over the segments and
// asking each thread's CPU, independently of the library's code.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/seg_array.hpp>

#include "../support/page_expectations.hpp"

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using test_support::page;

// 16 MiB of doubles and a few more, so that no segment boundary falls on a page boundary.
constexpr std::size_t n = (std::size_t{16} << 20) / sizeof(double) + 3;

struct owner {
    int thread = -1;
    int node = -1;
};

// The thread that `schedule(static)` over the segment indices gives each segment to, in a team
// of the array's size, and the node that thread runs on.
std::vector<owner> owners(std::size_t segments, const ccnuma::schedule& s) {
    std::vector<owner> o(segments);
#pragma omp parallel num_threads(static_cast<int>(s.threads))
    {
        unsigned cpu = 0, node = 0;
        ::getcpu(&cpu, &node);
        if (s.chunk == 0) {
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < segments; ++i) o[i] = {omp_get_thread_num(), static_cast<int>(node)};
        } else {
#pragma omp for schedule(static, s.chunk)
            for (std::size_t i = 0; i < segments; ++i) o[i] = {omp_get_thread_num(), static_cast<int>(node)};
        }
    }
    return o;
}

std::uintptr_t page_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) / page; }

struct segment_pages {
    std::size_t pages = 0, on_owner = 0;
};

// The pages that hold elements of segment s, and how many are on its owner's node.
template <class A>
segment_pages count_pages(const A& a, std::size_t s, int node) {
    segment_pages r;
    if (a.segment_size(s) == 0) return r;
    for (int at : ccnuma::page_nodes(a.begin(s), a.segment_size(s) * sizeof(*a.begin(s)))) {
        ++r.pages;
        r.on_owner += at == node;
    }
    return r;
}

class SegArrayPlacement : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(ccnuma::emulated_machine::current().has_value())
            << "run inside ccnuma-vm: ccnuma-vm --nodes 2 --copy seg_array_vm_test -- ccnuma-run --bind 4,scatter -- "
               "seg_array_vm_test";
        ASSERT_GE(test_support::nodes().size(), 2u);
        ASSERT_TRUE(ccnuma::support().move_pages) << ccnuma::support().to_string();
    }
};

template <class Policy>
std::vector<owner> expect_every_page_on_its_owner(ccnuma::segmentation segs, const char* what) {
    const ccnuma::seg_array<double, Policy> a(n, 1.0, segs, ccnuma::pad::page);
    const auto o = owners(a.segment_count(), a.schedule());
    std::size_t pages = 0, on_owner = 0;
    std::string per_segment;
    for (std::size_t s = 0; s < a.segment_count(); ++s) {
        const auto c = count_pages(a, s, o[s].node);
        pages += c.pages;
        on_owner += c.on_owner;
        EXPECT_EQ(c.on_owner, c.pages) << what << ": segment " << s << " of thread " << o[s].thread << " on node "
                                       << o[s].node;
        per_segment += " " + std::to_string(s) + "->node " + std::to_string(o[s].node);
    }
    std::printf("[figure] %s, pad::page, %zu segments over %u threads: %zu of %zu pages (%.1f%%) on the owner's "
                "node;%s; placement(): %s\n",
                what, a.segment_count(), a.schedule().threads, on_owner, pages,
                100.0 * static_cast<double>(on_owner) / static_cast<double>(pages), per_segment.c_str(),
                a.placement().to_string().c_str());
    EXPECT_EQ(a.placement().locality, 1.0) << what << ": the library's own report must agree";
    return o;
}

TEST_F(SegArrayPlacement, PagePaddingPutsEveryPageOfASegmentOnItsOwnersNode) {
    expect_every_page_on_its_owner<ccnuma::first_touch>(ccnuma::seg::per_thread, "first_touch, one segment per thread");
    expect_every_page_on_its_owner<ccnuma::blocked>(ccnuma::seg::per_thread, "blocked, one segment per thread");
    expect_every_page_on_its_owner<ccnuma::first_touch>(ccnuma::seg::count(7), "first_touch, 7 segments");
    expect_every_page_on_its_owner<ccnuma::blocked>(ccnuma::seg::count(7), "blocked, 7 segments");
    // One segment per node, each on a node of its own: the team of per_node is as large as the
    // nodes, and under "4,scatter" its threads take the plan's first PUs, one per node. Under
    // ccnuma-run's OMP_PROC_BIND=spread before 2026-12-02 a team of 2 took places 0 and 2 on the
    // 2-node guest, both on node 0, and every page was still "on its owner's node".
    const auto o = expect_every_page_on_its_owner<ccnuma::first_touch>(ccnuma::seg::per_node, "first_touch, one segment per node");
    auto nodes = test_support::nodes();
    std::sort(nodes.begin(), nodes.end());
    ASSERT_EQ(o.size(), nodes.size());
    std::vector<int> seen;
    for (const auto& x : o) seen.push_back(x.node);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, std::vector<int>(nodes.begin(), nodes.end())) << "seg::per_node: one segment on every node";
}

TEST_F(SegArrayPlacement, NoPaddingSharesTheBoundaryPages) {
    const ccnuma::seg_array<double> a(n, 1.0, ccnuma::seg::per_thread, ccnuma::pad::none);
    const ccnuma::seg_array<double> padded(n, 1.0, ccnuma::seg::per_thread, ccnuma::pad::page);
    const auto o = owners(a.segment_count(), a.schedule());
    std::size_t shared = 0, shared_padded = 0, inner = 0, inner_on_owner = 0;
    for (std::size_t s = 0; s + 1 < a.segment_count(); ++s) {
        // The page with the last element of s and the first of s + 1.
        if (page_of(a.end(s) - 1) == page_of(a.begin(s + 1))) {
            ++shared;
            const int at = ccnuma::page_nodes(a.begin(s + 1), 1).front();
            std::printf("[figure] pad::none: the page at the boundary of segment %zu (thread %d, node %d) and %zu "
                        "(thread %d, node %d) is shared; it is on node %d\n",
                        s, o[s].thread, o[s].node, s + 1, o[s + 1].thread, o[s + 1].node, at);
            EXPECT_TRUE(at == o[s].node || at == o[s + 1].node) << "on one of the two owners' nodes";
        }
        shared_padded += page_of(padded.end(s) - 1) == page_of(padded.begin(s + 1));
    }
    // Every page that holds elements of one segment only is on that segment's owner's node.
    for (std::size_t s = 0; s < a.segment_count(); ++s) {
        const auto nodes = ccnuma::page_nodes(a.begin(s), a.segment_size(s) * sizeof(double));
        for (std::size_t i = 1; i + 1 < nodes.size(); ++i) {
            ++inner;
            inner_on_owner += nodes[i] == o[s].node;
        }
    }
    std::printf("[figure] pad::none, %zu segments: %zu shared boundary pages (pad::page: %zu); %zu of %zu inner pages on "
                "the owner's node\n",
                a.segment_count(), shared, shared_padded, inner_on_owner, inner);
    EXPECT_EQ(shared, a.segment_count() - 1) << "n is chosen so that every boundary is inside a page";
    EXPECT_EQ(shared_padded, 0u);
    EXPECT_EQ(inner_on_owner, inner);
}

struct touched {
    double x = 0;
    int thread = -1;
    int node = -1;
};

touched touch(double x) {
    unsigned cpu = 0, node = 0;
    ::getcpu(&cpu, &node);
    return {x, omp_get_thread_num(), static_cast<int>(node)};
}

// Each element must have been touched by its segment's owner thread, on the node of its page.
void expect_touched_by_owners(const ccnuma::seg_array<touched>& a, const char* what) {
    const auto o = owners(a.segment_count(), a.schedule());
    std::size_t elements = 0, by_owner = 0, on_page_node = 0;
    for (std::size_t s = 0; s < a.segment_count(); ++s) {
        const auto seg = a.segment(s);
        const auto nodes = ccnuma::page_nodes(seg.data(), seg.size_bytes());
        const auto first_page = page_of(seg.data());
        for (const auto& e : seg) {
            ++elements;
            by_owner += e.thread == o[s].thread;
            on_page_node += e.node == nodes[page_of(&e) - first_page];
        }
    }
    std::printf("[figure] %s: %zu of %zu elements touched by their segment's owner thread, %zu on the node of their "
                "page\n",
                what, by_owner, elements, on_page_node);
    EXPECT_EQ(by_owner, elements) << what;
    EXPECT_EQ(on_page_node, elements) << what;
}

TEST_F(SegArrayPlacement, ParallelAlgorithmsTouchEachSegmentFromItsOwner) {
    // getcpu() for every element is slow under emulation: 1 MiB of elements is enough.
    const std::size_t count = (std::size_t{1} << 20) / sizeof(touched) + 3;
    for (auto segs : {ccnuma::seg::per_thread, ccnuma::seg::count(7)}) {
        ccnuma::seg_array<touched> a(count, segs);
        ccnuma::par::for_each(a.begin(), a.end(), [](touched& e) { e = touch(e.x); });
        expect_touched_by_owners(a, segs == ccnuma::seg::per_thread ? "par::for_each, a segment per thread"
                                                                     : "par::for_each, 7 segments");

        const ccnuma::seg_array<double> in(count, 2.0, segs);
        ccnuma::seg_array<touched> out(count, segs);
        ccnuma::par::transform(in.begin(), in.end(), out.begin(), [](double x) { return touch(x); });
        expect_touched_by_owners(out, segs == ccnuma::seg::per_thread ? "par::transform, a segment per thread"
                                                                       : "par::transform, 7 segments");
        EXPECT_EQ(ccnuma::par::count_if(out.begin(), out.end(), [](const touched& e) { return e.x == 2.0; }),
                  static_cast<std::ptrdiff_t>(count));
    }
}

}  // namespace
