#pragma once
// The list parser behind ccnuma::parse_list, for syntaxes that embed a list after a prefix
// (parse_node_set's "+" and "!"): messages then quote the whole input and count positions in it.

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace ccnuma::detail {

/// Parses text[from..] as a list ("0-3,8"), sorted and without duplicates. Errors name `what`,
/// quote all of `text`, give the position in `text` and end with "(expected <expected>)".
std::vector<unsigned> parse_list(std::string_view text, std::size_t from, std::string_view what,
                                 std::string_view expected);

/// The words of one numactl set syntax in messages: "node set"/"node", "CPU set"/"CPU".
struct set_words {
    std::string_view set;
    std::string_view item;
};

/// numactl's set rules, shared by parse_node_set and parse_cpu_set: "all", a list, "+" for
/// indices into `allowed`, "!" for every allowed index but those; checked against `allowed`.
std::vector<unsigned> parse_set(std::string_view text, std::span<const unsigned> allowed, set_words words);

}  // namespace ccnuma::detail
