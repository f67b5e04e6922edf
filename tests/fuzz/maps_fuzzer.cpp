// libFuzzer target: the /proc/PID/maps parser of ccnuma-ps (issue 33). It throws nothing, and
// every range it keeps ends at or after its start, so a region's size never wraps.

#include "fuzz_check.hpp"

#include "../../src/os/os.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& line : ccnuma::detail::parse_maps(text)) {
        fuzz::check(line.end >= line.start, "a range that ends before it starts");
        fuzz::check(line.perms.size() >= 4, "permissions shorter than rwxp");
    }
    return 0;
}
