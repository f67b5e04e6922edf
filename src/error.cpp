#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/version.hpp>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ccnuma {

namespace {
class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "ccnuma"; }
    std::string message(int value) const override {
        switch (static_cast<errc>(value)) {
        case errc::invalid_argument: return "invalid argument";
        case errc::infeasible: return "request cannot be satisfied on this machine";
        case errc::topology: return "topology unavailable";
        case errc::system: return "system call failed";
        case errc::not_supported: return "not supported here";
        }
        return "unknown ccnuma error";
    }
};
}  // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

error::error(errc code, const std::string& message)
    : std::system_error(make_error_code(code), message), message_(message) {}

error::error(std::error_code code, const std::string& message)
    : std::system_error(code, message), message_(message) {}

namespace detail {
namespace {
constexpr std::string_view prefix = "ccnuma: ";  // every ccnuma::error's, and only theirs
}  // namespace
}  // namespace detail

const char* error::reason() const noexcept {
    const std::string_view m = what();
    return m.starts_with(detail::prefix) ? what() + detail::prefix.size() : what();
}

const char* library_version() noexcept { return version_string; }

namespace detail {

namespace {
// The one format of every message but the system-call ones: "<operation>: <problem> (<valid>)".
std::string format(const operation_name& op, std::string_view problem, std::string_view valid) {
    std::string m;
    if (!op.type.empty()) m.append(op.type).append("::");
    m.append(op.name).append(": ").append(problem);
    if (!valid.empty()) m.append(" (").append(valid).append(")");
    return m;
}
}  // namespace

void throw_error(errc code, const std::string& message) { throw error(code, std::string(prefix) + message); }

void throw_error(errc code, operation_name op, std::string_view problem, std::string_view valid) {
    throw error(code, std::string(prefix) + format(op, problem, valid));
}

void throw_system_error(int errno_value, const std::string& message) {
    throw error(errc::system, std::string(prefix) + message + ": " + std::strerror(errno_value));
}

void throw_std_error(std_error kind, operation_name op, std::string_view problem, std::string_view valid) {
    const std::string m = format(op, problem, valid);
    switch (kind) {
    case std_error::out_of_range: throw std::out_of_range(m);
    case std_error::length_error: throw std::length_error(m);
    case std_error::invalid_argument: throw std::invalid_argument(m);
    }
    throw std::logic_error(m);
}

void throw_index_out_of_range(operation_name op, std::size_t index, std::size_t size) {
    throw_std_error(std_error::out_of_range, op,
                    "index " + std::to_string(index) + " is out of range for size " + std::to_string(size),
                    size == 0 ? std::string("it is empty") : "valid: 0.." + std::to_string(size - 1));
}

void throw_bad_array_new_length() { throw std::bad_array_new_length(); }

std::string quote(std::string_view input, std::size_t max_chars) {
    std::string out = "\"";
    std::size_t shown = 0;
    for (std::size_t i = 0; i < input.size(); ++i) {
        const char c = input[i];
        const auto u = static_cast<unsigned char>(c);
        // Characters, not bytes: a UTF-8 continuation byte belongs to the character before it,
        // so a cut never falls inside one.
        const bool continuation = (u & 0xc0) == 0x80;
        if (!continuation && shown == max_chars) {
            out += "...\" (" + std::to_string(input.size()) + " characters)";
            return out;
        }
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
        } else {
            out += c;
        }
        if (!continuation) ++shown;
    }
    return out + '"';
}

std::size_t utf8_length(std::string_view text, std::size_t pos) noexcept {
    if (pos >= text.size()) return 0;
    const auto lead = static_cast<unsigned char>(text[pos]);
    const std::size_t n = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    std::size_t len = 1;
    while (len < n && pos + len < text.size() && (static_cast<unsigned char>(text[pos + len]) & 0xc0) == 0x80) ++len;
    return len;
}

}  // namespace detail
}  // namespace ccnuma
