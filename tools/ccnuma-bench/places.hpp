#pragma once
// Whether the OpenMP runtime's places are what OMP_PLACES asked for, by hwloc's count of the
// cores: a run's context warns where they are not. libomp 14 on a 2-vCPU AMD VM (2026-12-02)
// read the CPU's topology from legacy APIC ids (no CPUID leaf 11), took the two vCPUs, two
// cores for Linux and hwloc, for one core of two threads, and made OMP_PLACES=cores one place
// {0,1}. Both threads of a team were then bound to both PUs, and in 9 of 44 processes the
// scheduler kept them on one PU: the triad at 20,000 elements ran at 19 GB/s instead of 166 to
// 270 (180 to 189 context switches against 8 to 22; docs/tools/ccnuma-bench.md, Output).
// libgomp reads the cores from Linux and made two places; OMP_PLACES=threads made two in both
// runtimes.

#include <ccnuma/list.hpp>
#include <ccnuma/topology.hpp>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

/// OMP_PLACES's abstract name as both runtimes read it: blanks dropped, lower case, without a
/// count ("cores(4)" is "cores").
inline std::string places_name(std::string_view omp_places) {
    std::string name;
    for (const char c : omp_places) {
        if (c == '(') break;
        if (c != ' ' && c != '\t') name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return name;
}

/// Whether places_warning checks places made from this OMP_PLACES.
inline bool places_checked(std::string_view omp_places) {
    const std::string name = places_name(omp_places);
    return name == "cores" || name == "threads";
}

/// The warning for places that hold more than OMP_PLACES asked for (the abstract name
/// `omp_places`, "cores" or "threads", with or without a count): a place of `cores` over PUs
/// of two or more of topo's cores, a place of `threads` of two or more PUs. Empty where every
/// place holds what was asked for, where places is empty (the runtime does not bind) and for
/// other values of OMP_PLACES (sockets, ll_caches, numa_domains and explicit lists span cores
/// by design). PUs that topo does not know count as cores of their own.
inline std::string places_warning(const std::vector<std::vector<unsigned>>& places, const ccnuma::topology& topo,
                                  std::string_view omp_places) {
    if (!places_checked(omp_places) || places.empty()) return {};
    const bool cores = places_name(omp_places) == "cores", threads = !cores;
    // Not topology::pu(), which throws for a PU outside the snapshot.
    std::map<unsigned, unsigned> core_of;
    for (const auto& pu : topo.pus()) core_of[pu.os_index] = pu.core;
    for (std::size_t p = 0; p < places.size(); ++p) {
        std::set<long> held;
        for (const unsigned pu : places[p]) {
            const auto c = core_of.find(pu);
            held.insert(threads || c == core_of.end() ? -1 - static_cast<long>(pu) : static_cast<long>(c->second));
        }
        if (held.size() < 2) continue;
        return "OMP_PLACES=" + std::string(omp_places) + ": the runtime's place " + std::to_string(p) + " holds PUs " +
               ccnuma::format_list(places[p]) + ", " + std::to_string(held.size()) +
               (cores ? " of hwloc's cores" : " PUs") +
               "; a thread bound there may run on any of them, and the scheduler may put two threads on one "
               "(the runtime's count of the cores is not hwloc's); --bind, or OMP_PLACES with PU lists, binds one "
               "thread to each";
    }
    return {};
}

}  // namespace bench
