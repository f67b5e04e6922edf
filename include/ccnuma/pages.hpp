#pragma once
/// @file
/// Where pages are: per-page nodes, histograms, locality against a schedule, migration, and what
/// this kernel supports.
///
///     std::vector<double> v(n);                          // serial value-init: all on one node
///     auto h = ccnuma::node_histogram(v.data(), n * sizeof(double));
///     std::printf("%s\n", h.to_string().c_str());        // "node 0: 16384 pages, node 1: 0 pages"
///     double loc = ccnuma::locality(v.data(), n, sizeof(double));   // 0.5 on two nodes
///     ccnuma::migrate(v.data(), n * sizeof(double), ccnuma::blocked{});  // now 1.0

#include <ccnuma/placement.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace ccnuma {

/// page_nodes() value of a page that has never been written: no memory behind it yet, or the
/// shared zero page that reading untouched (e.g. calloc'ed) memory maps. Its node is decided
/// only by the first write, which is the calloc trap of benchmarks that never write their input.
inline constexpr int page_not_present = -1;

/// The node of every base page that overlaps [ptr, ptr + bytes), in address order, or
/// page_not_present. Throws ccnuma::error (errc::invalid_argument) if part of the range is not
/// mapped, and errc::not_supported without move_pages.
std::vector<int> page_nodes(const void* ptr, std::size_t bytes);

struct page_histogram {
    std::vector<std::size_t> pages;  ///< pages per node, indexed by OS node number
    std::size_t not_present = 0;     ///< pages never written (see page_not_present)
    std::size_t total = 0;
    /// Fraction of all pages on `node`.
    double share(unsigned node) const noexcept;
    /// "node 0: 8192 pages (50.0%), node 1: 8192 pages (50.0%)", plus not-present pages if any.
    std::string to_string() const;
};

/// Pages per node of [ptr, ptr + bytes).
page_histogram node_histogram(const void* ptr, std::size_t bytes);
/// The histogram of page_nodes() output.
page_histogram node_histogram(const std::vector<int>& nodes);

/// Fraction of the pages of `count` elements of `element_size` bytes at `ptr` that are on the
/// node of the thread that `s` gives their first byte to, measured with the threads of the next
/// parallel region (bound to the binding plan if one is set). 1.0 is perfect first touch;
/// about 1/nodes is what serial initialization gives. Not-present pages count as not local.
double locality(const void* ptr, std::size_t count, std::size_t element_size, schedule s = {});

/// What a container's placement() returns: where its pages are, and how many of them are on
/// the node of the thread that its schedule gives them to.
struct placement_report {
    page_histogram pages;
    double locality = 1.0;
    /// "locality 100.0%: node 0: 8192 pages (50.0%), node 1: 8192 pages (50.0%)".
    std::string to_string() const;
};

/// node_histogram() and locality() of `count` elements at `ptr`, from one page query.
placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, schedule s = {});

/// Moves the existing pages of [ptr, ptr + bytes) (page-aligned ptr) to where `p` would have
/// put them, page by page with move_pages (mbind's MPOL_MF_MOVE leaves pages that are already
/// inside the new node set), and sets the policy for pages not yet written. For
/// first_touch and blocked the partition is taken over pages (a chunk counts pages). Throws
/// ccnuma::error naming the range if the kernel refuses.
void migrate(void* ptr, std::size_t bytes, const policy& p);

/// What this kernel and machine offer for placement.
struct support_info {
    bool mbind = false;       ///< memory policies (mbind, set_mempolicy)
    bool move_pages = false;  ///< page queries and migration
    bool thp = false;         ///< transparent huge pages
    std::string thp_mode;     ///< "always", "madvise", "never", or empty
    std::size_t page_size = 0;
    std::size_t huge_page_size = 0;  ///< PMD size, usually 2 MiB; 0 without THP
    /// One line, e.g. "mbind yes, move_pages yes, THP madvise (2 MiB), page 4 KiB".
    std::string to_string() const;
};

/// Probed once per process, without side effects on any memory of the caller.
const support_info& support();

}  // namespace ccnuma
