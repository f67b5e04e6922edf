// libFuzzer target: topology sources from outside (issue 23, items 9 and 10). The first byte
// picks the form: even, the rest is a synthetic description; odd, an hwloc XML file. Either
// loads, or throws ccnuma::error with one "ccnuma: " line; a crash inside hwloc on a malformed
// XML file must be fenced off, and a description must never make hwloc work for minutes
// (libFuzzer's -timeout catches that).

#include "fuzz_check.hpp"

#include <ccnuma/topology.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    ccnuma::topology_options options;
    options.use_environment = false;
    if (data[0] % 2 == 0) {
        if (text.find('/') != std::string::npos) return 0;  // would name a file
        options.source = text;
    } else {
        static const std::string file = "/tmp/ccnuma_fuzz_topology_" + std::to_string(::getpid()) + ".xml";
        std::FILE* f = std::fopen(file.c_str(), "wb");
        if (!f) return 0;
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
        options.source = file;
    }
    fuzz::expect_value_or_error([&] {
        const auto t = ccnuma::topology::load(options);
        fuzz::check(!t.pus().empty(), "a topology without PUs loaded");
    });
    return 0;
}
