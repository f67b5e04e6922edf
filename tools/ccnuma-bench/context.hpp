#pragma once
// The context every ccnuma-bench result carries (Kokkos' Benchmark_Context): the machine, its
// caches and pages, the binding, the OpenMP variables, the compiler and flags, the load, and why
// the numbers may not be the machine's. The text header and the JSON context both print it.

#include "options.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace bench {

/// The context as ordered key/value pairs.
std::vector<std::pair<std::string, std::string>> context(const options& o);

/// The load average when the run started (the first call: the report's header); -1 where unknown.
const std::array<double, 3>& start_load();

/// The PUs this run's threads may use. Where OMP_PLACES / OMP_PROC_BIND bind the team, the
/// runtime has narrowed the initial thread's mask to its first place, so the places' union
/// counts; otherwise the process's allowed CPUs.
std::size_t allowed_pus();

/// Why the run's numbers may not be the machine's: oversubscription and a loaded machine.
std::vector<std::string> run_warnings(const options& o);

/// Google Benchmark's rule (sysinfo.cc): CPU scaling is enabled when any CPU's cpufreq governor
/// is readable and is not "performance"; no cpufreq (a VM, a container without /sys) is false.
bool cpu_scaling_enabled();

}  // namespace bench
