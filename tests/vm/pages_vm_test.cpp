// Runs inside ccnuma-vm (tests/CMakeLists.txt): page states on the guest's Debian kernel, which
// maps the shared zero page (and the huge zero page) on a read fault, the path the development
// machines' kernel never takes. Three times, once per source of the zero-page and THP flags
// (CCNUMA_PAGE_FLAGS): PAGEMAP_SCAN; kpageflags as root, where PFNs are readable; smaps with
// CAP_SYS_ADMIN dropped (CCNUMA_TEST_UNPRIVILEGED=1), where PFNs read as 0 and the library
// relies on the exclusive bit and move_pages. Expectations come from tests/support/pagemap.hpp's
// own reading of the page tables.

#include <ccnuma/emulated_machine.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/placement.hpp>

#include "../support/page_expectations.hpp"
#include "../support/pagemap.hpp"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

}  // namespace
