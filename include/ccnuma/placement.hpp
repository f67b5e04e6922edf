#pragma once
/// @file
/// Placement policies: where the pages of an allocation go, said once, at the allocation.
///
///     // Pages owned by the thread that `#pragma omp for schedule(static)` gives them to:
///     void* p = ccnuma::allocate(n * sizeof(double), ccnuma::first_touch{}, sizeof(double));
///     // ... the same, but fixed by mbind, so a serial initialization cannot spoil it:
///     auto pol = ccnuma::blocked{}.pages(ccnuma::page_kind::huge);
///     // Spread over nodes 0 and 2, page by page (numactl --interleave=0,2):
///     auto il = ccnuma::interleave{}.nodes({0, 2});
///     // Tiered memory: two pages on DRAM node 0 for each on CXL node 2, for this block only:
///     auto wi = ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1});
///     // Each thread's part split between its DRAM and its near far memory by bandwidth:
///     auto ft = ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth);
///
/// The golden rule: a page is placed on the node of the thread that first writes it. Every
/// policy here either does that first write with the right thread (first_touch) or tells the
/// kernel where the pages must go before anyone writes them (blocked, interleave, on_node,
/// preferred). The tier policies (weighted_interleave with weights, first_touch's tiers,
/// fastest) do both: each page is written once, by the thread that owns it, under a memory
/// policy naming the node planned for it.

#include <ccnuma/schedule.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace ccnuma {

/// The kind of page an allocation is placed with (`.pages(page_kind::huge)`; the size in bytes
/// is `support().huge_page_size`). `huge` means transparent huge pages: the block is aligned to
/// the kernel's huge-page size (2 MiB on x86-64), advised with MADV_HUGEPAGE, and placed in
/// huge-page units, so that no huge page is shared by two threads' chunks.
enum class page_kind { base, huge };

/// The tag that asks for weights or shares from the memory bandwidths of the topology
/// (topology::access(), the firmware's HMAT): `.weights(ccnuma::by_bandwidth)`,
/// `.tiers(ccnuma::by_bandwidth)`.
struct by_bandwidth_t {
    explicit constexpr by_bandwidth_t() = default;
    friend bool operator==(by_bandwidth_t, by_bandwidth_t) = default;
};
inline constexpr by_bandwidth_t by_bandwidth{};

/// The pages are first written, without changing their content, by a parallel team, each page
/// by the thread that the static schedule over the *elements* gives it to (or the thread whose
/// part of `.partition(p)` holds it), on the node that thread runs on. No thread is bound: bind the team first (ccnuma-run --bind, OMP_PLACES, or
/// a region that calls bind_this_thread()) if its threads must run where a plan puts them.
///
/// `.tiers(by_bandwidth)` splits each thread's part (its units in address order) between the
/// local nodes of the PU it runs on (pu_info::local_nodes: its DRAM, then the CPU-less memory
/// near it) in proportion to their read bandwidth from that PU's node: the first share on the
/// fastest node, the next on the second, so a memory-bound loop draws on both tiers while every
/// page stays near its thread. A thread whose PU has one local node touches plainly. Where a PU
/// has two or more local nodes and the firmware gives no bandwidth, allocation is
/// errc::not_supported.
///
///     auto v = ccnuma::vector<double>(n, ccnuma::first_touch{}.tiers(ccnuma::by_bandwidth));
struct first_touch {
    static constexpr std::string_view name = "first_touch";  ///< as to_string and parse_policy write it
    ccnuma::schedule sched{};
    ccnuma::page_kind page = page_kind::base;
    first_touch& chunk(std::size_t elements) { sched.chunk = elements; return *this; }
    first_touch& threads(unsigned n) { sched.threads = n; return *this; }
    /// Thread t owns the elements of part t (partition.hpp), a team of p.parts() threads.
    first_touch& partition(ccnuma::partition p) { sched.partition = std::move(p); return *this; }
    first_touch& pages(ccnuma::page_kind p) { page = p; return *this; }
    first_touch& tiers(by_bandwidth_t) { tiers_by_bandwidth_ = true; return *this; }
    /// Whether .tiers(by_bandwidth) was given.
    bool tiers_by_bandwidth() const noexcept { return tiers_by_bandwidth_; }
    friend bool operator==(const first_touch&, const first_touch&) = default;

private:
    bool tiers_by_bandwidth_ = false;
};

/// Like first_touch, but each thread's pages are bound with mbind(MPOL_BIND) to that thread's
/// node before anything is written. The placement survives a serial initialization such as
/// std::vector's value-init. The node of a thread is the node of the CPU it runs on while the
/// allocation is made.
struct blocked {
    static constexpr std::string_view name = "blocked";  ///< as to_string and parse_policy write it
    ccnuma::schedule sched{};
    ccnuma::page_kind page = page_kind::base;
    blocked& chunk(std::size_t elements) { sched.chunk = elements; return *this; }
    blocked& threads(unsigned n) { sched.threads = n; return *this; }
    /// Thread t owns the elements of part t (partition.hpp), a team of p.parts() threads.
    blocked& partition(ccnuma::partition p) { sched.partition = std::move(p); return *this; }
    blocked& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const blocked&, const blocked&) = default;
};

/// Pages spread round-robin over a set of nodes (mbind MPOL_INTERLEAVE), like
/// numactl --interleave. An empty set means every allowed node. With base pages the range is
/// opted out of THP (MADV_NOHUGEPAGE): the kernel interleaves a folio as one unit, so under THP
/// "always" or a folio size at "always" the step would be the folio's (docs/placement.md).
struct interleave {
    static constexpr std::string_view name = "interleave";  ///< as to_string and parse_policy write it
    ccnuma::page_kind page = page_kind::base;
    interleave& nodes(std::vector<unsigned> n) { nodes_ = std::move(n); return *this; }
    /// The nodes .nodes() gave; empty: every allowed node.
    const std::vector<unsigned>& nodes() const noexcept { return nodes_; }
    interleave& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const interleave&, const interleave&) = default;

private:
    std::vector<unsigned> nodes_;
};

/// Every page on one node (mbind MPOL_BIND), like numactl --membind with one node.
struct on_node {
    static constexpr std::string_view name = "on_node";  ///< as to_string and parse_policy write it
    unsigned node = 0;
    ccnuma::page_kind page = page_kind::base;
    on_node() = default;
    explicit on_node(unsigned n, ccnuma::page_kind p = page_kind::base) : node(n), page(p) {}
    on_node& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const on_node&, const on_node&) = default;
};

/// Pages on one node while it has free memory, elsewhere after (MPOL_PREFERRED), like
/// numactl --preferred.
struct preferred {
    static constexpr std::string_view name = "preferred";  ///< as to_string and parse_policy write it
    unsigned node = 0;
    ccnuma::page_kind page = page_kind::base;
    preferred() = default;
    explicit preferred(unsigned n, ccnuma::page_kind p = page_kind::base) : node(n), page(p) {}
    preferred& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const preferred&, const preferred&) = default;
};

/// Pages round-robin by weight over a set of nodes, for this allocation only, whatever the
/// kernel's global weights: unit i of the allocation (a base or huge page, counted from its
/// start) goes to the node whose slot holds i mod sum(weights), the first node taking w0
/// consecutive units, then the next w1, as the kernel's weighted interleave does. Every unit is
/// written once, under MPOL_BIND to its node, by the thread the static schedule gives it to.
///
///     ccnuma::weighted_interleave{}.nodes({0, 2}).weights({2, 1});   // 2 pages on 0, 1 on 2
///     ccnuma::weighted_interleave{}.nodes({0, 2}).weights(ccnuma::by_bandwidth);
///     ccnuma::weighted_interleave{}.nodes({0, 2});  // the kernel's weights (numactl -w)
///
/// Weights: one per node, each 1 to 255 (the kernel's range). `by_bandwidth` takes them from the
/// read bandwidth of each node from the allocating team's nodes (docs/placement.md says how
/// they are reduced to small integers). No weights: the kernel's own MPOL_WEIGHTED_INTERLEAVE
/// (Linux 6.9) with its global weights, pages placed as they are first written.
struct weighted_interleave {
    static constexpr std::string_view name = "weighted_interleave";  ///< as to_string and parse_policy write it
    ccnuma::page_kind page = page_kind::base;
    weighted_interleave& nodes(std::vector<unsigned> n) { nodes_ = std::move(n); return *this; }
    weighted_interleave& weights(std::vector<unsigned> w) {
        weights_ = std::move(w);
        weights_by_bandwidth_ = false;
        return *this;
    }
    weighted_interleave& weights(by_bandwidth_t) {
        weights_.clear();
        weights_by_bandwidth_ = true;
        return *this;
    }
    weighted_interleave& pages(ccnuma::page_kind p) { page = p; return *this; }
    /// The nodes .nodes() gave; empty: every allowed node.
    const std::vector<unsigned>& nodes() const noexcept { return nodes_; }
    /// The weights .weights() gave, one per node; empty with !weights_by_bandwidth(): the
    /// kernel's own.
    const std::vector<unsigned>& weights() const noexcept { return weights_; }
    /// Whether .weights(by_bandwidth) was given (then weights() is empty).
    bool weights_by_bandwidth() const noexcept { return weights_by_bandwidth_; }
    friend bool operator==(const weighted_interleave&, const weighted_interleave&) = default;

private:
    std::vector<unsigned> nodes_;
    std::vector<unsigned> weights_;
    bool weights_by_bandwidth_ = false;
};

/// Each thread's part on the highest-bandwidth local node of the PU it runs on, spilling to its
/// next local node by bandwidth when that one has no free memory, then to any allowed node by
/// distance. The plan is made before anything is written, from each node's free memory now
/// (less a margin, docs/placement.md); each run is written by its owner under MPOL_PREFERRED, so
/// a wrong estimate falls back instead of failing. placement().spilled says how much spilled.
struct fastest {
    static constexpr std::string_view name = "fastest";  ///< as to_string and parse_policy write it
    ccnuma::schedule sched{};
    ccnuma::page_kind page = page_kind::base;
    fastest& chunk(std::size_t elements) { sched.chunk = elements; return *this; }
    fastest& threads(unsigned n) { sched.threads = n; return *this; }
    /// Thread t owns the elements of part t (partition.hpp), a team of p.parts() threads.
    fastest& partition(ccnuma::partition p) { sched.partition = std::move(p); return *this; }
    fastest& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const fastest&, const fastest&) = default;
};

/// Any of the policies, for interfaces that take one at run time.
using policy = std::variant<first_touch, blocked, interleave, on_node, preferred, weighted_interleave, fastest>;

/// The policies' names, for messages that must be string literals (a static_assert's): checked
/// below against the variant, so a policy added to it does not compile until it is named here.
#define CCNUMA_POLICY_NAMES "first_touch, blocked, interleave, on_node, preferred, weighted_interleave, fastest"

namespace detail {
template <class... P>
consteval bool names_every_policy(std::string_view list, std::variant<P...>*) {
    std::string_view rest = list;
    bool ok = true;
    ((ok = ok && rest.substr(0, P::name.size()) == P::name &&
           (rest.size() == P::name.size() || rest.substr(P::name.size(), 2) == ", "),
      rest.remove_prefix(rest.size() < P::name.size() + 2 ? rest.size() : P::name.size() + 2)),
     ...);
    return ok && rest.empty();
}
}  // namespace detail
static_assert(detail::names_every_policy(CCNUMA_POLICY_NAMES, static_cast<policy*>(nullptr)),
              "CCNUMA_POLICY_NAMES must list policy's alternatives, in order");

/// The types that place memory: each policy above, a type derived from one (to fix its
/// settings), or the variant of them. Templates that take a policy (allocator) check it with
/// this concept, so that a wrong type is one line naming the valid ones instead of an error
/// deep inside the template.
template <class P>
concept placement_policy = std::is_convertible_v<const P&, policy>;

/// "first_touch", "blocked(chunk=4)", "first_touch(partition(0,40,100))", "interleave(0,2)", "on_node(1)", "preferred(0)",
/// "weighted_interleave(0:2,2:1)", "weighted_interleave(0,2,by_bandwidth)",
/// "weighted_interleave(0,2)" (the kernel's weights), "first_touch(tiers=by_bandwidth)",
/// "fastest", with ",huge" for huge pages.
std::string to_string(const policy& p);

/// The policy that `text` names, in to_string's words: parse_policy(to_string(p)) == p for every
/// policy whose partition to_string writes whole (up to 17 boundaries). Names and arguments:
///
///     first_touch, blocked, fastest   (chunk=N, threads=N, partition(B0,...,Bn), huge;
///                                      first_touch also tiers=by_bandwidth)
///     interleave(all | NODES [,huge])        on_node(N [,huge])        preferred(N [,huge])
///     weighted_interleave(all | NODES [,by_bandwidth] | N:W,... | all:W,... [,huge])
///
/// NODES is a list such as 0-3,8. Throws ccnuma::error (errc::invalid_argument) naming the text,
/// what is wrong and these forms. Nodes are checked where the policy is used, not here.
policy parse_policy(std::string_view text);

/// The page size a policy asks for.
ccnuma::page_kind page_kind_of(const policy& p) noexcept;

/// Allocates `bytes` placed by `p`, partitioned into elements of `element_size` bytes, aligned
/// to `alignment` (at most the page size). Blocks of at least one page are mmap'ed and
/// page-aligned (huge-page-aligned for page_kind::huge); smaller ones come from the heap, where placement
/// cannot be controlled. A zero size gives a unique non-null pointer.
/// Throws ccnuma::error (errc::infeasible) when the memory does not exist: more than the
/// policy's nodes hold (every allowed node for the policies that spill), refused before anything
/// is mapped or written; std::bad_alloc when mmap (or mprotect) fails; ccnuma::error for a node that does not
/// exist, is not allowed or has no memory, and for bad weights. Nothing is leaked on any path.
void* allocate(std::size_t bytes, const policy& p, std::size_t element_size = 1,
               std::size_t alignment = alignof(std::max_align_t));

/// Frees memory from allocate() with the same bytes, policy page size and alignment.
void deallocate(void* ptr, std::size_t bytes, const policy& p,
                std::size_t alignment = alignof(std::max_align_t)) noexcept;

/// As allocate(), for a class's operator new[] whose block begins with an array cookie of
/// `cookie` bytes (the element count the new-expression stores before the elements): a block of
/// at least a page has its elements, `cookie` bytes in, on a page (huge page) boundary, and the
/// partition is taken over the elements alone, as for an array without a cookie. The cookie
/// then lies at the end of a page of its own before them. Without this, the cookie shifts every
/// element off its line and every chunk boundary off its page. A mapped block is then `cookie`
/// bytes before a page, aligned to the largest power of two up to the page that divides
/// `cookie` (the ABI makes a cookie a multiple of its class's alignment; pass the cookie the
/// compiler uses for the class allocated, or 0); `alignment` is that of the smaller blocks the
/// heap serves. Throws as allocate(), and ccnuma::error (errc::invalid_argument) for a cookie
/// longer than the block.
void* allocate_with_cookie(std::size_t cookie, std::size_t bytes, const policy& p, std::size_t element_size = 1,
                           std::size_t alignment = alignof(std::max_align_t));

/// Frees memory from allocate_with_cookie() with the same cookie, bytes, policy page size and
/// alignment.
void deallocate_with_cookie(void* ptr, std::size_t cookie, std::size_t bytes, const policy& p,
                            std::size_t alignment = alignof(std::max_align_t)) noexcept;

/// Applies `p` to memory that is already mapped (page-aligned `ptr`): first_touch writes
/// untouched pages, the others set the memory policy for pages not yet faulted in. Use
/// ccnuma::migrate() (pages.hpp) to move pages that already exist.
void place(void* ptr, std::size_t bytes, const policy& p, std::size_t element_size = 1);

/// Receives placement diagnostics, e.g. a thread's chunk smaller than a page. The default
/// handler prints "ccnuma: warning: ..." on stderr, once per distinct message. Pass an empty
/// function to silence them.
void set_diagnostic_handler(std::function<void(std::string_view)> handler);

}  // namespace ccnuma
