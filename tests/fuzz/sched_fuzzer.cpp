// libFuzzer target: the parsers of a task's /proc/PID/task/TID/sched and stat (issue 33): the
// NUMA-balancing fields and stat's fields after a command name that may hold anything. They
// throw nothing; node numbers stay below 65536.

#include "fuzz_check.hpp"

#include "../../src/os/os.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto s = ccnuma::detail::parse_sched(text);
    for (const auto& [node, faults] : s.faults) fuzz::check(node < (1u << 16), "a node number beyond 65535");
    if (!s.faults.empty()) fuzz::check(s.has_numa, "faults without has_numa");
    static_cast<void>(ccnuma::detail::parse_stat(text));
    static_cast<void>(ccnuma::detail::parse_vmstat(text, "numa_pages_migrated"));
    static_cast<void>(ccnuma::detail::parse_status_cpus(text));
    return 0;
}
