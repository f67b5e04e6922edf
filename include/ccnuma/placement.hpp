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
///
/// The golden rule: a page is placed on the node of the thread that first writes it. Every
/// policy here either does that first write with the right thread (first_touch) or tells the
/// kernel where the pages must go before anyone writes them (blocked, interleave, on_node,
/// preferred).

#include <ccnuma/schedule.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace ccnuma {

/// The kind of page an allocation is placed with (`.pages(page_kind::huge)`; the size in bytes
/// is `support().huge_page_size`). `huge` means transparent huge pages: the block is aligned to
/// the kernel's huge-page size (2 MiB on x86-64), advised with MADV_HUGEPAGE, and placed in
/// huge-page units, so that no huge page is shared by two threads' chunks.
enum class page_kind { base, huge };

/// The pages are first written, without changing their content, by a parallel team, each page
/// by the thread that the static schedule over the *elements* gives it to, on the node that
/// thread runs on. No thread is bound: bind the team first (ccnuma-run --bind, OMP_PLACES, or
/// a region that calls bind_this_thread()) if its threads must run where a plan puts them.
struct first_touch {
    ccnuma::schedule sched{};
    ccnuma::page_kind page = page_kind::base;
    first_touch& chunk(std::size_t elements) { sched.chunk = elements; return *this; }
    first_touch& threads(unsigned n) { sched.threads = n; return *this; }
    first_touch& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const first_touch&, const first_touch&) = default;
};

/// Like first_touch, but each thread's pages are bound with mbind(MPOL_BIND) to that thread's
/// node before anything is written. The placement survives a serial initialization such as
/// std::vector's value-init. The node of a thread is the node of the CPU it runs on while the
/// allocation is made.
struct blocked {
    ccnuma::schedule sched{};
    ccnuma::page_kind page = page_kind::base;
    blocked& chunk(std::size_t elements) { sched.chunk = elements; return *this; }
    blocked& threads(unsigned n) { sched.threads = n; return *this; }
    blocked& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const blocked&, const blocked&) = default;
};

/// Pages spread round-robin over a set of nodes (mbind MPOL_INTERLEAVE), like
/// numactl --interleave. An empty set means every allowed node.
struct interleave {
    std::vector<unsigned> node_set;
    ccnuma::page_kind page = page_kind::base;
    interleave& nodes(std::vector<unsigned> n) { node_set = std::move(n); return *this; }
    interleave& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const interleave&, const interleave&) = default;
};

/// Every page on one node (mbind MPOL_BIND), like numactl --membind with one node.
struct on_node {
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
    unsigned node = 0;
    ccnuma::page_kind page = page_kind::base;
    preferred() = default;
    explicit preferred(unsigned n, ccnuma::page_kind p = page_kind::base) : node(n), page(p) {}
    preferred& pages(ccnuma::page_kind p) { page = p; return *this; }
    friend bool operator==(const preferred&, const preferred&) = default;
};

/// Any of the policies, for interfaces that take one at run time.
using policy = std::variant<first_touch, blocked, interleave, on_node, preferred>;

/// The types that place memory: each policy above, a type derived from one (to fix its
/// settings), or the variant of them. Templates that take a policy (allocator) check it with
/// this concept, so that a wrong type is one line naming the valid ones instead of an error
/// deep inside the template.
template <class P>
concept placement_policy = std::is_convertible_v<const P&, policy>;

/// "first_touch", "blocked(chunk=4)", "interleave(0,2)", "on_node(1)", "preferred(0)", with
/// ",huge" for huge pages.
std::string to_string(const policy& p);

/// The page size a policy asks for.
ccnuma::page_kind page_kind_of(const policy& p) noexcept;

/// Allocates `bytes` placed by `p`, partitioned into elements of `element_size` bytes, aligned
/// to `alignment` (at most the page size). Blocks of at least one page are mmap'ed and
/// page-aligned (huge-page-aligned for page_kind::huge); smaller ones come from the heap, where placement
/// cannot be controlled. A zero size gives a unique non-null pointer.
/// Throws std::bad_alloc when the memory does not exist (more than the allowed nodes, or the
/// policy's nodes, have) or mmap fails, and ccnuma::error for a node that does not exist or is
/// not allowed. Nothing is leaked on either path.
void* allocate(std::size_t bytes, const policy& p, std::size_t element_size = 1,
               std::size_t alignment = alignof(std::max_align_t));

/// Frees memory from allocate() with the same bytes, policy page size and alignment.
void deallocate(void* ptr, std::size_t bytes, const policy& p,
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
