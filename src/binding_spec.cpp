// The binding spec (binding.hpp, first stage): the strategies' names, parsing with errors that
// point at the token, and CCNUMA_BIND / OMP_NESTING_TEAM_SIZE. binding_plan.cpp turns a spec into
// a plan; bind.cpp realizes the plan in this process.

#include "scan.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/throw_error.hpp>

#include <array>
#include <cstdlib>
#include <string>

namespace ccnuma {

namespace {

/// The one list of strategies and their names, in the order messages list them. A new
/// strategy is an enumerator in binding.hpp, a row here, and its placement in binding_plan.cpp.
struct named_strategy {
    strategy how;
    std::string_view name;
};
constexpr std::array<named_strategy, 4> strategies{{{strategy::compact, "compact"},
                                                    {strategy::scatter, "scatter"},
                                                    {strategy::subcompact, "subcompact"},
                                                    {strategy::subscatter, "subscatter"}}};

}  // namespace

std::string_view to_string(strategy s) noexcept {
    for (const auto& row : strategies)
        if (row.how == s) return row.name;
    return "?";
}

std::string strategy_names(std::string_view last_separator) {
    std::string out;
    for (std::size_t i = 0; i < strategies.size(); ++i) {
        if (i != 0) out += i + 1 == strategies.size() ? last_separator : std::string_view(", ");
        out += strategies[i].name;
    }
    return out;
}

namespace {

constexpr std::size_t max_total_threads = 1u << 20;
const std::string grammar = "N,strategy[,N,strategy]... with strategies " + strategy_names();

struct token {
    std::string_view text;
    std::size_t pos;
};

[[noreturn]] void bad_spec(std::string_view spec, std::string_view origin, const std::string& why) {
    std::string what = "bad binding spec ";
    if (!origin.empty()) what += std::string(origin) + "=";
    detail::throw_error(errc::invalid_argument, what + detail::quote(spec) + ": " + why);
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

binding_spec parse_spec(std::string_view text, std::string_view origin) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto u = static_cast<unsigned char>(text[i]);
        if (u < 0x20 && !is_blank(text[i]))
            bad_spec(text, origin, "invalid character " + detail::quote(text.substr(i, 1)) + " at position " +
                                       std::to_string(i) + " (expected " + grammar + ")");
    }
    std::size_t first = 0;
    while (first < text.size() && is_blank(text[first])) ++first;
    if (first == text.size()) bad_spec(text, origin, std::string("empty spec (expected ") + grammar + ")");

    std::vector<token> tokens;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
        std::size_t b = start, e = end;
        while (b < e && is_blank(text[b])) ++b;
        while (e > b && is_blank(text[e - 1])) --e;
        tokens.push_back({text.substr(b, e - b), b});
        if (comma == std::string_view::npos) break;
        start = comma + 1;
        if (tokens.size() > 2 * binding_spec::max_levels)
            bad_spec(text, origin, "more than " + std::to_string(binding_spec::max_levels) +
                                       " nesting levels at position " + std::to_string(tokens.back().pos));
    }

    std::vector<binding_level> levels;
    std::size_t total = 1;
    for (std::size_t i = 0; i < tokens.size(); i += 2) {
        const token& count = tokens[i];
        const std::string at = " at position " + std::to_string(count.pos);
        if (count.text.empty()) bad_spec(text, origin, "missing thread count" + at);
        if (count.text.find_first_not_of("0123456789") != std::string_view::npos)
            bad_spec(text, origin, "thread count " + detail::quote(count.text) + at +
                                       " is not a positive integer (expected " + grammar + ")");
        const auto number = detail::whole_number<unsigned>(count.text);
        const unsigned n = number.value_or(0);
        if (!number || n > binding_spec::max_team_size)
            bad_spec(text, origin, "thread count " + detail::quote(count.text) + at + " is too large (at most " +
                                       std::to_string(binding_spec::max_team_size) + ")");
        if (n == 0) bad_spec(text, origin, "thread count 0" + at + " must be at least 1");
        if (i + 1 == tokens.size())
            bad_spec(text, origin, "missing strategy after thread count " + detail::quote(count.text) +
                                       " at position " + std::to_string(text.size()));
        const token& name = tokens[i + 1];
        if (name.text.empty())
            bad_spec(text, origin, "missing strategy at position " + std::to_string(name.pos) + " (expected " +
                                       strategy_names() + ")");
        bool found = false;
        strategy how{};
        for (const auto& row : strategies)
            if (name.text == row.name) {
                how = row.how;
                found = true;
            }
        if (!found)
            bad_spec(text, origin, "unknown strategy " + detail::quote(name.text) + " at position " +
                                       std::to_string(name.pos) + " (expected " + strategy_names() + ")");
        total *= n;
        if (total > max_total_threads)
            bad_spec(text, origin, "the spec asks for more than " + std::to_string(max_total_threads) +
                                       " threads in all" + at);
        levels.push_back({n, how});
    }
    return binding_spec(std::move(levels));
}

}  // namespace

binding_spec::binding_spec(std::vector<binding_level> levels) : levels_(std::move(levels)) {
    if (levels_.size() > max_levels)
        detail::throw_error(errc::invalid_argument, "binding spec with " + std::to_string(levels_.size()) +
                                                        " levels (at most " + std::to_string(max_levels) + ")");
    for (const auto& l : levels_) {
        if (ccnuma::to_string(l.how) == "?")
            detail::throw_error(errc::invalid_argument,
                                "binding level with strategy " + std::to_string(static_cast<int>(l.how)) +
                                    " (expected " + strategy_names(" or ") + ")");
        if (l.threads == 0 || l.threads > max_team_size)
            detail::throw_error(errc::invalid_argument, "binding level with " + std::to_string(l.threads) +
                                                            " threads (expected 1.." +
                                                            std::to_string(max_team_size) + ")");
    }
}

binding_spec binding_spec::parse(std::string_view text) { return parse_spec(text, {}); }

binding_spec binding_spec::from_environment() {
    // An empty variable is unset, as for the OMP_* variables: `CCNUMA_BIND= prog` (or a test
    // harness that clears it) must not make every placement throw.
    for (const char* name : {"CCNUMA_BIND", "OMP_NESTING_TEAM_SIZE"})
        if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return parse_spec(v, name);
    return {};
}

std::size_t binding_spec::total_threads() const noexcept {
    if (levels_.empty()) return 0;
    std::size_t n = 1;
    for (const auto& l : levels_) n *= l.threads;
    return n;
}

std::string binding_spec::to_string() const {
    std::string out;
    for (const auto& l : levels_) {
        if (!out.empty()) out += ',';
        out += std::to_string(l.threads) + ',' + std::string(ccnuma::to_string(l.how));
    }
    return out;
}

}  // namespace ccnuma
