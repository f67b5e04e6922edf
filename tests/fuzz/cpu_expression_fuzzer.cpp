// libFuzzer target: ccnuma::cpu_expression_pus, likwid-pin's -c expressions (ccnuma-run
// -c/--cpus). The first byte picks a synthetic machine (fuzz_topologies.hpp). An expression
// that parses gives a non-empty pin order of allowed PUs; the same order written back as a
// plain list parses to itself; and is_cpu_expression(), which callers use to tell an
// expression from a list or an hwloc location, says yes to every domain expression that parses.

#include "fuzz_check.hpp"
#include "fuzz_topologies.hpp"

#include <ccnuma/cpu_expression.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const ccnuma::topology& topo = fuzz::topology_for(data[0]);
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    fuzz::expect_value_or_error([&] {
        const auto pus = ccnuma::cpu_expression_pus(text, topo);
        fuzz::check(!pus.empty(), "an expression that parses pins no thread");
        const auto allowed = topo.allowed_cpus();
        for (unsigned pu : pus)
            fuzz::check(std::binary_search(allowed.begin(), allowed.end(), pu), "a PU outside the allowed set");
        std::string list;
        for (unsigned pu : pus) list += (list.empty() ? "" : ",") + std::to_string(pu);
        fuzz::check(ccnuma::cpu_expression_pus(list, topo) == pus, "the pin order written as a list parses differently");
        if (text.find(':') != std::string_view::npos)
            fuzz::check(ccnuma::is_cpu_expression(text), "is_cpu_expression() refuses an expression that parses");
    });
    return 0;
}
