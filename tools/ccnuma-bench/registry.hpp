#pragma once
// The kernels ccnuma-bench runs: one row each in registry.cpp's table, which is all that main,
// the option checks and --help know of them. A kernel is its run function (in its own file),
// its row, its test and its doc.

#include "options.hpp"
#include "report.hpp"

#include <span>
#include <string>
#include <string_view>

namespace bench {

/// The options that only some kernels take; the others (--n, --threads, --reps, --json, ...)
/// every kernel takes.
enum class takes : unsigned {
    none = 0,
    peers = 1u << 0,     ///< --peers, --peer-timeout: likwid-bench kernels of the same kind
    only = 1u << 1,      ///< --only, --sweeps
    variant = 1u << 2,   ///< --variant outer|inner
    teams = 1u << 3,     ///< --teams OxI
    duration = 1u << 4,  ///< --duration S
    stores = 1u << 5,    ///< --stores MODE
    arrays = 1u << 6,    ///< --arrays fresh|kept|auto
};
constexpr takes operator|(takes a, takes b) { return static_cast<takes>(static_cast<unsigned>(a) | static_cast<unsigned>(b)); }
constexpr bool has(takes set, takes one) { return (static_cast<unsigned>(set) & static_cast<unsigned>(one)) != 0; }

struct kernel {
    std::string_view name;
    std::string_view help;  ///< its lines in --help, wrapped at 100 columns, each but the first indented 17
    void (*run)(const options&, report&);
    n_counts n_is;                ///< what its N counts (the table's, JSON's, CSV's and plot's words)
    takes options_taken = takes::none;
    int reps = 5;                 ///< --reps when it is not given
    std::string_view no_bind;     ///< why --bind is refused; empty: it is taken
    std::string_view no_policy;   ///< why --policy is refused; empty: it is taken
    std::string_view no_sizes;    ///< why --n is refused; empty: it is taken
};

/// Every kernel, in the order --help lists them.
std::span<const kernel> kernels();
/// The kernel named `name`, or nullptr.
const kernel* find_kernel(std::string_view name);
/// The kernels that take `option`, for messages: "triad, stream and sum".
std::string kernels_taking(takes option);

}  // namespace bench
