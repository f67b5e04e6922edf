// libFuzzer target: ccnuma::binding_spec::parse (CCNUMA_BIND, ccnuma-run --bind). A spec that
// parses prints itself in a form that parses to the same spec.

#include "fuzz_check.hpp"

#include <ccnuma/binding.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::expect_value_or_error([&] {
        const auto spec = ccnuma::binding_spec::parse(text);
        fuzz::check(!spec.empty(), "a parsed spec is empty");
        fuzz::check(spec.levels().size() <= ccnuma::binding_spec::max_levels, "too many levels");
        const auto again = ccnuma::binding_spec::parse(spec.to_string());
        fuzz::check(again.levels() == spec.levels(), "to_string() does not parse back to the same spec");
    });
    return 0;
}
