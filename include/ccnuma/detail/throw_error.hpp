#pragma once
// Out-of-line throw helpers: one place builds every ccnuma::error, which keeps the throwing
// call sites small (as {fmt}'s report_error and oneTBB's throw_exception do).

#include <ccnuma/error.hpp>

#include <string>
#include <string_view>

namespace ccnuma::detail {

/// Throws ccnuma::error with "ccnuma: " + message.
[[noreturn]] void throw_error(errc code, const std::string& message);

/// Throws ccnuma::error for a failed system call; appends strerror(errno_value).
[[noreturn]] void throw_system_error(int errno_value, const std::string& message);

/// Quotes user input for an error message: escapes control characters and NULs and shortens
/// anything longer than max_chars, so that a message stays one readable line.
std::string quote(std::string_view input, std::size_t max_chars = 64);

/// The bytes of the UTF-8 character at text[pos] (1 for a stray byte), so that a message that
/// quotes "the character at position N" never cuts a multibyte character in half.
std::size_t utf8_length(std::string_view text, std::size_t pos) noexcept;

}  // namespace ccnuma::detail
