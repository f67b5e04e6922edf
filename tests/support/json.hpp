#pragma once
// A small JSON reader for tests that check the machine-readable output of tools and probes.
// Strict enough to reject malformed output (which is itself a test failure), no more.

#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace test_support {

class json {
public:
    using array = std::vector<json>;
    using object = std::map<std::string, json, std::less<>>;

    json() = default;

    /// Throws std::runtime_error with the position of the first syntax error.
    static json parse(std::string_view text) {
        std::size_t pos = 0;
        json v = value(text, pos);
        skip(text, pos);
        if (pos != text.size()) fail(text, pos, "trailing characters");
        return v;
    }

    bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
    bool is_object() const { return std::holds_alternative<std::shared_ptr<object>>(v_); }
    bool is_array() const { return std::holds_alternative<std::shared_ptr<array>>(v_); }
    double number() const { return get<double>("number"); }
    long long integer() const { return static_cast<long long>(get<double>("number")); }
    bool boolean() const { return get<bool>("boolean"); }
    const std::string& string() const { return get<std::string>("string"); }
    const array& items() const { return *get<std::shared_ptr<array>>("array"); }
    const object& members() const { return *get<std::shared_ptr<object>>("object"); }
    std::size_t size() const { return is_array() ? items().size() : members().size(); }

    /// Member access; throws naming the key when it is missing.
    const json& operator[](std::string_view key) const {
        const auto& m = members();
        const auto it = m.find(key);
        if (it == m.end()) throw std::runtime_error("json: no member \"" + std::string(key) + "\"");
        return it->second;
    }
    const json& operator[](std::size_t i) const { return items().at(i); }
    bool contains(std::string_view key) const { return is_object() && members().count(key) != 0; }

    /// The array as integers, e.g. a CPU list.
    std::vector<long long> integers() const {
        std::vector<long long> out;
        for (const auto& x : items()) out.push_back(x.integer());
        return out;
    }

private:
    template <class T>
    const T& get(const char* what) const {
        if (const T* p = std::get_if<T>(&v_)) return *p;
        throw std::runtime_error(std::string("json: value is not a ") + what);
    }

    [[noreturn]] static void fail(std::string_view text, std::size_t pos, const std::string& why) {
        throw std::runtime_error("json: " + why + " at position " + std::to_string(pos) + " in " +
                                 std::string(text.substr(0, 200)));
    }
    static void skip(std::string_view t, std::size_t& p) {
        while (p < t.size() && (t[p] == ' ' || t[p] == '\n' || t[p] == '\r' || t[p] == '\t')) ++p;
    }
    static void expect(std::string_view t, std::size_t& p, char c) {
        skip(t, p);
        if (p >= t.size() || t[p] != c) fail(t, p, std::string("expected '") + c + "'");
        ++p;
    }
    static std::string str(std::string_view t, std::size_t& p) {
        expect(t, p, '"');
        std::string s;
        while (p < t.size() && t[p] != '"') {
            char c = t[p++];
            if (c == '\\') {
                if (p >= t.size()) fail(t, p, "unterminated escape");
                const char e = t[p++];
                switch (e) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'u': {
                    if (p + 4 > t.size()) fail(t, p, "short \\u escape");
                    const unsigned code = static_cast<unsigned>(std::stoul(std::string(t.substr(p, 4)), nullptr, 16));
                    p += 4;
                    if (code < 0x80) { c = static_cast<char>(code); break; }
                    s += '?';  // tests never compare non-ASCII text
                    continue;
                }
                default: c = e;
                }
            }
            s += c;
        }
        if (p >= t.size()) fail(t, p, "unterminated string");
        ++p;
        return s;
    }
    static json value(std::string_view t, std::size_t& p) {
        skip(t, p);
        if (p >= t.size()) fail(t, p, "unexpected end");
        json v;
        const char c = t[p];
        if (c == '{') {
            auto o = std::make_shared<object>();
            ++p;
            skip(t, p);
            if (p < t.size() && t[p] == '}') ++p;
            else
                while (true) {
                    std::string k = str(t, p);
                    expect(t, p, ':');
                    (*o)[k] = value(t, p);
                    skip(t, p);
                    if (p < t.size() && t[p] == ',') { ++p; continue; }
                    expect(t, p, '}');
                    break;
                }
            v.v_ = o;
        } else if (c == '[') {
            auto a = std::make_shared<array>();
            ++p;
            skip(t, p);
            if (p < t.size() && t[p] == ']') ++p;
            else
                while (true) {
                    a->push_back(value(t, p));
                    skip(t, p);
                    if (p < t.size() && t[p] == ',') { ++p; continue; }
                    expect(t, p, ']');
                    break;
                }
            v.v_ = a;
        } else if (c == '"') {
            v.v_ = str(t, p);
        } else if (t.substr(p, 4) == "true") {
            p += 4;
            v.v_ = true;
        } else if (t.substr(p, 5) == "false") {
            p += 5;
            v.v_ = false;
        } else if (t.substr(p, 4) == "null") {
            p += 4;
        } else {
            std::size_t used = 0;
            double d = 0;
            try {
                d = std::stod(std::string(t.substr(p, 40)), &used);
            } catch (const std::exception&) {
                fail(t, p, "expected a value");
            }
            p += used;
            v.v_ = d;
        }
        return v;
    }

    std::variant<std::monostate, bool, double, std::string, std::shared_ptr<array>, std::shared_ptr<object>> v_;
};

}  // namespace test_support
