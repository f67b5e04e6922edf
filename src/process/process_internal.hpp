#pragma once
// What the units of src/process/ share: observe.cpp reads and joins, verdicts.cpp judges a
// snapshot and a series, observer.cpp keeps the series.

#include <ccnuma/process.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ccnuma::detail {

/// How a read of a process ended.
enum class read_end {
    complete,
    exited,  ///< the process went while it was read: the snapshot holds what was read
    reused,  ///< its PID names another process now: nothing of it may be reported
};

/// observe() without the throw for read_end::reused, which the observer reports as a status.
read_end observe_into(pid_t pid, const observe_options& options, process_snapshot& s);

/// The verdicts of one snapshot (appended to s.verdicts).
void judge_snapshot(process_snapshot& s);

/// The verdicts over a series.
std::vector<verdict> judge_series(const series_summary& s);

/// "region 0x7f3a00000000 (anon, 512 MiB)".
std::string region_subject(const region_info& r);

}  // namespace ccnuma::detail
