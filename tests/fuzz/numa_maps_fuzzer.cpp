// libFuzzer target: the /proc/PID/numa_maps parser of ccnuma-ps (issue 33). Whatever the file
// holds, truncated or hostile, the parser returns what it could read and throws nothing: every
// line it keeps has a policy and node numbers below 65536.

#include "fuzz_check.hpp"

#include "../../src/os/os.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& line : ccnuma::detail::parse_numa_maps(text)) {
        fuzz::check(!line.policy.empty(), "a kept line without a policy");
        for (const auto& [node, pages] : line.nodes) fuzz::check(node < (1u << 16), "a node number beyond 65535");
    }
    return 0;
}
