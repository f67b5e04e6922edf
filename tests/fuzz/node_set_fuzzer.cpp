// libFuzzer target: ccnuma::parse_node_set (numactl's node sets: --interleave, --membind,
// --cpunodebind). The first byte picks the allowed set; a set that parses is non-empty, sorted,
// without duplicates and inside the allowed set.

#include "fuzz_check.hpp"

#include <ccnuma/memory_policy.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const std::vector<std::vector<unsigned>> sets = {{}, {0}, {0, 1, 2, 3}, {2, 3, 6, 7}, {1023}, {0, 5, 1000}};
    const auto& allowed = sets[data[0] % sets.size()];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    fuzz::expect_value_or_error([&] {
        const auto nodes = ccnuma::parse_node_set(text, allowed);
        fuzz::check(!nodes.empty(), "an empty node set was returned");
        fuzz::check(std::is_sorted(nodes.begin(), nodes.end()) &&
                        std::adjacent_find(nodes.begin(), nodes.end()) == nodes.end(),
                    "the node set is not sorted and unique");
        for (unsigned n : nodes)
            fuzz::check(std::find(allowed.begin(), allowed.end(), n) != allowed.end(), "a node outside the allowed set");
    });
    return 0;
}
