// The taskset/numactl list syntax. Parsed here rather than with hwloc_bitmap_list_sscanf()
// because that returns only -1 on error, accepts open ranges ("4-") and would allocate a bitmap
// for any index a typo produces; our messages must point at the offending character.

#include "list_internal.hpp"
#include "scan.hpp"
#include "placement_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/topology.hpp>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

namespace ccnuma {

namespace {
constexpr unsigned max_index = 1u << 20;  // far above any machine, far below a runaway typo
}

std::string format_list(std::span<const unsigned> indices) {
    std::vector<unsigned> v(indices.begin(), indices.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(v[i]);
        if (j > i) out += '-' + std::to_string(v[j]);
        i = j + 1;
    }
    return out;
}

std::vector<unsigned> detail::parse_list(std::string_view text, std::size_t from, std::string_view what,
                                         std::string_view expected) {
    const auto fail = [&](std::size_t pos, const std::string& why) {
        detail::throw_error(errc::invalid_argument, "bad " + std::string(what) + " " + detail::quote(text) + ": " +
                                                        why + " at position " + std::to_string(pos) + " (expected " +
                                                        std::string(expected) + ")");
    };
    if (text.empty()) fail(0, "empty list");
    std::vector<unsigned> out;
    std::vector<std::pair<unsigned, unsigned>> ranges;
    std::size_t pos = from;
    if (const auto error = scan_ranges(text, pos, text.size(), max_index - 1, "index",
                                       [&](unsigned first, unsigned last, std::size_t) { ranges.emplace_back(first, last); }))
        fail(error->at, error->why);
    if (pos != text.size()) fail(pos, unexpected_character(text, pos));
    // Ranges first, merged, then expanded: "0-1048575" repeated a thousand times is a million
    // indices, not a billion before the duplicates go.
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        auto [lo, hi] = ranges[i];
        while (i + 1 < ranges.size() && ranges[i + 1].first <= hi + 1) hi = std::max(hi, ranges[++i].second);
        for (unsigned x = lo; x <= hi; ++x) out.push_back(x);
    }
    return out;
}

std::vector<unsigned> parse_list(std::string_view text, std::string_view what) {
    return detail::parse_list(text, 0, what, "a list such as 0-3,8");
}

std::vector<unsigned> detail::parse_set(std::string_view text, std::span<const unsigned> allowed_in, set_words words) {
    std::vector<unsigned> allowed(allowed_in.begin(), allowed_in.end());
    std::sort(allowed.begin(), allowed.end());
    allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
    const std::string set(words.set), item(words.item);
    const std::string what = set + " " + detail::quote(text);
    const std::string syntax = "all, a list such as 0-2,4, +0-1 for the first two allowed " + item +
                               "s, or ! before a list for all other " + item + "s";
    std::vector<unsigned> out;
    if (text == "all") {
        out = allowed;
    } else {
        // numactl's order: "!" first, then "+" ("!+1-2").
        std::size_t pos = 0;
        const bool invert = pos < text.size() && text[pos] == '!';
        if (invert) ++pos;
        const bool relative = pos < text.size() && text[pos] == '+';
        if (relative) ++pos;
        std::vector<unsigned> listed = detail::parse_list(text, pos, set, syntax);
        for (unsigned& n : listed) {
            if (!relative) {
                // Stricter than numactl, which skips disallowed indices inside a range: a typo
                // must not silently shrink the set.
                if (!std::binary_search(allowed.begin(), allowed.end(), n))
                    detail::throw_error(errc::invalid_argument, what + ": " + item + " " + std::to_string(n) +
                                                                    " is not in the allowed set {" +
                                                                    format_list(allowed) + "}");
            } else if (n < allowed.size()) {
                n = allowed[n];
            } else if (allowed.empty()) {
                detail::throw_error(errc::invalid_argument, what + ": relative " + item + " +" + std::to_string(n) +
                                                                " does not exist: the allowed set is empty");
            } else {
                detail::throw_error(errc::invalid_argument,
                                    what + ": relative " + item + " +" + std::to_string(n) +
                                        " does not exist: the allowed set {" + format_list(allowed) + "} has " +
                                        std::to_string(allowed.size()) + " " + item + "(s), +0 to +" +
                                        std::to_string(allowed.size() - 1));
            }
        }
        if (invert)
            std::set_difference(allowed.begin(), allowed.end(), listed.begin(), listed.end(), std::back_inserter(out));
        else
            out = std::move(listed);
    }
    if (out.empty())
        detail::throw_error(errc::invalid_argument,
                            what + ": no " + item + " is left (the allowed set is {" + format_list(allowed) + "})");
    return out;
}

std::vector<unsigned> parse_node_set(std::string_view text, std::span<const unsigned> allowed) {
    return detail::parse_set(text, allowed, {"node set", "node"});
}

std::vector<unsigned> parse_node_set(std::string_view text) {
    return parse_node_set(text, detail::allowed_memory_nodes());
}

std::vector<unsigned> parse_cpu_set(std::string_view text, std::span<const unsigned> allowed) {
    return detail::parse_set(text, allowed, {"CPU set", "CPU"});
}

std::vector<unsigned> parse_cpu_set(std::string_view text) {
    return parse_cpu_set(text, topology::current().allowed_cpus());
}

}  // namespace ccnuma
