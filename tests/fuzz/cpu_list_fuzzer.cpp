// libFuzzer target: ccnuma::parse_list, the CPU list syntax of CCNUMA_CPUSET, ccnuma-run
// --physcpubind and ccnuma-info. A list that parses is sorted and unique, and format_list()
// writes it back in a form that parses to the same list.

#include "fuzz_check.hpp"

#include <ccnuma/topology.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::expect_value_or_error([&] {
        const auto cpus = ccnuma::parse_list(text, "CPU list");
        fuzz::check(std::is_sorted(cpus.begin(), cpus.end()) && std::adjacent_find(cpus.begin(), cpus.end()) == cpus.end(),
                    "the list is not sorted and unique");
        fuzz::check(ccnuma::parse_list(ccnuma::format_list(cpus), "CPU list") == cpus,
                    "format_list() does not parse back to the same list");
    });
    return 0;
}
