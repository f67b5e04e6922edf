// Page queries on the host (one node). The multi-node behaviour, migration included, is
// checked in ccnuma-vm (tests/vm/placement_vm_test.cpp).

#include <ccnuma/error.hpp>
#include <ccnuma/pages.hpp>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

TEST(PageNodes, WrittenPagesAreOnNodeZeroAndUntouchedOnesAreNotPresent) {
    const std::size_t bytes = 32 * page;
    auto* p = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 1, bytes / 2);                  // first half written
    volatile char sink = p[bytes / 2 + page];      // one page of the second half only read
    (void)sink;
    const auto nodes = ccnuma::page_nodes(p, bytes);
    ASSERT_EQ(nodes.size(), 32u);
    for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(nodes[i], 0) << i;
    for (std::size_t i = 16; i < 32; ++i) EXPECT_EQ(nodes[i], ccnuma::page_not_present) << i << " (the zero page counts as not present)";
    const auto h = ccnuma::node_histogram(nodes);
    EXPECT_EQ(h.total, 32u);
    EXPECT_EQ(h.not_present, 16u);
    EXPECT_EQ(h.pages.at(0), 16u);
    EXPECT_DOUBLE_EQ(h.share(0), 0.5);
    EXPECT_EQ(h.to_string(), "node 0: 16 pages (50.0%), not present: 16 pages");
    // Unaligned ranges cover every page they touch.
    EXPECT_EQ(ccnuma::page_nodes(p + 100, page).size(), 2u);
    EXPECT_TRUE(ccnuma::page_nodes(p, 0).empty());
    ::munmap(p, bytes);
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

TEST(Support, ReportsThisKernel) {
    const auto& s = ccnuma::support();
    EXPECT_TRUE(s.move_pages);
    EXPECT_TRUE(s.mbind);
    EXPECT_EQ(s.page_size, page);
    EXPECT_NE(s.to_string().find("move_pages yes"), std::string::npos) << s.to_string();
    if (s.thp) {
        EXPECT_EQ(s.huge_page_size, std::size_t{2} << 20);
    }
}

}  // namespace
