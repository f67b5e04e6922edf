// libFuzzer target: ccnuma::emulated_machine::parse_distances (ccnuma-vm --distances), then
// validation against a machine with as many nodes as rows.

#include "fuzz_check.hpp"

#include <ccnuma/emulated_machine.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::expect_value_or_error([&] {
        const auto rows = ccnuma::emulated_machine::parse_distances(text);
        fuzz::check(!rows.empty(), "no rows from a matrix that parsed");
        ccnuma::emulated_machine m;
        m.nodes = static_cast<unsigned>(rows.size());
        m.distances = rows;
        m.validate();
        for (std::size_t i = 0; i < rows.size(); ++i) {
            fuzz::check(rows[i].size() == rows.size(), "a validated matrix is not square");
            fuzz::check(rows[i][i] == 10, "a validated diagonal is not 10");
        }
    });
    return 0;
}
