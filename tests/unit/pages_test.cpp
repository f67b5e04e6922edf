// Page queries on the host (one node). The multi-node behaviour, migration included, is
// checked in ccnuma-vm (tests/vm/placement_vm_test.cpp, tests/vm/pages_vm_test.cpp).

#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>

#include "../support/forked_sharer.hpp"
#include "../support/pagemap.hpp"
#include "../../src/os/os.hpp"

#include <gtest/gtest.h>
#include <linux/mempolicy.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

using test_support::mapping;

// What page_states() must say of a page, from the independent reading of tests/support/pagemap.hpp.
ccnuma::page_state expected_state(const test_support::raw_page& r) {
    if (r.move_pages_status >= 0) return ccnuma::page_state::on_node;
    if (test_support::on_zero_page(r)) return ccnuma::page_state::zero_page;
    if (r.present) return ccnuma::page_state::unplaceable;
    return r.swapped ? ccnuma::page_state::swapped : ccnuma::page_state::not_faulted;
}

// Issue 11: page 17 of a read-only half was reported on node 0 here (Linux 6.18 gives a read
// fault a private frame) and not present on Linux 6.1 (the zero page). Both are right; the
// expectation now comes from the kernel's own page tables.
TEST(PageStates, WrittenReadAndUntouchedPagesAgreeWithPagemapOnThisKernel) {
    const std::size_t bytes = 32 * page;
    mapping m(bytes);
    ASSERT_NE(m.p, MAP_FAILED);
    std::memset(m.p, 1, bytes / 2);                    // pages 0-15 written
    volatile char sink = m.p[bytes / 2 + page];        // page 17 only read
    (void)sink;
    const auto states = ccnuma::page_states(m.p, bytes);
    const auto nodes = ccnuma::page_nodes(m.p, bytes);
    ASSERT_EQ(states.size(), 32u);
    ASSERT_EQ(nodes.size(), 32u);
    std::size_t on_node = 0, zero = 0, absent = 0;
    for (std::size_t i = 0; i < 32; ++i) {
        const auto raw = test_support::read_raw_page(m.p + i * page);
        const auto want = expected_state(raw);
        EXPECT_EQ(states[i].state, want) << "page " << i << ": " << ccnuma::to_string(states[i].state) << ", expected "
                                         << ccnuma::to_string(want);
        EXPECT_EQ(states[i].exclusive, raw.exclusive) << i;
        const int want_node = want == ccnuma::page_state::on_node ? raw.move_pages_status : ccnuma::page_not_present;
        EXPECT_EQ(states[i].node, want_node) << i;
        EXPECT_EQ(nodes[i], want_node) << i << ": page_nodes and page_states must agree";
        on_node += want == ccnuma::page_state::on_node;
        zero += want == ccnuma::page_state::zero_page;
        absent += want == ccnuma::page_state::not_faulted;
    }
    // What holds on every kernel: written pages have a frame of their own, untouched ones none.
    for (std::size_t i = 0; i < 16; ++i) {
        EXPECT_EQ(states[i].state, ccnuma::page_state::on_node) << i;
        EXPECT_TRUE(states[i].exclusive) << i;
        EXPECT_GE(nodes[i], 0) << i;
    }
    for (std::size_t i = 18; i < 32; ++i) EXPECT_EQ(states[i].state, ccnuma::page_state::not_faulted) << i;
    // The read page is either on the zero page or in a frame of its own, as the probe says.
    const auto read = states[17].state;
    EXPECT_TRUE(read == ccnuma::page_state::zero_page || read == ccnuma::page_state::on_node) << ccnuma::to_string(read);
    EXPECT_EQ(ccnuma::support().read_fault,
              read == ccnuma::page_state::zero_page ? ccnuma::read_fault_kind::zero_page : ccnuma::read_fault_kind::private_frame);

    const auto h = ccnuma::node_histogram(m.p, bytes);
    EXPECT_EQ(h.total, 32u);
    EXPECT_EQ(h.zero_page, zero);
    EXPECT_EQ(h.not_present, absent);
    std::size_t framed = 0;
    for (auto c : h.pages) framed += c;
    EXPECT_EQ(framed, on_node);
    EXPECT_EQ(h.huge, 0u);
    // The histogram of page_nodes() cannot tell the zero page from the untouched.
    EXPECT_EQ(ccnuma::node_histogram(nodes).not_present, zero + absent);
    if (zero != 0)
        EXPECT_NE(h.to_string().find("read but never written (zero page): " + std::to_string(zero) + " pages"),
                  std::string::npos)
            << h.to_string();
    else
        EXPECT_EQ(h.to_string().find("zero page"), std::string::npos) << h.to_string();
    // Unaligned ranges cover every page they touch.
    EXPECT_EQ(ccnuma::page_nodes(m.p + 100, page).size(), 2u);
    EXPECT_EQ(ccnuma::page_states(m.p + 100, page).size(), 2u);
    EXPECT_TRUE(ccnuma::page_nodes(m.p, 0).empty());
    EXPECT_TRUE(ccnuma::page_states(m.p, 0).empty());
}

TEST(PageStates, DroppedPagesAreNotFaultedAgain) {
    mapping m(4 * page);
    ASSERT_NE(m.p, MAP_FAILED);
    std::memset(m.p, 1, 4 * page);
    ASSERT_EQ(ccnuma::page_states(m.p, 4 * page)[2].state, ccnuma::page_state::on_node);
    ASSERT_EQ(::madvise(m.p + 2 * page, page, MADV_DONTNEED), 0);
    const auto states = ccnuma::page_states(m.p, 4 * page);
    EXPECT_FALSE(test_support::read_raw_page(m.p + 2 * page).present);
    EXPECT_EQ(states[2].state, ccnuma::page_state::not_faulted);
    EXPECT_EQ(states[2].node, ccnuma::page_not_present);
    EXPECT_EQ(states[1].state, ccnuma::page_state::on_node);
    EXPECT_EQ(states[3].state, ccnuma::page_state::on_node);
}

// After fork, written pages are shared copy-on-write: not exclusively mapped, yet real frames on
// a node, which must not be mistaken for the zero page.
TEST(PageStates, CopyOnWriteSharedFramesStayOnTheirNode) {
    mapping m(4 * page);
    ASSERT_NE(m.p, MAP_FAILED);
    std::memset(m.p, 7, 4 * page);
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // holds the shared frames until the parent has looked
        char c;
        ::close(pipefd[1]);
        while (::read(pipefd[0], &c, 1) < 0) {
        }
        ::_exit(0);
    }
    ::close(pipefd[0]);
    const auto raw = test_support::read_raw_page(m.p);
    const auto states = ccnuma::page_states(m.p, 4 * page);
    ::close(pipefd[1]);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_FALSE(raw.exclusive) << "the kernel should count the child's mapping";
    for (const auto& s : states) {
        EXPECT_EQ(s.state, ccnuma::page_state::on_node);
        EXPECT_FALSE(s.exclusive);
        EXPECT_EQ(s.node, raw.move_pages_status);
    }
}

// A write in a 2 MiB-aligned MADV_HUGEPAGE region: where THP is available the kernel backs it by
// one huge page (smaps' AnonHugePages says so, independently), and all 512 pages count as huge.
TEST(PageStates, HugePagesAreCountedAsSmapsReportsThem) {
    const std::size_t huge = std::size_t{2} << 20;
    mapping m(2 * huge);
    ASSERT_NE(m.p, MAP_FAILED);
    char* base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(m.p) + huge - 1) / huge * huge);
    const bool advised = ::madvise(base, huge, MADV_HUGEPAGE) == 0;
    base[0] = 1;
    const long kb = test_support::anon_huge_kb(base);
    ASSERT_GE(kb, 0);
    const auto states = ccnuma::page_states(base, huge);
    const auto h = ccnuma::node_histogram(states);
    ASSERT_EQ(states.size(), huge / page);
    EXPECT_EQ(h.huge_unknown, 0u) << ccnuma::support().to_string();
    if (kb >= 2048) {
        EXPECT_TRUE(advised);
        EXPECT_EQ(h.huge, huge / page) << h.to_string();
        EXPECT_NE(h.to_string().find("in transparent huge pages: 512 pages"), std::string::npos) << h.to_string();
        for (const auto& s : states) EXPECT_EQ(s.state, ccnuma::page_state::on_node);
    } else {
        EXPECT_EQ(h.huge, 0u) << h.to_string();
        EXPECT_EQ(states[0].state, ccnuma::page_state::on_node);
        EXPECT_EQ(states[1].state, ccnuma::page_state::not_faulted);
    }
}

TEST(Support, ReadFaultProbeMatchesAnIndependentReading) {
    mapping m(page);
    ASSERT_NE(m.p, MAP_FAILED);
    volatile char sink = m.p[0];
    (void)sink;
    const auto raw = test_support::read_raw_page(m.p);
    ASSERT_TRUE(raw.present);
    const auto& s = ccnuma::support();
    EXPECT_TRUE(s.pagemap);
    EXPECT_EQ(s.read_fault, test_support::on_zero_page(raw) ? ccnuma::read_fault_kind::zero_page
                                                            : ccnuma::read_fault_kind::private_frame)
        << s.to_string();
    EXPECT_NE(s.to_string().find("read fault: " + std::string(ccnuma::to_string(s.read_fault))), std::string::npos)
        << s.to_string();
    EXPECT_EQ(s.pfn_visible, raw.pfn != 0);
}

// Issue 35: the frames behind a range, counted against the test's own reading of pagemap;
// where frame numbers are hidden, an error that says so.
TEST(PhysicalRuns, CountsRunsOfConsecutiveFramesAsPagemapShowsThem) {
    constexpr std::size_t pages = 64;
    mapping m(pages * page);
    ASSERT_NE(m.p, MAP_FAILED);
    if (!ccnuma::support().pfn_visible) {
        try {
            ccnuma::physical_runs(m.p, pages * page);
            FAIL() << "physical_runs answered without frame numbers";
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::not_supported);
            EXPECT_NE(std::string(e.what()).find("CAP_SYS_ADMIN"), std::string::npos) << e.what();
        }
        return;
    }
    EXPECT_EQ(ccnuma::physical_runs(m.p, pages * page), 0u) << "no page has a frame before it is touched";
    // Every other page written: the untouched ones between end every run.
    for (std::size_t i = 0; i < pages; i += 2) m.p[i * page] = 1;
    EXPECT_EQ(ccnuma::physical_runs(m.p, pages * page), pages / 2);
    for (std::size_t i = 1; i < pages; i += 2) m.p[i * page] = 1;
    std::size_t expected = 0;
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i < pages; ++i) {
        const auto raw = test_support::read_raw_page(m.p + i * page);
        ASSERT_TRUE(raw.present);
        if (i == 0 || raw.pfn != previous + 1) ++expected;
        previous = raw.pfn;
    }
    EXPECT_EQ(ccnuma::physical_runs(m.p, pages * page), expected);
    EXPECT_EQ(ccnuma::physical_runs(m.p + 3, 1), 1u) << "one byte lies in one page";
    EXPECT_THROW(ccnuma::physical_runs(m.p, std::numeric_limits<std::size_t>::max()), ccnuma::error);
}

// Issue 17 (item 4): sizes that overflow are errors, not empty answers or bad_alloc.
TEST(PageNodes, RangesThatOverflowAreErrors) {
    mapping m(page);
    ASSERT_NE(m.p, MAP_FAILED);
    m.p[0] = 1;
    const auto max = std::numeric_limits<std::size_t>::max();
    for (auto call : {+[](const char* p, std::size_t b) { (void)ccnuma::page_nodes(p, b); },
                      +[](const char* p, std::size_t b) { (void)ccnuma::page_states(p, b); },
                      +[](const char* p, std::size_t b) { (void)ccnuma::node_histogram(p, b); }}) {
        try {
            call(m.p, max);
            ADD_FAILURE() << "SIZE_MAX bytes accepted";
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
            EXPECT_NE(std::string(e.what()).find("wraps around the address space"), std::string::npos) << e.what();
        }
        // Far beyond the mapping but not wrapping: the unmapped-range error, without a huge buffer.
        EXPECT_THROW(call(m.p, std::size_t{1} << 47), ccnuma::error);
    }
    EXPECT_THROW(ccnuma::migrate(m.p, max, ccnuma::on_node(0)), ccnuma::error);
    try {
        (void)ccnuma::locality(m.p, max, max);
        ADD_FAILURE() << "locality of SIZE_MAX x SIZE_MAX accepted";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("locality of " + std::to_string(max) + " elements"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("overflows"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)ccnuma::report_placement(m.p, max, 2), ccnuma::error);
}

TEST(PageNodes, UnmappedMemoryThrowsInsteadOfCrashing) {
    const std::size_t bytes = 4 * page;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    ::munmap(p, bytes);
    try {
        (void)ccnuma::page_nodes(p, bytes);
        ADD_FAILURE() << "no error";
    } catch (const ccnuma::error& e) {
        EXPECT_NE(std::string(e.what()).find("page query of 16 KiB at 0x"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not (entirely) mapped"), std::string::npos) << e.what();
    }
    EXPECT_THROW(ccnuma::node_histogram(p, bytes), ccnuma::error);
    EXPECT_THROW(ccnuma::migrate(p, bytes, ccnuma::interleave{}), ccnuma::error);
}

TEST(Locality, OneNodeIsAllLocalOnceWritten) {
    const std::size_t n = 64 * page / sizeof(double);
    auto* p = static_cast<double*>(ccnuma::allocate(n * sizeof(double), ccnuma::first_touch{}, sizeof(double)));
    EXPECT_DOUBLE_EQ(ccnuma::locality(p, n, sizeof(double)), 1.0);
    ccnuma::migrate(p, n * sizeof(double), ccnuma::on_node(0));
    EXPECT_DOUBLE_EQ(ccnuma::locality(p, n, sizeof(double)), 1.0);
    ccnuma::deallocate(p, n * sizeof(double), ccnuma::first_touch{});
    EXPECT_THROW(ccnuma::migrate(reinterpret_cast<char*>(p) + 1, page, ccnuma::first_touch{}), ccnuma::error);
}

// Issue 17, item 3: schedule{0, 100000} overflowed libgomp's stack inside locality().
TEST(Issue17, LocalityRefusesATeamBeyondTheMachine) {
    std::vector<double> data(1000, 1.0);
    try {
        (void)ccnuma::locality(data.data(), data.size(), sizeof(double), ccnuma::schedule{0, 100000});
        ADD_FAILURE() << "accepted";
    } catch (const ccnuma::error& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("ccnuma: locality of 1000 elements: a team of 100000 threads", 0), 0u) << m;
        EXPECT_NE(m.find("(valid: threads(1) to threads("), std::string::npos) << m;
    }
}

// What this host can do, probed here by other means than support() uses: move_pages on a real
// page (support() asks with no pages), mbind on a mapping (support() asks get_mempolicy), the
// page size from the ELF auxiliary vector (support() asks sysconf). In a seccomp container
// without these calls, and with 64 KiB pages, support() must say so, not what a PC has.
struct host_probe {
    bool move_pages = false;
    bool mbind = false;
    std::size_t page_size = 0;
};

host_probe probe_this_host() {
    host_probe h;
    h.page_size = static_cast<std::size_t>(::getauxval(AT_PAGESZ));
    mapping m(h.page_size);
    static_cast<volatile char*>(m.p)[0] = 1;
    void* pages[1] = {m.p};
    int status[1] = {-1};
    h.move_pages = ::syscall(SYS_move_pages, 0, 1, pages, nullptr, status, 0) == 0;
    h.mbind = ::syscall(SYS_mbind, m.p, h.page_size, MPOL_DEFAULT, nullptr, 0, 0) == 0;
    return h;
}

// The first line of a sysfs file, empty where there is none.
std::string first_line_of(const char* path) {
    std::string line;
    if (std::FILE* f = std::fopen(path, "r")) {
        char buf[256];
        if (std::fgets(buf, sizeof buf, f) != nullptr) line = buf;
        std::fclose(f);
    }
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

TEST(Support, ReportsThisKernel) {
    const auto& s = ccnuma::support();
    const auto h = probe_this_host();
    EXPECT_EQ(s.move_pages, h.move_pages);
    EXPECT_EQ(s.mbind, h.mbind);
    EXPECT_EQ(s.page_size, h.page_size);
    EXPECT_NE(s.to_string().find(h.move_pages ? "move_pages yes" : "move_pages no"), std::string::npos)
        << s.to_string();

    // THP: the mode is the bracketed word of the enabled file; the size is the PMD size, which
    // on x86-64 and aarch64 is what one page of page table entries maps (4 KiB pages: 2 MiB,
    // 64 KiB pages: 512 MiB), and hpage_pmd_size must agree with it.
    const std::string enabled = first_line_of("/sys/kernel/mm/transparent_hugepage/enabled");
    const auto open = enabled.find('[');
    const std::string mode = open == std::string::npos ? "" : enabled.substr(open + 1, enabled.find(']') - open - 1);
    EXPECT_EQ(s.thp_mode, mode) << enabled;
    EXPECT_EQ(s.thp, !mode.empty() && mode != "never") << enabled;
    const std::string pmd = first_line_of("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    if (pmd.empty()) {
        EXPECT_EQ(s.huge_page_size, 0u) << "the kernel tells no huge page size: " << s.to_string();
    } else {
        EXPECT_EQ(s.huge_page_size, std::stoull(pmd)) << s.to_string();
#if defined(__x86_64__) || defined(__aarch64__)
        EXPECT_EQ(s.huge_page_size, h.page_size / 8 * h.page_size) << s.to_string();
#endif
    }
}

// --- Issue 22: migrate tells what did not move; support() says only what it verified ----------

using test_support::forked_sharer;

// On one node every written page is already on node 0's target; pages without a frame are
// counted apart, never as moved or as on a node. Which pages have a frame comes from the
// kernel's own page tables: a read fault maps the zero page here or gives a private frame.
TEST(Issue22, MigrateCountsPagesAlreadyThereAndPagesWithoutAFrame) {
    mapping m(16 * page);
    ASSERT_NE(m.p, MAP_FAILED);
    ASSERT_EQ(::madvise(m.p, m.bytes, MADV_NOHUGEPAGE), 0);
    std::memset(m.p, 1, 8 * page);     // 0-7 written
    volatile char sink = m.p[8 * page];  // 8 only read
    (void)sink;
    std::size_t framed = 0;
    int node = -1;
    for (std::size_t i = 0; i < 16; ++i) {
        const auto raw = test_support::read_raw_page(m.p + i * page);
        if (raw.move_pages_status >= 0) {
            ++framed;
            node = raw.move_pages_status;
        }
    }
    ASSERT_GE(framed, 8u);
    ASSERT_LE(framed, 9u);
    const auto r = ccnuma::migrate(m.p, m.bytes, ccnuma::on_node(static_cast<unsigned>(node)));
    EXPECT_EQ(r.pages, 16u);
    EXPECT_EQ(r.moved, 0u);
    EXPECT_EQ(r.already_there, framed);
    EXPECT_EQ(r.not_present, 16u - framed);
    EXPECT_EQ(r.no_target, 0u);
    EXPECT_TRUE(r.complete());
    EXPECT_TRUE(r.stayed.empty());
    EXPECT_EQ(r.to_string(), "16 pages: 0 moved, " + std::to_string(framed) + " already there, " +
                                 std::to_string(16 - framed) + " not present (no frame: nothing to move)");
    // The same facts without the throwing contract.
    const auto t = ccnuma::try_migrate(m.p, m.bytes, ccnuma::on_node(static_cast<unsigned>(node)));
    EXPECT_EQ(t.to_string(), r.to_string());
    // migrate leaves the content alone.
    for (std::size_t i = 0; i < 8 * page; ++i) ASSERT_EQ(m.p[i], 1) << i;
    EXPECT_EQ(ccnuma::migrate(m.p, 0, ccnuma::on_node(0)).pages, 0u);
}

// Pages shared copy-on-write with a child are refused by move_pages (EACCES) when they would have
// to move; on their own node there is nothing to move, and nothing to refuse: they count as
// already there. The refusal itself is checked in the 2-node guest (tests/vm/pages_vm_test.cpp).
TEST(Issue22, SharedPagesOnTheirTargetAreAlreadyThere) {
    mapping m(4 * page);
    ASSERT_NE(m.p, MAP_FAILED);
    std::memset(m.p, 7, 4 * page);
    const int node = test_support::read_raw_page(m.p).move_pages_status;
    ASSERT_GE(node, 0);
    forked_sharer child;
    ASSERT_GT(child.pid, 0);
    ASSERT_FALSE(test_support::read_raw_page(m.p).exclusive) << "the child's mapping should be counted";
    const auto r = ccnuma::try_migrate(m.p, m.bytes, ccnuma::on_node(static_cast<unsigned>(node)));
    child.release();
    EXPECT_EQ(r.already_there, 4u) << r.to_string();
    EXPECT_TRUE(r.complete()) << r.to_string();
}

// The report's text: counts, where the stayed pages are, and why, grouped by reason.
TEST(Issue22, ReportSaysHowManyStayedWhereAndWhy) {
    ccnuma::migrate_report r;
    r.pages = 80;
    r.moved = 10;
    r.already_there = 2;
    r.not_present = 1;
    r.stayed.push_back({ccnuma::stay_reason::shared, EACCES, 64, {60, 4}});
    r.stayed.push_back({ccnuma::stay_reason::busy, EBUSY, 3, {0, 3}});
    EXPECT_EQ(r.stayed_count(), 67u);
    EXPECT_FALSE(r.complete());
    const std::string s = r.to_string();
    EXPECT_EQ(s.rfind("80 pages: 10 moved, 2 already there, 1 not present (no frame: nothing to move), 67 stayed "
                      "(node 0: 60, node 1: 7): 64 shared with another process (EACCES: copy-on-write after fork",
                      0),
              0u)
        << s;
    EXPECT_NE(s.find(") on node 0: 60, node 1: 4; 3 busy (EBUSY: "), std::string::npos) << s;
    EXPECT_NE(s.find(") on node 1: 3"), std::string::npos) << s;
    EXPECT_EQ(ccnuma::to_string(ccnuma::stay_reason::not_migrated), "not migrated");
    EXPECT_EQ(ccnuma::to_string(ccnuma::stay_reason::no_memory), "no memory on the target node");

    ccnuma::migrate_report other;
    other.pages = 1;
    other.stayed.push_back({ccnuma::stay_reason::other, EFAULT, 1, {1}});
    EXPECT_NE(other.to_string().find("1 refused (EFAULT: "), std::string::npos) << other.to_string();
}

// Run by ctest with CCNUMA_PAGE_FLAGS=bogus (tests/CMakeLists.txt). support() said "read fault:
// unknown, page flags: PAGEMAP_SCAN" while every page query threw.
TEST(Issue22Environment, ABadPageFlagsSourceIsReportedAsBad) {
    ASSERT_STREQ(std::getenv("CCNUMA_PAGE_FLAGS"), "bogus");
    const auto& s = ccnuma::support();
    EXPECT_FALSE(s.page_flags_valid);
    EXPECT_EQ(s.page_flags, "invalid CCNUMA_PAGE_FLAGS=\"bogus\"");
    EXPECT_EQ(s.read_fault, ccnuma::read_fault_kind::unknown);
    EXPECT_EQ(s.huge_read_fault, ccnuma::read_fault_kind::unknown);
    const std::string text = s.to_string();
    EXPECT_NE(text.find("page flags: invalid CCNUMA_PAGE_FLAGS=\"bogus\" names no source (expected pagemap_scan, "
                        "kpageflags or smaps): every page query fails"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("PAGEMAP_SCAN"), std::string::npos) << text;
    mapping m(page);
    ASSERT_NE(m.p, MAP_FAILED);
    m.p[0] = 1;
    try {
        (void)ccnuma::page_states(m.p, page);
        ADD_FAILURE() << "page_states worked under a bad CCNUMA_PAGE_FLAGS";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("CCNUMA_PAGE_FLAGS=\"bogus\" names no source"), std::string::npos)
            << e.what();
    }
}

// Run by ctest with CCNUMA_PAGE_FLAGS=smaps. smaps counts no anonymous huge page for the huge
// zero page, so where the THP read fault maps it, whether it is huge is unknown from smaps:
// support() said "(base page)". What the kernel did comes from an independent probe here.
TEST(Issue22Environment, SmapsSaysUnknownWhereItCannotTell) {
    ASSERT_STREQ(std::getenv("CCNUMA_PAGE_FLAGS"), "smaps");
    const auto& s = ccnuma::support();
    EXPECT_TRUE(s.page_flags_valid);
    EXPECT_EQ(s.page_flags, "smaps");
    EXPECT_FALSE(s.pagemap_scan);
    EXPECT_FALSE(s.kpageflags);
    const std::string text = s.to_string();
    // The base-page probe, read independently: the zero page or a private frame.
    {
        mapping m(page);
        ASSERT_NE(m.p, MAP_FAILED);
        volatile char sink = m.p[0];
        (void)sink;
        const auto raw = test_support::read_raw_page(m.p);
        EXPECT_EQ(s.read_fault, test_support::on_zero_page(raw) ? ccnuma::read_fault_kind::zero_page
                                                                : ccnuma::read_fault_kind::private_frame)
            << text;
    }
    if (!s.thp) {
        EXPECT_EQ(s.huge_read_fault, ccnuma::read_fault_kind::unknown) << text;
        EXPECT_EQ(text.find("in THP regions"), std::string::npos) << text;
        return;
    }
    const std::size_t huge = s.huge_page_size;
    ASSERT_NE(huge, 0u) << text;
    mapping m(2 * huge);
    ASSERT_NE(m.p, MAP_FAILED);
    char* base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(m.p) + huge - 1) / huge * huge);
    ASSERT_EQ(::madvise(base, huge, MADV_HUGEPAGE), 0);
    volatile char sink = base[0];
    (void)sink;
    const auto raw = test_support::read_raw_page(base);
    const auto neighbour = test_support::read_raw_page(base + 100 * page);  // mapped only by a huge mapping
    const long kb = test_support::anon_huge_kb(base);
    if (test_support::on_zero_page(raw)) {
        EXPECT_EQ(s.huge_read_fault, ccnuma::read_fault_kind::zero_page) << text;
        if (neighbour.present) {  // the huge zero page: smaps cannot tell it is huge
            EXPECT_FALSE(s.huge_read_fault_size_known) << text;
            EXPECT_FALSE(s.huge_read_fault_is_huge) << text;
            EXPECT_NE(text.find("in THP regions: zero page (huge or base page: unknown from smaps)"), std::string::npos)
                << text;
            EXPECT_EQ(text.find("(base page)"), std::string::npos) << text;
        }
    } else {
        EXPECT_EQ(s.huge_read_fault, ccnuma::read_fault_kind::private_frame) << text;
        EXPECT_TRUE(s.huge_read_fault_size_known) << text;
        EXPECT_EQ(s.huge_read_fault_is_huge, kb >= 2048) << text << ", AnonHugePages " << kb << " kB";
        EXPECT_NE(text.find(kb >= 2048 ? "in THP regions: private frame (huge)" : "in THP regions: private frame (base page)"),
                  std::string::npos)
            << text;
    }
}


// Issue 26: placement() of the containers says near and spilled for the tier policies. On this
// one-node host every page is on the owner's one local node: all near, none spilled, and the
// report reads as before (near and spilled are printed only on a tiered machine).
TEST(Issue26, ContainersReportNearAndSpilled) {
    const std::size_t n = 64 * page / sizeof(double);
    const bool tiered = ccnuma::topology::current().is_tiered();
    auto check = [&](const ccnuma::placement_report& r, const std::string& what) {
        SCOPED_TRACE(what);
        EXPECT_EQ(r.locality, 1.0) << r.to_string();
        EXPECT_EQ(r.near, 1.0) << r.to_string();
        EXPECT_EQ(r.spilled, 0u) << r.to_string();
        EXPECT_EQ(r.to_string().rfind(tiered ? "locality 100.0%, near 100.0%, spilled 0 pages: node 0: "
                                             : "locality 100.0%: node 0: ",
                                      0),
                  0u)
            << r.to_string();
    };
    for (const ccnuma::policy& pol :
         {ccnuma::policy(ccnuma::weighted_interleave{}.nodes({0}).weights({1})), ccnuma::policy(ccnuma::fastest{}),
          ccnuma::policy(ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth))}) {
        ccnuma::vector<double, ccnuma::policy> v(n, 1.0, pol);
        check(v.placement(), "vector " + ccnuma::to_string(pol));
        ccnuma::seg_array<double, ccnuma::policy> s(n, 1.0, ccnuma::seg::per_thread, ccnuma::pad::page, pol);
        check(s.placement(), "seg_array " + ccnuma::to_string(pol));
    }
    ccnuma::vector<double, ccnuma::fastest> f(n, 2.0);
    check(f.placement(), "vector<double, fastest>");
}

// Issue 26: migrate() to a tier policy moves pages to the nodes the policy plans; on one node
// every written page is already there, and untouched ones are written by the policy after.
TEST(Issue26, MigrateToTierPoliciesFollowsTheirPlan) {
    const std::size_t bytes = 32 * page;
    for (const ccnuma::policy& pol :
         {ccnuma::policy(ccnuma::weighted_interleave{}.nodes({0}).weights({2})), ccnuma::policy(ccnuma::fastest{}),
          ccnuma::policy(ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth))}) {
        SCOPED_TRACE(ccnuma::to_string(pol));
        auto* p = static_cast<char*>(ccnuma::allocate(bytes, ccnuma::on_node(0)));
        for (std::size_t i = 0; i < bytes / 2; i += page) p[i] = 1;
        const auto r = ccnuma::migrate(p, bytes, pol);
        EXPECT_EQ(r.already_there, 16u) << r.to_string();
        EXPECT_EQ(r.not_present, 16u) << r.to_string();
        for (int node : ccnuma::page_nodes(p, bytes)) EXPECT_EQ(node, 0);
        ccnuma::deallocate(p, bytes, ccnuma::on_node(0));
    }
}

// Issue 32, item 7: hpage_pmd_size was read with `>>` into a size_t: 2^64-1, or "-1" (which the
// stream read wraps), wrapped the guard in allocate(), and every allocation of a page or more
// threw std::bad_alloc. A value that is not a power of two from the base page to 1 GiB is now
// unknown, said so, and huge-page placement falls back to base pages.
TEST(Support, Issue32_7_HugePageSizeIsAPowerOfTwoFromAPageTo1GiB) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("ccnuma-thp-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "kernel/mm/transparent_hugepage");
    const auto read = [&](const std::string& text) {
        std::ofstream(root / "kernel/mm/transparent_hugepage/hpage_pmd_size") << text;
        return ccnuma::detail::read_huge_page_size(root.string());
    };
    const std::string base = std::to_string(page);
    for (const std::string bad : {"18446744073709551615", "-1", "-2097152", "0", "3000000", "2147483648", "junk",
                                  "2097152junk", "", "+2097152", "99999999999999999999999", "1024"}) {
        const auto r = read(bad + "\n");
        EXPECT_EQ(r.bytes, std::nullopt) << bad;
        EXPECT_EQ(r.rejected, "hpage_pmd_size \"" + bad + "\" is not a power of two from " + base + " to 1073741824 bytes")
            << bad;
    }
    for (const std::size_t good : {std::size_t{2} << 20, std::size_t{512} << 20, std::size_t{1} << 30}) {
        const auto r = read(std::to_string(good) + "\n");
        EXPECT_EQ(r.bytes, good);
        EXPECT_EQ(r.rejected, "");
    }
    fs::remove(root / "kernel/mm/transparent_hugepage/hpage_pmd_size");
    const auto absent = ccnuma::detail::read_huge_page_size(root.string());
    EXPECT_EQ(absent.bytes, std::nullopt);
    EXPECT_EQ(absent.rejected, "") << "no THP is not a problem to report";
    fs::remove_all(root);
    // This host's value passed the same check, and placement by it never wraps.
    const auto here = ccnuma::detail::huge_page_size_here();
    EXPECT_EQ(ccnuma::support().huge_page_size, here.bytes.value_or(0));
    EXPECT_EQ(ccnuma::support().huge_page_size_problem, here.rejected);
    EXPECT_LE(ccnuma::detail::huge_page_bytes(), std::size_t{1} << 30);
}

TEST(Support, Issue32_7_AnUnknownHugePageSizeIsSaid) {
    ccnuma::support_info s;
    s.thp = true;
    s.thp_mode = "madvise";
    s.page_size = 4096;
    s.huge_page_size_problem = "hpage_pmd_size \"-1\" is not a power of two from 4096 to 1073741824 bytes";
    EXPECT_EQ(s.to_string(), "mbind no, move_pages no, THP madvise (huge page size unknown: hpage_pmd_size \"-1\" is "
                             "not a power of two from 4096 to 1073741824 bytes; huge pages fall back to base pages), "
                             "page 4.0 KiB, pagemap not readable");
}

}  // namespace

// The frames opted out of THP are in the field always and in the text only where the kernel gave
// folios to unadvised faults when the report was made: under madvise they changed nothing.
TEST(PlacementReport, NamesTheFramesOptedOutOnlyWhereTheyMadeADifference) {
    ccnuma::placement_report r;
    r.pages = ccnuma::node_histogram(std::vector<int>{0, 0, 1, 1});
    r.placed = 4;
    r.huge_given_up = 1;
    EXPECT_EQ(r.to_string().find("opted out"), std::string::npos) << r.to_string();
    r.thp_unadvised = true;
    EXPECT_NE(r.to_string().find("; 1 huge-page frame opted out of THP (MADV_NOHUGEPAGE"), std::string::npos)
        << r.to_string();
    r.huge_given_up = 3;
    EXPECT_NE(r.to_string().find("; 3 huge-page frames opted out of THP"), std::string::npos) << r.to_string();
    r.huge_given_up = 0;
    EXPECT_EQ(r.to_string().find("opted out"), std::string::npos) << r.to_string();
}
