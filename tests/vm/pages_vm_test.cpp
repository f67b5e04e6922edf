// Runs inside ccnuma-vm (tests/CMakeLists.txt): page states on the guest's Debian kernel, which
// maps the shared zero page (and the huge zero page) on a read fault, the path the development
// machines' kernel never takes; and migrate() between the guest's two nodes (issue 22). Three times, once per source of the zero-page and THP flags
// (CCNUMA_PAGE_FLAGS): PAGEMAP_SCAN; kpageflags as root, where PFNs are readable; smaps with
// CAP_SYS_ADMIN dropped (CCNUMA_TEST_UNPRIVILEGED=1), where PFNs read as 0 and the library
// relies on the exclusive bit and move_pages. Expectations come from tests/support/pagemap.hpp's
// own reading of the page tables.

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>

#include "../support/forked_sharer.hpp"
#include "../support/page_expectations.hpp"
#include "../support/pagemap.hpp"

#include <ccnuma/error.hpp>

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

// Before main, hence before the library first opens /proc/self/pagemap: the kernel decides at
// open time whether the opener may see PFNs.
const bool unprivileged = [] {
    if (!std::getenv("CCNUMA_TEST_UNPRIVILEGED")) return false;
    __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &head, data) != 0) std::abort();
    data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
    data[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
    if (::syscall(SYS_capset, &head, data) != 0) {
        std::perror("capset");
        std::abort();
    }
    return true;
}();

using test_support::page;

std::string source() {
    const char* v = std::getenv("CCNUMA_PAGE_FLAGS");
    return !v || std::string(v) == "pagemap_scan" ? "PAGEMAP_SCAN" : v;
}

using test_support::mapping;

class PagesInGuest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(ccnuma::emulated_machine::current().has_value()) << "run inside ccnuma-vm";
        const auto& s = ccnuma::support();
        ASSERT_TRUE(s.pagemap && s.move_pages) << s.to_string();
        // Which path this run exercises, as CCNUMA_PAGE_FLAGS asked.
        EXPECT_EQ(s.pfn_visible, !unprivileged) << s.to_string();
        EXPECT_EQ(s.page_flags, source()) << s.to_string();
    }
};

TEST_F(PagesInGuest, ReadOnlyPagesAreOnTheZeroPageAndCountedApart) {
    mapping m(64 * page);
    ASSERT_NE(m.p, MAP_FAILED);
    ASSERT_EQ(::madvise(m.p, m.bytes, MADV_NOHUGEPAGE), 0);
    std::memset(m.p, 1, 16 * page);  // 0-15 written
    for (std::size_t i = 16; i < 32; ++i) {  // 16-31 only read
        volatile char sink = m.p[i * page];
        (void)sink;
    }
    for (std::size_t i = 16; i < 32; ++i) {
        const auto raw = test_support::read_raw_page(m.p + i * page);
        ASSERT_TRUE(test_support::on_zero_page(raw))
            << "page " << i << ": this guest kernel was expected to map the zero page on a read fault (Debian 12's "
            << "6.1 does); without it this test does not exercise the zero-page path";
        EXPECT_EQ(raw.kpageflags_read, !unprivileged);
    }
    const auto states = ccnuma::page_states(m.p, m.bytes);
    const auto nodes = ccnuma::page_nodes(m.p, m.bytes);
    ASSERT_EQ(states.size(), 64u);
    for (std::size_t i = 0; i < 64; ++i) {
        const auto want = i < 16 ? ccnuma::page_state::on_node
                          : i < 32 ? ccnuma::page_state::zero_page
                                   : ccnuma::page_state::not_faulted;
        EXPECT_EQ(states[i].state, want) << "page " << i << ": " << ccnuma::to_string(states[i].state);
        EXPECT_EQ(nodes[i], i < 16 ? test_support::read_raw_page(m.p + i * page).move_pages_status
                                   : ccnuma::page_not_present)
            << i;
        EXPECT_FALSE(states[i].huge) << i;
    }
    EXPECT_EQ(ccnuma::support().read_fault, ccnuma::read_fault_kind::zero_page);
    const auto h = ccnuma::node_histogram(m.p, m.bytes);
    EXPECT_EQ(h.zero_page, 16u);
    EXPECT_EQ(h.not_present, 32u);
    EXPECT_EQ(h.total, 64u);
    EXPECT_NE(h.to_string().find("not present: 32 pages, read but never written (zero page): 16 pages"),
              std::string::npos)
        << h.to_string();
    // page_nodes' histogram keeps its documented meaning: no frame, not present.
    EXPECT_EQ(ccnuma::node_histogram(nodes).not_present, 48u);
}

TEST_F(PagesInGuest, AReadInATHPRegionMapsTheHugeZeroPage) {
    const std::size_t huge = std::size_t{2} << 20;
    mapping m(2 * huge);
    ASSERT_NE(m.p, MAP_FAILED);
    char* base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(m.p) + huge - 1) / huge * huge);
    ASSERT_EQ(::madvise(base, huge, MADV_HUGEPAGE), 0);
    volatile char sink = base[0];
    (void)sink;
    const auto raw = test_support::read_raw_page(base + 100 * page);  // not read itself: mapped by the PMD
    ASSERT_TRUE(raw.present) << "the guest's THP (madvise, use_zero_page=1) should map the huge zero page";
    ASSERT_TRUE(test_support::on_zero_page(raw));
    if (!unprivileged) {
        ASSERT_TRUE(raw.kpf_thp);
    }
    const auto h = ccnuma::node_histogram(base, huge);
    EXPECT_EQ(h.zero_page, huge / page) << h.to_string();
    if (source() == "smaps") {
        // smaps counts no anonymous huge page for the huge zero page: unknown, not "base pages".
        EXPECT_EQ(h.huge_unknown, huge / page) << h.to_string();
    } else {
        EXPECT_EQ(h.huge, huge / page) << h.to_string();
        EXPECT_EQ(ccnuma::support().huge_read_fault, ccnuma::read_fault_kind::zero_page);
        EXPECT_TRUE(ccnuma::support().huge_read_fault_is_huge);
    }
}

// The calloc trap and its remedy: memory placed by mbind and only read sits on the zero page,
// with no node; the parallel write that follows puts every page where the policy says.
TEST_F(PagesInGuest, TheFirstWriteAfterReadsPlacesThePage) {
    const std::size_t n = (std::size_t{8} << 20) / sizeof(double);
    auto* a = static_cast<double*>(ccnuma::allocate(n * sizeof(double), ccnuma::blocked{}, sizeof(double)));
    double sum = 0;
    for (std::size_t i = 0; i < n; i += page / sizeof(double)) sum += a[i];
    EXPECT_EQ(sum, 0.0);
    auto r = ccnuma::report_placement(a, n, sizeof(double));
    EXPECT_EQ(r.pages.zero_page, r.pages.total) << r.to_string();
    EXPECT_EQ(r.locality, 0.0) << r.to_string();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = 1.0;
    r = ccnuma::report_placement(a, n, sizeof(double));
    EXPECT_EQ(r.pages.zero_page, 0u) << r.to_string();
    EXPECT_GE(r.locality, 0.99) << r.to_string();
    ccnuma::deallocate(a, n * sizeof(double), ccnuma::blocked{});
}

// --- Issue 22: migrate() that moved nothing returned normally ------------------------------

using test_support::forked_sharer;

// Every page's node, read with a bare move_pages query, not by the library.
std::vector<int> nodes_of(const char* p, std::size_t pages) {
    std::vector<int> nodes;
    for (std::size_t i = 0; i < pages; ++i) nodes.push_back(test_support::read_raw_page(p + i * page).move_pages_status);
    return nodes;
}

// "-13 x64" of a status array: what the kernel said, for the log.
std::string histogram_text(const std::vector<int>& status) {
    std::map<int, int> count;
    for (int s : status) ++count[s];
    std::string t;
    for (const auto& [value, n] : count) t += (t.empty() ? "" : ", ") + std::to_string(value) + " x" + std::to_string(n);
    return t;
}

// The issue's case: 64 written pages shared copy-on-write with a child after fork(). The kernel
// moves none of them (MPOL_MF_MOVE moves only pages this process maps alone); migrate() threw
// nothing and every page stayed on its node. A second range, half of it written again by the
// parent (copy-on-write gives it frames of its own), moves by half. Once the child is gone the
// same calls move every page, and each one is on the target.
TEST_F(PagesInGuest, Issue22_SharedPagesStayAndMigrateSaysHowManyAndWhy) {
    constexpr std::size_t n = 64;
    mapping a(n * page), b(n * page);
    ASSERT_NE(a.p, MAP_FAILED);
    ASSERT_NE(b.p, MAP_FAILED);
    ASSERT_EQ(::madvise(a.p, a.bytes, MADV_NOHUGEPAGE), 0);
    ASSERT_EQ(::madvise(b.p, b.bytes, MADV_NOHUGEPAGE), 0);
    std::memset(a.p, 5, a.bytes);
    std::memset(b.p, 5, b.bytes);
    const auto before = nodes_of(a.p, n);
    const int from = before[0];
    ASSERT_GE(from, 0);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(before[i], from) << i;
    ASSERT_EQ(nodes_of(b.p, n), before);
    const unsigned target = from == 0 ? 1u : 0u;
    const std::string where = "(node " + std::to_string(from) + ": 64)";
    {
        forked_sharer child;
        ASSERT_GT(child.pid, 0);
        ASSERT_FALSE(test_support::read_raw_page(a.p).exclusive);

        // What this kernel says of each shared page when asked to move it, without the library.
        std::vector<void*> addrs(n);
        std::vector<int> to(n, static_cast<int>(target)), status(n, 12345);
        for (std::size_t i = 0; i < n; ++i) addrs[i] = a.p + i * page;
        const long rc = ::syscall(SYS_move_pages, 0, n, addrs.data(), to.data(), status.data(), MPOL_MF_MOVE);
        std::printf("bare move_pages of %zu copy-on-write shared pages to node %u: returned %ld, status %s\n", n,
                    target, rc, histogram_text(status).c_str());
        EXPECT_EQ(nodes_of(a.p, n), before) << "the kernel moved shared pages";

        const auto r = ccnuma::try_migrate(a.p, a.bytes, ccnuma::on_node(target));
        std::printf("try_migrate: %s\n", r.to_string().c_str());
        EXPECT_EQ(r.pages, n);
        EXPECT_EQ(r.moved, 0u);
        EXPECT_EQ(r.already_there, 0u);
        EXPECT_EQ(r.not_present, 0u);
        EXPECT_EQ(r.stayed_count(), n);
        EXPECT_FALSE(r.complete());
        ASSERT_EQ(r.stayed.size(), 1u) << r.to_string();
        EXPECT_EQ(r.stayed[0].reason, ccnuma::stay_reason::shared) << r.to_string();
        EXPECT_EQ(r.stayed[0].error, EACCES) << r.to_string();
        ASSERT_GT(r.stayed[0].on_node.size(), static_cast<std::size_t>(from));
        EXPECT_EQ(r.stayed[0].on_node[static_cast<std::size_t>(from)], n);
        EXPECT_NE(r.to_string().find("64 stayed " + where + ": 64 shared with another process (EACCES"),
                  std::string::npos)
            << r.to_string();
        // The library's reason is the kernel's own per-page answer.
        for (int st : status) EXPECT_EQ(st, -r.stayed[0].error);

        try {
            (void)ccnuma::migrate(a.p, a.bytes, ccnuma::on_node(target));
            ADD_FAILURE() << "migrate returned normally while every page stayed on node " << from;
        } catch (const ccnuma::error& e) {
            const std::string msg = e.what();
            std::printf("migrate: %s\n", msg.c_str());
            EXPECT_EQ(e.code(), ccnuma::errc::infeasible);
            EXPECT_EQ(msg.rfind("ccnuma: migrate of 256 KiB at 0x", 0), 0u) << msg;
            EXPECT_NE(msg.find("to on_node(" + std::to_string(target)), std::string::npos) << msg;
            EXPECT_NE(msg.find(": 64 of 64 pages stayed " + where + ": 64 shared with another process (EACCES"),
                      std::string::npos)
                << msg;
        }
        EXPECT_EQ(nodes_of(a.p, n), before);
        // The policy is set all the same: the parent's copy of a page it writes now is on the target.
        a.p[0] = 6;
        EXPECT_EQ(test_support::read_raw_page(a.p).move_pages_status, static_cast<int>(target));

        // Pages 0-31 of b written again by the parent: frames of its own, on its node (b has no
        // policy yet), which move; pages 32-63 stay shared and stay put.
        std::memset(b.p, 6, b.bytes / 2);
        for (std::size_t i = 0; i < n / 2; ++i) ASSERT_TRUE(test_support::read_raw_page(b.p + i * page).exclusive) << i;
        const auto half = ccnuma::try_migrate(b.p, b.bytes, ccnuma::on_node(target));
        std::printf("after writing pages 0-31: %s\n", half.to_string().c_str());
        const auto mixed = nodes_of(b.p, n);
        EXPECT_EQ(half.moved, n / 2) << half.to_string();
        EXPECT_EQ(half.stayed_count(), n / 2) << half.to_string();
        ASSERT_EQ(half.stayed.size(), 1u) << half.to_string();
        EXPECT_EQ(half.stayed[0].reason, ccnuma::stay_reason::shared);
        for (std::size_t i = 0; i < n; ++i)
            EXPECT_EQ(mixed[i], i < n / 2 ? static_cast<int>(target) : from) << "page " << i;
        child.release();
    }
    // Alone again: every page moves, and each one is on the target.
    ASSERT_TRUE(test_support::read_raw_page(a.p + (n - 1) * page).exclusive);
    const auto ra = ccnuma::migrate(a.p, a.bytes, ccnuma::on_node(target));
    const auto rb = ccnuma::migrate(b.p, b.bytes, ccnuma::on_node(target));
    std::printf("after the child exited: %s; %s\n", ra.to_string().c_str(), rb.to_string().c_str());
    EXPECT_EQ(ra.moved, n - 1);
    EXPECT_EQ(ra.already_there, 1u);
    EXPECT_EQ(rb.moved, n / 2);
    EXPECT_EQ(rb.already_there, n / 2);
    for (const char* p : {a.p, b.p}) {
        const auto after = nodes_of(p, n);
        for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(after[i], static_cast<int>(target)) << "page " << i;
    }
    EXPECT_EQ(a.p[0], 6);
    for (std::size_t i = 1; i < n; ++i) ASSERT_EQ(a.p[i * page], 5) << "page " << i;
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b.p[i * page], i < n / 2 ? 6 : 5) << "page " << i;
}

// Page by page: pages on both nodes, some never written, migrated to interleave. Each page
// with a frame lands where round-robin puts it, and the report counts from the pages.
TEST_F(PagesInGuest, Issue22_MigratedPagesAreOnTheirTargetPageByPage) {
    constexpr std::size_t n = 32;
    mapping m(n * page);
    ASSERT_NE(m.p, MAP_FAILED);
    ASSERT_EQ(::madvise(m.p, m.bytes, MADV_NOHUGEPAGE), 0);
    std::memset(m.p, 3, 24 * page);  // 24-31 never written
    ASSERT_TRUE(ccnuma::migrate(m.p, 12 * page, ccnuma::on_node(1)).complete());
    ASSERT_TRUE(ccnuma::migrate(m.p + 12 * page, 12 * page, ccnuma::on_node(0)).complete());
    const auto before = nodes_of(m.p, n);
    std::size_t there = 0;
    for (std::size_t i = 0; i < 24; ++i) {
        ASSERT_EQ(before[i], i < 12 ? 1 : 0) << i;
        // interleave over nodes {0,1}: by page number modulo 2.
        there += before[i] == static_cast<int>((reinterpret_cast<std::uintptr_t>(m.p) / page + i) % 2);
    }
    const auto r = ccnuma::migrate(m.p, m.bytes, ccnuma::interleave{});
    std::printf("interleave: %s\n", r.to_string().c_str());
    EXPECT_EQ(r.pages, n);
    EXPECT_EQ(r.already_there, there);
    EXPECT_EQ(r.moved, 24 - there);
    EXPECT_EQ(r.not_present, 8u);
    EXPECT_TRUE(r.complete());
    const auto after = nodes_of(m.p, n);
    for (std::size_t i = 0; i < 24; ++i)
        EXPECT_EQ(after[i], static_cast<int>((reinterpret_cast<std::uintptr_t>(m.p) / page + i) % 2)) << "page " << i;
    for (std::size_t i = 24; i < n; ++i) EXPECT_LT(after[i], 0) << "page " << i << " was never written";
}


}  // namespace
