#pragma once
// A minimal JSON writer for the --json outputs; only what the schemas in docs/ need.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ccnuma::detail {

class json_writer {
public:
    json_writer& begin_object() { separate(); out_ += '{'; first_ = true; return *this; }
    json_writer& end_object() { out_ += '}'; first_ = false; return *this; }
    json_writer& begin_array() { separate(); out_ += '['; first_ = true; return *this; }
    json_writer& end_array() { out_ += ']'; first_ = false; return *this; }
    json_writer& key(std::string_view k) {
        separate();
        string_literal(k);
        out_ += ':';
        first_ = true;  // the value that follows needs no comma
        return *this;
    }
    json_writer& value(std::string_view s) { separate(); string_literal(s); return *this; }
    json_writer& value(const char* s) { return value(std::string_view(s)); }
    json_writer& value(bool b) { separate(); out_ += b ? "true" : "false"; return *this; }
    json_writer& value(std::int64_t v) { separate(); out_ += std::to_string(v); return *this; }
    json_writer& value(std::uint64_t v) { separate(); out_ += std::to_string(v); return *this; }
    json_writer& value(int v) { return value(static_cast<std::int64_t>(v)); }
    json_writer& value(unsigned v) { return value(static_cast<std::uint64_t>(v)); }
    /// Inserts already-serialized JSON (another writer's output) as a value.
    json_writer& raw(std::string_view json) { separate(); out_ += json; return *this; }
    json_writer& null() { separate(); out_ += "null"; return *this; }
    json_writer& values(std::span<const unsigned> v) {
        begin_array();
        for (unsigned x : v) value(x);
        return end_array();
    }
    const std::string& str() const noexcept { return out_; }

private:
    void separate() {
        if (!first_) out_ += ',';
        first_ = false;
    }
    void string_literal(std::string_view s) {
        out_ += '"';
        for (char c : s) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                out_ += '\\';
                out_ += c;
            } else if (u < 0x20) {
                static constexpr char hex[] = "0123456789abcdef";
                out_ += "\\u00";
                out_ += hex[u >> 4];
                out_ += hex[u & 0xf];
            } else {
                out_ += c;
            }
        }
        out_ += '"';
    }
    std::string out_;
    bool first_ = true;
};

}  // namespace ccnuma::detail
