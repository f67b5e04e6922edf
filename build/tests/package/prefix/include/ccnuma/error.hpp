#pragma once
/// @file
/// The one exception type of ccnuma.
///
///     try {
///         auto spec = ccnuma::binding_spec::parse("4,scater");
///     } catch (const ccnuma::error& e) {
///         // e.what(): ccnuma: bad binding spec "4,scater": unknown strategy "scater" at
///         //           position 2 (expected compact, scatter, subcompact, subscatter)
///         // e.code() == ccnuma::errc::invalid_argument
///     }

#include <stdexcept>
#include <string>
#include <system_error>

namespace ccnuma {

/// What went wrong, coarsely; the message says the rest.
enum class errc {
    invalid_argument = 1,  ///< malformed spec, list or option
    infeasible,            ///< a well-formed request this machine cannot satisfy
    topology,              ///< the topology could not be read or loaded
    system,                ///< a system call failed; see the message for errno
    not_supported,         ///< the operation needs something this host or topology lacks
};

/// The error category of ccnuma::errc.
const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// Thrown by every ccnuma function that fails. what() is one line that names the operation,
/// the input and what would be valid; it is not decorated with the category text.
class error : public std::system_error {
public:
    error(errc code, const std::string& message);
    error(std::error_code code, const std::string& message);
    const char* what() const noexcept override { return message_.what(); }

private:
    std::runtime_error message_;  // refcounted, so copying an error never throws
};

}  // namespace ccnuma

template <>
struct std::is_error_code_enum<ccnuma::errc> : std::true_type {};
