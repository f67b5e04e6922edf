#pragma once
/// @file
/// The calling thread's default memory policy (set_mempolicy(2)): where the pages of every
/// allocation go that has no policy of its own. Threads created afterwards and programs exec'd
/// afterwards inherit it, which is how `numactl --interleave=all ./app` and
/// `ccnuma-run --interleave=all -- ./app` place the pages of a program that knows nothing of NUMA.
///
///     ccnuma::set_memory_policy(ccnuma::memory_policy::interleave(ccnuma::parse_node_set("all")));
///     std::vector<double> table(n);       // spread page by page over all allowed nodes
///     std::printf("%s\n", ccnuma::current_memory_policy().to_string().c_str());  // interleave(0-3)
///     ccnuma::set_memory_policy({});      // back to local allocation
///
/// For one allocation, a placement policy (placement.hpp) says it better: it does not leak into
/// every other allocation of the thread.

#include <ccnuma/list.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccnuma {

/// A thread's default memory policy: a mode and the nodes it uses.
///
///     auto p = ccnuma::memory_policy::bind({2, 3});
///     p.to_string();   // "bind(2-3)"
struct memory_policy {
    enum class mode {
        local,       ///< MPOL_DEFAULT: each page on the node of the CPU that first writes it
        bind,        ///< MPOL_BIND: only on `nodes`; allocation fails when they are full
        interleave,  ///< MPOL_INTERLEAVE: page by page, round-robin over `nodes`
        preferred,   ///< MPOL_PREFERRED: on the one node in `nodes` while it has memory, else elsewhere
        preferred_many,       ///< MPOL_PREFERRED_MANY (Linux 5.15): on the nearest of `nodes` with free memory, else elsewhere
        weighted_interleave,  ///< MPOL_WEIGHTED_INTERLEAVE (Linux 6.9): interleave weighted by
                              ///< /sys/kernel/mm/mempolicy/weighted_interleave/node<N>
    };
    mode kind = mode::local;
    std::vector<unsigned> nodes;  ///< OS node indices, ascending: none for local, one for preferred
    /// MPOL_F_NUMA_BALANCING (numactl --balancing, Linux 5.12): the kernel's NUMA balancing may
    /// still migrate pages among `nodes` towards the CPUs that use them. bind only (and
    /// preferred_many where the kernel takes it); it does nothing while
    /// /proc/sys/kernel/numa_balancing is 0.
    ///
    ///     auto p = ccnuma::memory_policy::bind({0, 1}).with_balancing();  // "bind(0-1)+balancing"
    bool numa_balancing = false;

    static memory_policy local() { return {}; }
    static memory_policy bind(std::vector<unsigned> nodes) { return {mode::bind, std::move(nodes)}; }
    static memory_policy interleave(std::vector<unsigned> nodes) { return {mode::interleave, std::move(nodes)}; }
    static memory_policy preferred(unsigned node) { return {mode::preferred, {node}}; }
    static memory_policy preferred_many(std::vector<unsigned> nodes) { return {mode::preferred_many, std::move(nodes)}; }
    static memory_policy weighted_interleave(std::vector<unsigned> nodes) {
        return {mode::weighted_interleave, std::move(nodes)};
    }

    /// Parses the argument of numactl's --membind, --interleave or --preferred (parse_node_set())
    /// into a policy of `kind`, against this process's allowed nodes or `allowed`. Throws
    /// ccnuma::error for a bad node set, and for preferred with more than one node.
    ///
    ///     memory_policy::parse(memory_policy::mode::interleave, "all");  // interleave(0-3)
    static memory_policy parse(mode kind, std::string_view node_set);
    static memory_policy parse(mode kind, std::string_view node_set, std::span<const unsigned> allowed);

    /// This policy with MPOL_F_NUMA_BALANCING set (see numa_balancing).
    memory_policy with_balancing(bool on = true) const {
        memory_policy p = *this;
        p.numa_balancing = on;
        return p;
    }

    /// "local", "bind(2-3)", "interleave(0-3)", "preferred(1)", "preferred_many(0-1)",
    /// "weighted_interleave(0-3)", "bind(0-1)+balancing"; "mode 42" for a value outside the
    /// enumeration.
    std::string to_string() const;
    /// {"mode":"interleave","nodes":[0,1,2,3]}, and "numa_balancing":true where it is set
    std::string to_json() const;

    friend bool operator==(const memory_policy&, const memory_policy&) = default;
};

// parse_node_set(), the node sets these policies take, is declared in list.hpp.

/// Sets the calling thread's default memory policy (set_mempolicy(2)). It applies to pages the
/// thread faults in from now on, in memory without a policy of its own; threads it creates and
/// programs it execs inherit it. Threads that already exist keep theirs, and so does an OpenMP
/// runtime's pool, so call it before the first parallel region (or let ccnuma-run set it).
/// Throws ccnuma::error for a node that is not allowed, for preferred with other than one node,
/// for bind, interleave, preferred_many or weighted_interleave with none, for a mode value
/// outside the enumeration, for numa_balancing with a mode other than bind or preferred_many,
/// and when the kernel refuses (errc::not_supported where it lacks preferred_many,
/// weighted_interleave or MPOL_F_NUMA_BALANCING with this mode).
void set_memory_policy(const memory_policy& p);

/// The calling thread's default memory policy (get_mempolicy(2)). MPOL_LOCAL, and MPOL_PREFERRED
/// without a node, are reported as local, which they are. Throws ccnuma::error
/// (errc::not_supported) for a mode this type cannot express (newer than MPOL_WEIGHTED_INTERLEAVE).
memory_policy current_memory_policy();

/// The node the calling thread's interleaving policy (interleave or weighted_interleave) gives
/// its next allocation that has no address to interleave by: the kernel's own counter, which
/// get_mempolicy(MPOL_F_NODE) reads and `numactl --show` prints as "interleavenode". nullopt
/// under any other policy. The counter moves with the kernel's allocations for the thread, so
/// two processes under the same policy may report different nodes. A mapping's pages do not
/// follow it: the kernel deals them by their offset in the mapping.
///
///     ccnuma::set_memory_policy(ccnuma::memory_policy::interleave({0, 1}));
///     ccnuma::next_interleave_node();  // 0 or 1
std::optional<unsigned> next_interleave_node();

}  // namespace ccnuma
