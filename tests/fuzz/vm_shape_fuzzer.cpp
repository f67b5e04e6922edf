// libFuzzer target: ccnuma::emulated_machine::parse (the shape ccnuma-vm writes to
// /etc/ccnuma-vm and reads back, memory nodes included) and ccnuma::parse_size (--mem-per-node).
// A shape that parses is valid, prints itself in a form that parses to the same shape, and
// derives a SLIT that QEMU accepts.

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
        std::uint64_t memory_nodes = 0;
        for (const auto& x : m.memory_nodes) memory_nodes += x.size;
        fuzz::check(m.total_memory() - memory_nodes == m.mem_per_node * m.nodes && memory_nodes <= m.total_memory() &&
                        m.total_memory() <= (std::uint64_t{1} << 40),
                    "the total memory overflows");
        const auto d = m.distance_matrix();
        fuzz::check(d.empty() || d.size() == m.all_nodes(), "the distance matrix does not cover every node");
        for (std::size_t i = 0; i < d.size(); ++i)
            for (std::size_t j = 0; j < d.size(); ++j)
                // A given SLIT may be asymmetric (ACPI allows it); a derived one never is.
                fuzz::check((!m.distances.empty() || d[i][j] == d[j][i]) &&
                                (i == j ? d[i][j] == 10 : d[i][j] > 10 && d[i][j] < 255),
                            "a distance is not symmetric where derived, or outside the SLIT's range");
    });
    fuzz::expect_value_or_error([&] {
        const auto bytes = ccnuma::parse_size(text, "--mem-per-node");
        if (bytes != 0 && ccnuma::format_size(bytes) != "")
            fuzz::check(ccnuma::parse_size(ccnuma::format_size(bytes)) == bytes, "format_size() does not parse back");
    });
    return 0;
}
