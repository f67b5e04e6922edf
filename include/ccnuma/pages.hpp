#pragma once
/// @file
/// Where pages are: per-page state and node, histograms, locality against a schedule, migration,
/// and what this kernel supports and does on a read fault.
///
///     std::vector<double> v(n);                          // serial value-init: all on one node
///     auto h = ccnuma::node_histogram(v.data(), n * sizeof(double));
///     std::printf("%s\n", h.to_string().c_str());        // "node 0: 16384 pages, node 1: 0 pages"
///     double loc = ccnuma::locality(v.data(), n, sizeof(double));   // 0.5 on two nodes
///     ccnuma::migrate(v.data(), n * sizeof(double), ccnuma::blocked{});  // now 1.0

#include <ccnuma/placement.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma {

/// page_nodes() value of a page without a frame of its own: never faulted in, or mapped to the
/// shared zero page that reading untouched (e.g. calloc'ed) memory maps on most kernels, or
/// swapped out. Its node is decided only by the next write: the calloc trap of benchmarks that
/// never write their input.
inline constexpr int page_not_present = -1;

/// What the kernel has behind one virtual page. Decided from /proc/self/pagemap and move_pages,
/// with the zero-page and THP flags of PAGEMAP_SCAN (Linux >= 6.7) or /proc/kpageflags (needs
/// CAP_SYS_ADMIN); docs/pages.md lists the kernel facts behind each state.
enum class page_state : unsigned char {
    not_faulted,  ///< no page table entry: never touched, or dropped (MADV_DONTNEED, munmap)
    zero_page,    ///< the shared zero page or the huge zero page: read, never written
    on_node,      ///< a frame of its own (or shared copy-on-write after fork) on page_info::node
    swapped,      ///< swapped out: the next access faults it in, on the accessing thread's node
    migrating,    ///< a migration entry: the page is being moved (told apart from swap only
                  ///< where PFNs are visible, i.e. with CAP_SYS_ADMIN)
    unplaceable,  ///< present, but not a page move_pages can place (device or PFN-mapped memory)
};

/// "not faulted", "zero page", "on node", "swapped", "migrating", "unplaceable".
std::string_view to_string(page_state s) noexcept;

/// One page of page_states().
struct page_info {
    page_state state = page_state::not_faulted;
    int node = page_not_present;  ///< the frame's node for page_state::on_node, else page_not_present
    bool exclusive = false;       ///< pagemap's "exclusively mapped" bit: this process alone maps it
    bool huge = false;            ///< part of a transparent huge page (or hugetlb), huge zero page included
    bool huge_known = true;       ///< false where this kernel does not tell (see support_info::page_flags)
};

/// The state of every base page that overlaps [ptr, ptr + bytes), in address order.
///
///     auto* a = static_cast<double*>(std::calloc(n, sizeof(double)));
///     double s = std::accumulate(a, a + n, 0.0);       // only read
///     auto st = ccnuma::page_states(a, n * sizeof(double));
///     // Linux 6.1: st[i].state == page_state::zero_page; kernels that give read faults a
///     // private frame: page_state::on_node. support().read_fault says which this one does.
///
/// Throws ccnuma::error (errc::invalid_argument) if part of the range is not mapped or the
/// range wraps around the address space, and errc::not_supported without move_pages.
std::vector<page_info> page_states(const void* ptr, std::size_t bytes);

/// The node of every base page that overlaps [ptr, ptr + bytes), in address order, or
/// page_not_present for a page without a frame of its own (page_states() other than
/// on_node): the same answer on every kernel, whatever a read fault does there. Throws
/// ccnuma::error (errc::invalid_argument) if part of the range is not mapped, and
/// errc::not_supported without move_pages.
std::vector<int> page_nodes(const void* ptr, std::size_t bytes);

/// How many runs of consecutive physical frames back the pages of [ptr, ptr + bytes): 1 where
/// one extent of physical memory backs them all, up to the number of pages. A page without a
/// frame (never touched, swapped out) ends a run and counts as none. Two ranges on the same node,
/// with the same policy, may stream at different speeds because of it: on a VM, a host backs
/// guest memory with huge pages, and a range of scattered guest frames spans more of them
/// (docs/benchmarks.md, "The placement table's spread"). Needs frame numbers: throws
/// ccnuma::error (errc::not_supported) where pagemap hides them (without CAP_SYS_ADMIN:
/// support().pfn_visible), and errc::invalid_argument as page_states() does.
std::size_t physical_runs(const void* ptr, std::size_t bytes);

struct page_histogram {
    std::vector<std::size_t> pages;  ///< pages with a frame, per node, indexed by OS node number
    std::size_t not_present = 0;     ///< pages without a frame: never faulted, swapped or migrating
    std::size_t zero_page = 0;       ///< pages read but never written: on the shared zero page
    std::size_t huge = 0;            ///< pages that are part of a transparent huge page
    std::size_t huge_unknown = 0;    ///< pages whose huge-page backing this kernel does not tell
    std::size_t total = 0;           ///< sum of pages[], not_present and zero_page
    /// Fraction of all pages on `node`.
    double share(unsigned node) const noexcept;
    /// "node 0: 8192 pages (50.0%), node 1: 8192 pages (50.0%)", then, where not zero,
    /// "not present: N pages", "read but never written (zero page): N pages",
    /// "in transparent huge pages: N pages" and "huge pages unknown: N pages".
    std::string to_string() const;
};

/// Pages per node of [ptr, ptr + bytes), with zero-page and huge-page counts.
page_histogram node_histogram(const void* ptr, std::size_t bytes);
/// The histogram of page_states() output.
page_histogram node_histogram(const std::vector<page_info>& states);
/// The histogram of page_nodes() output: every page_not_present counts as not present.
page_histogram node_histogram(const std::vector<int>& nodes);

/// Fraction of the placed pages of `count` elements of `element_size` bytes at `ptr` that are
/// on the node of the thread that `s` gives them to (the owner of the element in the middle of
/// the page), measured with the threads of the next parallel region, where they run now
/// (nothing is bound). 1.0 is perfect first touch; about 1/nodes is what serial initialization
/// gives. Placed means on a node: pages never written (not present, or the shared zero page)
/// are left out of the fraction (report_placement() counts them), and 0.0 when none is placed.
double locality(const void* ptr, std::size_t count, std::size_t element_size, schedule s = {});

/// What a container's placement() returns: where its pages are, and how many of them are on
/// the node of the thread that its schedule (or partition) gives them to.
struct placement_report {
    page_histogram pages;
    /// Fraction of the placed pages on their owner's node: placed / (placed + not_placed) of the
    /// range's pages are in the denominator, and none is when no page is placed (then 0.0).
    double locality = 1.0;
    /// Pages on a node (the denominator of locality, near).
    std::size_t placed = 0;
    /// Pages not placed yet: never written (not present) or only read (the shared zero page).
    std::size_t not_placed = 0;
    /// Huge-page frames of the range opted out of THP (MADV_NOHUGEPAGE, which opts out every
    /// folio size; read back from the kernel's VmFlags): in every THP mode of a kernel with THP,
    /// placement gives up the frames that two threads' parts share, so that every base page
    /// lands on its own thread's node (under "always", or where a smaller folio size, mTHP, is
    /// "always", a fault there would give the whole frame or folio to one thread), and every
    /// mapping of the library's gives up the frames that its two ends fill only in part, so
    /// that neither khugepaged nor a neighbour's fault can put its untouched pages on a
    /// neighbour's node (docs/placement.md). So it counts those end frames for every policy
    /// (0 to 2 for on_node, preferred and bind), and every frame of a base-page interleave,
    /// which opts its whole range out: the kernel interleaves a folio as one unit.
    std::size_t huge_given_up = 0;
    /// Whether, when the report was made, the kernel gave folios larger than a page to faults in
    /// unadvised mappings (THP "always", or since Linux 6.8 a folio size at "always"). Only then
    /// did the frames huge_given_up counts make a difference, and only then does to_string()
    /// name them: under "madvise" or "never" a base-page mapping gets no folio either way.
    bool thp_unadvised = false;
    /// Fraction of the pages on one of the owning thread's local nodes (pu_info::local_nodes:
    /// its DRAM and the CPU-less memory near it). Equals locality where no node is CPU-less;
    /// first_touch{}.tiers(by_bandwidth) keeps it at 1.0 while locality counts the far share out.
    double near = 1.0;
    /// Pages with a frame that are not on their owning thread's fastest local node: what
    /// ccnuma::fastest spilled (and, for other policies, every page placed elsewhere).
    std::size_t spilled = 0;
    /// "locality 100.0%: node 0: 8192 pages (50.0%), node 1: 8192 pages (50.0%)"; on a tiered
    /// machine (topology::is_tiered()) "locality 66.7%, near 100.0%, spilled 0 pages: ...";
    /// "; 12 pages not placed yet (locality is over the 8180 placed)" and
    /// "; 3 huge-page frames opted out of THP (...)" where there are any and thp_unadvised; "locality: no page placed yet
    /// (N not placed): ..." before anything is written.
    std::string to_string() const;
};

/// node_histogram(), locality(), near and spilled of `count` elements at `ptr`, from one page
/// query and one team.
placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, schedule s = {});
/// The same against a partition of the caller's: the owners a loop uses (an SpMV's rows, say),
/// whatever the data was placed with. `owners` must cover the `count` elements.
placement_report report_placement(const void* ptr, std::size_t count, std::size_t element_size, const partition& owners);

/// Why a page that migrate() was to move is not on its target node afterwards.
enum class stay_reason : unsigned char {
    shared,        ///< EACCES: mapped by another process too (copy-on-write after fork, KSM, shared
                   ///< memory); MPOL_MF_MOVE moves only pages this process maps alone
    busy,          ///< EBUSY: the kernel could not isolate it (pinned for I/O or RDMA, or in use)
    no_memory,     ///< ENOMEM: the target node had no free memory for it
    not_migrated,  ///< counted by the kernel among the pages it did not migrate, without a reason
                   ///< of its own: its migration failed, or the call stopped before it
    moved_away,    ///< the kernel reported it moved, yet it was elsewhere when checked (NUMA
                   ///< balancing or another thread moved it again)
    other,         ///< any other per-page error: see migrate_report::stayed_pages::error
};

/// "shared with another process", "busy", "no memory on the target node", "not migrated",
/// "moved away again", "refused".
std::string_view to_string(stay_reason r) noexcept;

/// What migrate() and try_migrate() did to every base page of the range, counted from each
/// page's node before and after the move, not from what move_pages promised. Every page is in
/// exactly one count: pages == moved + already_there + not_present + no_target + stayed_count().
///
///     auto r = ccnuma::try_migrate(p, bytes, ccnuma::on_node(1));
///     if (!r.complete()) std::puts(r.to_string().c_str());
///     // "64 pages: 0 moved, 0 already there, 64 stayed (node 0: 64): 64 shared with another
///     //  process (EACCES: copy-on-write after fork, KSM or shared memory; ...)"
struct migrate_report {
    /// The pages that stayed for one reason (and errno).
    struct stayed_pages {
        stay_reason reason = stay_reason::other;
        int error = 0;                      ///< the errno move_pages gave these pages; 0 where it gave none
        std::size_t pages = 0;
        std::vector<std::size_t> on_node;   ///< where they are, indexed by OS node number
    };
    std::size_t pages = 0;          ///< base pages in the range
    std::size_t moved = 0;          ///< on their target node now, and elsewhere before
    std::size_t already_there = 0;  ///< on their target node before: nothing to do
    /// Without a frame of their own (never written, on the zero page, swapped out): they are on
    /// no node, so there is nothing to move. Where the policy sets one (all but first_touch),
    /// they follow it at their first write.
    std::size_t not_present = 0;
    std::size_t no_target = 0;           ///< their owner thread runs on no known node: left alone
    std::vector<stayed_pages> stayed;    ///< pages not on their target, one entry per reason
    /// The pages that stayed, all reasons together.
    std::size_t stayed_count() const noexcept;
    /// Every page that has a frame and a target is on its target.
    bool complete() const noexcept { return stayed_count() == 0; }
    /// One line: the counts, then where the stayed pages are and why, as in the example above;
    /// with more than one reason, each reason's pages with their nodes.
    std::string to_string() const;
};

/// Moves the existing pages of [ptr, ptr + bytes) (page-aligned ptr) to where `p` would have
/// put them, page by page with move_pages (mbind's MPOL_MF_MOVE leaves pages that are already
/// inside the new node set), and sets the policy for pages not yet written. For
/// first_touch and blocked the partition is taken over pages (a chunk counts pages). Each
/// page's node is checked before and after: the report says what moved.
///
///     ccnuma::migrate(v.data(), bytes, ccnuma::blocked{});   // throws if a page stays behind
///
/// Throws ccnuma::error if any page with a frame is not on its target afterwards
/// (errc::infeasible, naming how many stayed, on which nodes, and why, e.g. "64 of 64 pages
/// stayed (node 0: 64): 64 shared with another process (EACCES: ...)"); for a range that is
/// not page-aligned or not mapped (errc::invalid_argument); errc::not_supported without
/// move_pages; and errc::system where the kernel refuses the call itself.
migrate_report migrate(void* ptr, std::size_t bytes, const policy& p);

/// migrate() that reports pages it could not move instead of throwing. It still throws for
/// what is wrong with the call itself: an unaligned or unmapped range, a node that is not
/// there, no move_pages, or a call the kernel refuses as a whole.
///
///     auto r = ccnuma::try_migrate(p, bytes, ccnuma::interleave{});
///     if (!r.complete()) log(r.to_string());
migrate_report try_migrate(void* ptr, std::size_t bytes, const policy& p);

/// What a read of untouched anonymous memory gets on this kernel.
enum class read_fault_kind {
    zero_page,      ///< the shared zero page: reading costs no memory traffic (the calloc trap)
    private_frame,  ///< a zero-filled frame of its own, placed by the reading thread
    unknown,        ///< not probed, or the probe could not tell (no pagemap, no move_pages, a bad
                    ///< CCNUMA_PAGE_FLAGS, or no THP for the huge probe)
};

/// "zero page", "private frame", "unknown".
std::string_view to_string(read_fault_kind k) noexcept;

/// What this kernel and machine offer for placement, and what it does on a read fault.
struct support_info {
    bool mbind = false;       ///< memory policies (mbind, set_mempolicy)
    bool move_pages = false;  ///< page queries and migration
    bool thp = false;         ///< transparent huge pages
    std::string thp_mode;     ///< "always", "madvise", "never", or empty
    std::size_t page_size = 0;
    std::size_t huge_page_size = 0;  ///< PMD size, usually 2 MiB; 0 where the kernel does not say (no THP)
    /// Why huge_page_size is 0 though the kernel has the file: its hpage_pmd_size is not a
    /// power of two from the base page to 1 GiB (the size is then unknown, and huge-page
    /// policies place base pages). Empty where the size was read, or the file is absent.
    std::string huge_page_size_problem;
    bool pagemap = false;       ///< /proc/self/pagemap is readable: page_states() can tell every state
    bool pfn_visible = false;   ///< pagemap shows frame numbers (CAP_SYS_ADMIN; otherwise they read 0)
    bool pagemap_scan = false;  ///< the PAGEMAP_SCAN ioctl (Linux >= 6.7): zero-page and THP bits per page
    bool kpageflags = false;    ///< /proc/kpageflags was read at a PFN of the probe's (CAP_SYS_ADMIN)
    /// Where page_info::huge comes from: "PAGEMAP_SCAN", "kpageflags" or "smaps" (per mapping:
    /// exact where a mapping has no huge page or only huge pages, unknown in between). With a
    /// CCNUMA_PAGE_FLAGS that names no source, `invalid CCNUMA_PAGE_FLAGS="..."`: every page
    /// query then throws, and the read-fault probes are unknown.
    std::string page_flags;
    bool page_flags_valid = true;  ///< false where CCNUMA_PAGE_FLAGS names no source
    /// A read of an untouched base page, probed once on a private mapping of the library's own.
    read_fault_kind read_fault = read_fault_kind::unknown;
    /// The same in a 2 MiB-aligned MADV_HUGEPAGE region: the huge zero page, a private huge
    /// page (one read then places 512 pages at once), or unknown without THP.
    read_fault_kind huge_read_fault = read_fault_kind::unknown;
    /// The huge probe's read got a huge page (zero or private); meaningful only where
    /// huge_read_fault_size_known.
    bool huge_read_fault_is_huge = false;
    /// Whether the page-flag source could tell huge from base for the huge probe's page: smaps
    /// cannot for the huge zero page (it counts no anonymous huge page for it).
    bool huge_read_fault_size_known = false;
    /// One line, e.g. "mbind yes, move_pages yes, THP madvise (2 MiB), page 4 KiB, read fault:
    /// zero page, in THP regions: zero page (huge), page flags: PAGEMAP_SCAN". A fact the
    /// probe could not tell reads "unknown", with the reason.
    std::string to_string() const;
};

/// Probed once per process, on mappings of its own, without side effects on any memory of the
/// caller.
const support_info& support();

}  // namespace ccnuma
