#pragma once
// What Slurm's task/affinity plugin tells each srun task it did (issue 24, part 5), read from the
// variables it sets: the tools show it and check their own options against it.

#include <ccnuma/topology.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tools::slurm {

/// The variables `ccnuma-run --show` and `ccnuma-info` print, one line each where set.
inline constexpr const char* binding_variables[] = {"SLURM_CPU_BIND_TYPE", "SLURM_CPU_BIND_LIST", "SLURM_MEM_BIND_TYPE",
                                                     "SLURM_MEM_BIND_LIST"};

/// The variable's value; an empty variable counts as unset (as CCNUMA_BIND's does).
inline std::optional<std::string> variable(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
}

/// "NAME=value" for each of binding_variables that is set.
inline std::vector<std::string> binding_lines() {
    std::vector<std::string> lines;
    for (const char* name : binding_variables)
        if (auto v = variable(name)) lines.push_back(std::string(name) + "=" + *v);
    return lines;
}

/// Slurm's --mem-bind for this task: the option as srun took it, and the NUMA nodes it bound
/// this task's memory to.
struct mem_bind {
    std::string option;  ///< e.g. "--mem-bind=map_mem:0,1"
    std::vector<unsigned> nodes;
};

/// The nodes of SLURM_MEM_BIND_TYPE/_LIST for this task (SLURM_LOCALID picks its entry of a
/// map_mem/mask_mem list, cyclically as Slurm does; local means the nodes of the task's CPUs).
/// nullopt where Slurm bound no node set (unset, none, rank, sort, prefer). Throws
/// std::invalid_argument naming the variable where a list cannot be read.
inline std::optional<mem_bind> task_mem_bind(const ccnuma::topology& topo) {
    const auto type = variable("SLURM_MEM_BIND_TYPE");
    if (!type) return std::nullopt;
    const std::string list = variable("SLURM_MEM_BIND_LIST").value_or("");
    const bool map = type->rfind("map_mem", 0) == 0, mask = type->rfind("mask_mem", 0) == 0;
    mem_bind b;
    if (type->rfind("local", 0) == 0) {
        b.option = "--mem-bind=local";
        for (unsigned cpu : topo.allowed_cpus())
            if (const int n = topo.pu(cpu).numa; n >= 0) b.nodes.push_back(static_cast<unsigned>(n));
    } else if (map || mask) {
        b.option = "--mem-bind=" + std::string(map ? "map_mem:" : "mask_mem:") + list;
        std::vector<std::string> entries;
        for (std::size_t at = 0; at <= list.size();) {
            const std::size_t comma = std::min(list.find(',', at), list.size());
            entries.push_back(list.substr(at, comma - at));
            at = comma + 1;
        }
        const auto bad = [&](const std::string& why) {
            return std::invalid_argument("cannot read SLURM_MEM_BIND_LIST \"" + list + "\" (SLURM_MEM_BIND_TYPE=" +
                                         *type + "): " + why);
        };
        if (list.empty()) throw bad("it is empty");
        unsigned long local = 0;
        if (const auto id = variable("SLURM_LOCALID")) {
            char* end = nullptr;
            local = std::strtoul(id->c_str(), &end, 10);
            if (id->empty() || *end != '\0') throw bad("SLURM_LOCALID \"" + *id + "\" is not a task number");
        }
        const std::string& entry = entries[local % entries.size()];
        char* end = nullptr;
        const unsigned long long value = std::strtoull(entry.c_str(), &end, map ? 10 : 16);
        if (entry.empty() || *end != '\0' || (map && value > 4095))
            throw bad("entry \"" + entry + "\" is not a " + (map ? "node number" : "hexadecimal node mask"));
        if (map) b.nodes.push_back(static_cast<unsigned>(value));
        else
            for (unsigned n = 0; n < 64; ++n)
                if ((value >> n) & 1) b.nodes.push_back(n);
    } else {
        return std::nullopt;
    }
    std::sort(b.nodes.begin(), b.nodes.end());
    b.nodes.erase(std::unique(b.nodes.begin(), b.nodes.end()), b.nodes.end());
    return b;
}

}  // namespace tools::slurm
