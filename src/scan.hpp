#pragma once
// The one reader of numbers and range lists in the library's parsers (issue 36): CPU and node
// lists (list.cpp), likwid-pin expressions (cpu_expression.cpp), hwloc locations
// (cpu_location.cpp), binding specs (binding_spec.cpp), placement policies (policy.cpp),
// CCNUMA_STREAMING_THRESHOLD (stores.cpp)
// and ccnuma-vm's machine shapes (vm/emulated_machine.cpp). Before, each had its own digit loop
// and bounds check, and two had drifted apart: one quoted a multibyte character by its first
// byte. What a number is, how large it may be and what a message says about a bad one is
// decided here; how a parser words "bad <what> ... (expected ...)" around it stays its own.

#include <ccnuma/detail/throw_error.hpp>

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace ccnuma::detail {

/// Where a scan failed and why, for the parser to put into its message.
struct scan_error {
    std::size_t at = 0;
    std::string why;
};

/// A scanned value or the reason there is none.
template <class T>
struct scanned {
    T value{};
    std::optional<scan_error> error;
    explicit operator bool() const noexcept { return !error; }
};

/// `text` as a whole number: decimal digits only (no sign, space, base prefix or fraction) and
/// within T. nullopt for anything else, an empty text included.
template <class T>
std::optional<T> whole_number(std::string_view text) noexcept {
    static_assert(std::is_unsigned_v<T>, "counts, sizes and indices are unsigned");
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return v;
}

/// "unexpected character "X"" for the character at text[pos], the whole of a multibyte one.
inline std::string unexpected_character(std::string_view text, std::size_t pos) {
    return "unexpected character " + quote(text.substr(pos, utf8_length(text, pos)));
}

/// The decimal number at text[pos], digits up to `end` at most, no larger than `max`; pos moves
/// past its digits. Fails at pos with "missing number" at the end of the text, "unexpected
/// character "X"" before anything else that is not a digit, and at its first digit with
/// "<noun> <digits> is too large" above max.
inline scanned<unsigned> scan_number(std::string_view text, std::size_t& pos, std::size_t end, unsigned max,
                                     std::string_view noun) {
    end = end < text.size() ? end : text.size();
    const std::size_t start = pos;
    while (pos < end && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start)
        return {0, scan_error{pos, pos == text.size() ? std::string("missing number") : unexpected_character(text, pos)}};
    const auto v = whole_number<unsigned>(text.substr(start, pos - start));
    if (!v || *v > max)
        return {0, scan_error{start, std::string(noun) + " " + std::string(text.substr(start, pos - start)) + " is too large"}};
    return {*v, std::nullopt};
}

/// The range list at text[pos], up to `end`: "a", "a-b", "a,b-c", ... with every number at most
/// `max` (scan_number, `noun`), calling visit(first, last, at) for each range in the order
/// written (visit throws to refuse one). Stops at the first character after a range that is not ',' (the caller says whether
/// that is the end of the list or more syntax). Fails on a missing or bad number and, at its
/// second number, on a descending range. Each range is visited before the next is read, so a
/// caller that bounds ranges against the machine never expands a short text of long ranges.
template <class Visit>
std::optional<scan_error> scan_ranges(std::string_view text, std::size_t& pos, std::size_t end, unsigned max,
                                      std::string_view noun, Visit&& visit) {
    end = end < text.size() ? end : text.size();
    while (true) {
        const std::size_t at = pos;
        const auto first = scan_number(text, pos, end, max, noun);
        if (!first) return first.error;
        unsigned last = first.value;
        if (pos < end && text[pos] == '-') {
            ++pos;
            const std::size_t at2 = pos;
            const auto second = scan_number(text, pos, end, max, noun);
            if (!second) return second.error;
            if (second.value < first.value) return scan_error{at2, "descending range"};
            last = second.value;
        }
        visit(first.value, last, at);
        if (pos < end && text[pos] == ',') {
            ++pos;
            continue;
        }
        return std::nullopt;
    }
}

}  // namespace ccnuma::detail
