#pragma once
// ccnuma-bench's command line: one kernel and the options every kernel shares.

#include <ccnuma/placement.hpp>
#include <ccnuma/stores.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bench {

/// --arrays: whether each variant's arrays are allocated afresh before every repetition (new
/// physical frames; harness.hpp's variant::fresh says why) or kept for the whole run.
enum class arrays_mode { automatic, fresh, kept };

struct options {
    std::string kernel;
    std::vector<std::size_t> sizes;       ///< --n; empty: the kernel's default
    std::vector<unsigned> threads;        ///< --threads; empty: omp_get_max_threads()
    std::string bind;                     ///< --bind SPEC (a ccnuma binding spec)
    std::optional<ccnuma::policy> policy; ///< --policy for the ccnuma containers
    std::optional<ccnuma::page_kind> pages;   ///< --pages base|huge
    std::optional<ccnuma::stores> stores; ///< placement: --stores regular|streaming|automatic
    arrays_mode arrays = arrays_mode::automatic;  ///< triad, sum: --arrays fresh|kept|auto
    int reps = 5;  ///< tiers: 11 unless --reps is given, enough pairs for its verdicts
    double min_time = 0.01;  ///< seconds: the shortest timed call, sweeps are batched up to it
    std::string json, csv;
    bool quiet = false;
    bool peers = false;                 ///< triad: likwid-bench in the same run
    std::string variant;                ///< dmvm: outer | inner (empty: both)
    std::vector<std::string> teams;     ///< nested-stream, sync: "OxI" team shapes
    std::string only;                   ///< triad: raw | expr, one variant, no harness (callgrind)
    std::size_t sweeps = 1;             ///< with --only
    std::optional<double> duration;     ///< jacobi: seconds of sweeps per variant (default 20)
    std::optional<double> peer_timeout; ///< --peer-timeout: seconds per likwid-bench call

    /// The policy the ccnuma containers use: --policy (first_touch if not given) with --pages.
    ccnuma::policy container_policy() const;
    /// --pages, else the policy's page size, else base pages.
    ccnuma::page_kind page_kind_used() const;
};

/// Parses argv (argv[1] is the kernel). Throws std::invalid_argument with a one-line message.
/// Returns nullopt when --help was given (the usage is printed then).
std::optional<options> parse(int argc, char** argv);

/// "1e3:1e8:4/decade" (log-spaced, 4 points per decade, rounded), "1000,1e6" or "1e6".
std::vector<std::size_t> parse_sizes(const std::string& text);

/// ccnuma::parse_policy, its message prefixed with "--policy: ".
ccnuma::policy parse_policy(const std::string& text);

std::string usage();

}  // namespace bench
