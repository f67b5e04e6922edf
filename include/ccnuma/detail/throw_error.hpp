#pragma once
// Out-of-line throw helpers: one place builds every ccnuma::error, which keeps the throwing
// call sites small (as {fmt}'s report_error and oneTBB's throw_exception do).

#include <ccnuma/error.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ccnuma::detail {

/// Throws ccnuma::error with "ccnuma: " + message.
[[noreturn]] void throw_error(errc code, const std::string& message);

/// Throws ccnuma::error for a failed system call; appends strerror(errno_value).
[[noreturn]] void throw_system_error(int errno_value, const std::string& message);

// The containers throw what std::vector would where std::vector would (docs/error.md): these
// helpers, out of line, build those exceptions. The message names the operation, qualified,
// then the reason: "ccnuma::vector::at: index 5 is out of range for size 5 (valid: 0..4)".

/// Throws std::out_of_range for at(index) of a container of `size` elements; `operation` is
/// the qualified name of at ("ccnuma::vector::at").
[[noreturn]] void throw_index_out_of_range(std::string_view operation, std::size_t index, std::size_t size);
/// Throws std::out_of_range with `message`.
[[noreturn]] void throw_out_of_range(const std::string& message);
/// Throws std::length_error with `message`.
[[noreturn]] void throw_length_error(const std::string& message);
/// Throws std::invalid_argument with `message`.
[[noreturn]] void throw_invalid_argument(const std::string& message);
/// Throws std::bad_array_new_length, as std::allocator<T>::allocate does for n > max / sizeof(T).
[[noreturn]] void throw_bad_array_new_length();

/// Quotes user input for an error message: escapes control characters and NULs and shortens
/// anything longer than max_chars, so that a message stays one readable line.
std::string quote(std::string_view input, std::size_t max_chars = 64);

/// The bytes of the UTF-8 character at text[pos] (1 for a stray byte), so that a message that
/// quotes "the character at position N" never cuts a multibyte character in half.
std::size_t utf8_length(std::string_view text, std::size_t pos) noexcept;

}  // namespace ccnuma::detail
