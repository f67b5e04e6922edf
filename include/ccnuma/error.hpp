#pragma once
/// @file
/// ccnuma::error, the exception of everything that is ccnuma's own business, and the list of
/// the standard exceptions the library throws besides it.
///
/// Which exceptions, and why (docs/error.md has the table):
///  - ccnuma::error (a std::system_error; errc below) for every failure of ccnuma's own:
///    a bad spec, policy, node, weight or option, an allocation larger than its nodes hold,
///    a team larger than the machine, a topology that cannot be loaded, a failed system call,
///    a missing capability.
///  - The containers (vector, seg_array, per_thread, vector expressions, allocator) throw what
///    std::vector or std::allocator would where those would, so code written against them
///    keeps its catch clauses: std::out_of_range from at(i) and per_thread::local(),
///    std::length_error for a size beyond max_size() or the address space, operands of
///    different sizes, and min/max of an empty operand, std::invalid_argument for
///    seg::count(0), std::bad_array_new_length from allocator<T>::allocate, and std::bad_alloc
///    when memory cannot be mapped (also from allocate()). More than the policy's nodes hold
///    is ccnuma::error (errc::infeasible), refused before anything is mapped.
///  - Whatever a user's element type, generator or apply() function throws, carried out of the
///    parallel region and rethrown on the calling thread.
/// Every message is formatted in src/error.cpp: "ccnuma: <operation>: <problem> (<valid>)" for
/// ccnuma::error, "<qualified operation>: <problem> (<valid>)" for the standard ones.
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
    infeasible,            ///< a well-formed request this machine cannot satisfy (more memory
                           ///< than the nodes hold, more threads than PUs)
    topology,              ///< the topology could not be read or loaded
    system,                ///< a system call failed; see the message for errno
    not_supported,         ///< the operation needs something this host or topology lacks
};

/// The error category of ccnuma::errc.
const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// Thrown by every ccnuma function that fails for a reason of ccnuma's own (the file comment
/// lists the standard exceptions the containers throw instead). what() is one line that names
/// the operation, the input and what would be valid; it is not decorated with the category text.
class error : public std::system_error {
public:
    error(errc code, const std::string& message);
    error(std::error_code code, const std::string& message);
    const char* what() const noexcept override { return message_.what(); }
    /// what() without the library's "ccnuma: " prefix, for a tool that prints its own name first
    /// or a message that quotes this one.
    const char* reason() const noexcept;

private:
    std::runtime_error message_;  // refcounted, so copying an error never throws
};

}  // namespace ccnuma

template <>
struct std::is_error_code_enum<ccnuma::errc> : std::true_type {};
