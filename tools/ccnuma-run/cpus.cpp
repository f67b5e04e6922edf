// CPU and node options into sets: numactl's list rules (the library's parse_cpu_set and
// parse_node_set), hwloc locations, and a hint where another tool's syntax was given.

#include "run.hpp"

#include <ccnuma/cpu_expression.hpp>
#include <ccnuma/cpu_location.hpp>

#include <algorithm>
#include <stdexcept>

namespace tools::run {

namespace {
// Another tool's syntax where this option takes the other: one line naming the ccnuma form.
[[noreturn]] void hint_likwid(const std::string& option, const std::string& text, const ccnuma::topology& topo) {
    std::string cpus;
    try {
        cpus = ccnuma::format_list(ccnuma::cpu_expression_pus(text, topo));
    } catch (const std::exception&) {
    }
    throw usage_error{option + " \"" + text + "\" is likwid-pin syntax: give it as --cpus " + text +
                      " (-c; threads pinned in its order)" + (cpus.empty() ? "" : ", or here as " + option + " " + cpus)};
}
}  // namespace

[[noreturn]] void hint_hwloc(const std::string& text, const ccnuma::topology& topo) {
    std::string cpus;
    try {
        cpus = ccnuma::format_list(ccnuma::cpu_location_pus(text, topo));
    } catch (const std::exception&) {
    }
    throw usage_error{"--cpus \"" + text + "\" is an hwloc location, and --cpus takes likwid-pin expressions: give it as "
                      "--physcpubind " + text + " (-C)" + (cpus.empty() ? "" : ", or as --cpus " + cpus)};
}

std::string node_set_text(const std::string& option, const std::string& text, const ccnuma::topology& topo) {
    if (ccnuma::is_cpu_location(text)) return ccnuma::format_list(ccnuma::cpu_location_nodes(text, topo));
    if (ccnuma::is_cpu_expression(text)) hint_likwid(option, text, topo);
    return text;
}

std::vector<unsigned> selected_cpus(const cpu_option& c, const ccnuma::topology& topo) {
    const std::vector<unsigned> allowed = topo.allowed_cpus();
    if (c.name == "--cpunodebind") {
        const auto nodes = ccnuma::parse_node_set(node_set_text(c.name, c.list, topo), topo.allowed_nodes());
        std::vector<unsigned> cpus;
        for (const auto& n : topo.numa_nodes())
            if (std::find(nodes.begin(), nodes.end(), n.os_index) != nodes.end())
                for (unsigned cpu : n.cpus)
                    if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) cpus.push_back(cpu);
        std::sort(cpus.begin(), cpus.end());
        cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
        if (cpus.empty())
            throw std::runtime_error("--cpunodebind \"" + c.list + "\": nodes {" + ccnuma::format_list(nodes) +
                                     "} have no allowed CPU (allowed: " + ccnuma::format_list(allowed) + ")");
        return cpus;
    }
    if (ccnuma::is_cpu_location(c.list)) return ccnuma::cpu_location_pus(c.list, topo);
    if (ccnuma::is_cpu_expression(c.list)) hint_likwid(c.name, c.list, topo);
    return ccnuma::parse_cpu_set(c.list, allowed);
}

}  // namespace tools::run
