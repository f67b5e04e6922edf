// ccnuma-info: what numactl -H and the essentials of lstopo show, plus the kernel settings and
// warnings that decide whether placement will hold. A thin layer over ccnuma/topology.hpp; this
// file reads the command line and loads the topology, info.hpp lists who writes the report.

#include "info.hpp"

#include "../common/cli.hpp"

#include <cstdio>
#include <optional>
#include <string>

namespace {

constexpr const char* usage =
    "usage: ccnuma-info [--json] [--tree] [-i|--input FILE.xml|SYNTHETIC] | --help | --version\n"
    "  Shows NUMA nodes (CPU-less memory, tiers, bandwidth and latency per initiator),\n"
    "  each PU's local nodes fastest first, packages, cores, caches, distances and the\n"
    "  allowed CPUs and nodes of this process, the kernel's NUMA balancing, demotion,\n"
    "  weighted-interleave and THP settings, and warnings.\n"
    "  --json        one JSON object instead of text (schema_version 2)\n"
    "  --tree        also print the hardware tree down to cores\n"
    "  -i, --input   describe another machine, as lstopo -i: an hwloc XML export or a\n"
    "                synthetic description such as \"pack:2 numa:2 core:8 pu:2\"\n"
    "  --version     print the version and exit\n"
    "  Options take their value as --opt VALUE, --opt=VALUE, -i VALUE or -iVALUE; unique prefixes\n"
    "  of long options work (--tr).\n"
    "exit status: 0 success, 1 the topology cannot be loaded, 2 usage error\n"
    "  L# marks hwloc logical indices (cores, packages, caches), P# OS indices (PUs, nodes).\n"
    "  CCNUMA_TOPOLOGY=<synthetic|file.xml> is the same as --input; CCNUMA_CPUSET=LIST\n"
    "  restricts it as taskset would.\n";

}  // namespace

int main(int argc, char** argv) {
    bool json = false, tree = false;
    std::optional<std::string> input;
    try {
        static const option longs[] = {
            {"json", no_argument, nullptr, 'j'},          {"tree", no_argument, nullptr, 't'},
            {"input", required_argument, nullptr, 'i'},   {"help", no_argument, nullptr, 'h'},
            {"version", no_argument, nullptr, 'V'},       {nullptr, 0, nullptr, 0},
        };
        tools::option_parser p("ccnuma-info", argc, argv, "+:i:h", longs);
        for (int c = 0; (c = p.next(usage)) != -1;) {
            switch (c) {
                case 'j': json = true; break;
                case 't': tree = true; break;
                case 'i': input = p.value(); break;
                default: throw tools::usage_error{"unknown option (" + p.see_help() + ")"};
            }
        }
        if (p.index() < argc)
            throw tools::usage_error{"unexpected argument \"" + std::string(argv[p.index()]) + "\" (" + p.see_help() +
                                     ")"};
    } catch (const tools::usage_error& e) {
        return tools::fail("ccnuma-info", e);
    }
    try {
        std::optional<ccnuma::topology> loaded;
        if (input) {
            ccnuma::topology_options o;
            o.source = *input;
            o.source_name = "--input";
            loaded = ccnuma::topology::load(o);
        }
        const auto& topo = loaded ? *loaded : ccnuma::topology::current();
        const auto kernel = ccnuma::kernel_settings::read();
        const auto warnings = ccnuma::placement_warnings(topo, kernel);
        if (json)
            tools::info::print_json(topo, kernel, warnings);
        else
            tools::info::print_text(topo, kernel, warnings, tree);
    } catch (const std::exception& e) {
        return tools::fail("ccnuma-info", e);
    }
    return 0;
}
