#pragma once
// Child processes for ccnuma-vm: the helpers it calls (ldd, apt-get, dpkg-deb) and their
// output, without a shell in between, so no argument is ever re-parsed.

#include "../common/cli.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace tools::vm {

/// A failure of ccnuma-vm itself, reported as one line "ccnuma-vm: <message>" and exit_code.
struct failure : std::runtime_error {
    int exit_code;
    failure(int code, const std::string& message) : std::runtime_error(message), exit_code(code) {}
};

/// Exit codes, as timeout(1) and env(1) use them, so scripts can tell the tool from the command.
inline constexpr int exit_setup = tools::exit_failure;  // invalid machine, or installing the kit failed
inline constexpr int exit_usage = tools::exit_usage;
inline constexpr int exit_timeout = 124;
inline constexpr int exit_guest = 125;      // kernel panic, guest did not boot, QEMU failed
inline constexpr int exit_not_executable = 126;
inline constexpr int exit_not_found = 127;

struct captured {
    int status = -1;  ///< exit status, 128+N when killed by signal N
    std::string out, err;
};

/// Runs argv[0] (looked up in PATH) with argv, stdin from /dev/null, and collects its output.
/// Throws failure(exit_setup) only if the program cannot be started at all.
captured capture(const std::vector<std::string>& argv, const std::string& cwd = {});

/// The first executable named `name` in $PATH, or "" if there is none.
std::string find_in_path(const std::string& name);

/// The last non-empty line of `text`, for one-line error messages built from a tool's stderr.
std::string last_line(const std::string& text);

/// The last `n` lines of `text` (fewer if it has fewer), without trailing empty lines or carriage
/// returns, and with every other control byte shown as '?': a guest's console may hold escape
/// sequences that a terminal or a CI log would act on.
std::vector<std::string> last_lines(const std::string& text, std::size_t n);

/// Seconds on the monotonic clock.
double now_seconds();

}  // namespace tools::vm
