#pragma once
// Out-of-line throw helpers: one place builds every ccnuma::error, which keeps the throwing
// call sites small (as {fmt}'s report_error and oneTBB's throw_exception do).

#include <ccnuma/error.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ccnuma::detail {

/// What a message is about: a function ("ccnuma::sum"), or a member `name` of `type`
/// ("ccnuma::vector" and "at" read "ccnuma::vector::at"). error.cpp joins them, so a template
/// passes two literals and builds no string unless it throws.
struct operation_name {
    std::string_view type;
    std::string_view name;
    operation_name(const char* function) noexcept : name(function) {}  // NOLINT: implicit, a name is an operation
    operation_name(std::string_view function) noexcept : name(function) {}  // NOLINT: as above
    /// A name built for the message; it must outlive the call, as a temporary argument does.
    operation_name(const std::string& function) noexcept : name(function) {}  // NOLINT: as above
    operation_name(std::string_view owner, std::string_view member) noexcept : type(owner), name(member) {}
};

// Every message is formatted and prefixed in src/error.cpp, from these parts:
//     <operation>: <problem> (<valid>)
// `problem` names the input and what is wrong with it, `valid` what would have been accepted
// (left out when empty). ccnuma::error's message starts with "ccnuma: ". The standard
// exceptions of the containers (error.hpp says which, and why) do not: their operation is
// qualified ("ccnuma::vector::at"), as std::vector's messages name their function.

/// Throws ccnuma::error with "ccnuma: " + message (the message already names the operation).
[[noreturn]] void throw_error(errc code, const std::string& message);
/// Throws ccnuma::error with "ccnuma: <operation>: <problem> (<valid>)".
[[noreturn]] void throw_error(errc code, operation_name op, std::string_view problem, std::string_view valid);

/// Throws ccnuma::error for a failed system call; appends strerror(errno_value).
[[noreturn]] void throw_system_error(int errno_value, const std::string& message);

/// The standard exceptions the containers throw where std::vector would (docs/error.md).
enum class std_error { out_of_range, length_error, invalid_argument };

/// Throws the standard exception `kind` with "<operation>: <problem> (<valid>)".
[[noreturn]] void throw_std_error(std_error kind, operation_name op, std::string_view problem, std::string_view valid = {});

/// Throws std::out_of_range for at(index) of a container of `size` elements:
/// "ccnuma::vector::at: index 5 is out of range for size 5 (valid: 0..4)".
[[noreturn]] void throw_index_out_of_range(operation_name op, std::size_t index, std::size_t size);
/// Throws std::bad_array_new_length, as std::allocator<T>::allocate does for n > max / sizeof(T).
[[noreturn]] void throw_bad_array_new_length();

/// Quotes user input for an error message: escapes control characters and NULs and shortens
/// anything longer than max_chars, so that a message stays one readable line.
std::string quote(std::string_view input, std::size_t max_chars = 64);

/// The bytes of the UTF-8 character at text[pos] (1 for a stray byte), so that a message that
/// quotes "the character at position N" never cuts a multibyte character in half.
std::size_t utf8_length(std::string_view text, std::size_t pos) noexcept;

}  // namespace ccnuma::detail
