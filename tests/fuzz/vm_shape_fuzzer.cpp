// libFuzzer target: ccnuma::emulated_machine::parse (the shape ccnuma-vm writes to
// /etc/ccnuma-vm and reads back) and ccnuma::parse_size (--mem-per-node). A shape that parses is
// valid and prints itself in a form that parses to the same shape.

#include "fuzz_check.hpp"

#include <ccnuma/emulated_machine.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::expect_value_or_error([&] {
        const auto m = ccnuma::emulated_machine::parse(text);
        m.validate();
        fuzz::check(ccnuma::emulated_machine::parse(m.to_string()) == m, "to_string() does not parse back");
        fuzz::check(m.total_memory() / m.nodes == m.mem_per_node, "the total memory overflows");
    });
    fuzz::expect_value_or_error([&] {
        const auto bytes = ccnuma::parse_size(text, "--mem-per-node");
        if (bytes != 0 && ccnuma::format_size(bytes) != "")
            fuzz::check(ccnuma::parse_size(ccnuma::format_size(bytes)) == bytes, "format_size() does not parse back");
    });
    return 0;
}
