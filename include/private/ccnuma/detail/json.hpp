#pragma once
// The library's JSON, as data. The public to_json() members return these values dumped, and the
// tools embed them in their own documents instead of parsing those strings back. nlohmann-json
// (header-only, Debian's nlohmann-json3-dev) is private to the library: no public header includes
// this one, so users and the installed package gain no dependency.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ccnuma {
class topology;
class binding_plan;
struct memory_policy;
struct process_snapshot;
struct process_sample;
struct verdict;
class process_observer;
}  // namespace ccnuma

namespace ccnuma::detail {

/// Keys in the order the schemas in docs/ list them.
using json = nlohmann::ordered_json;

json to_json_value(const topology& t);
json to_json_value(const binding_plan& p);
json to_json_value(const memory_policy& p);
/// ccnuma-ps --json: the snapshot document (docs/tools/ccnuma-ps.md, schema_version 1).
json to_json_value(const process_snapshot& s);
/// One element of the series' samples[]: the deltas, then the snapshot's threads, regions, totals.
json to_json_value(const process_sample& s);
json to_json_value(const std::vector<verdict>& v);
/// The series document of ccnuma-ps --watch and ccnuma-run --watch: pid, command, interval,
/// `samples` (each a to_json_value(process_sample)), `end` ("count", "exited", "pid_reused"),
/// and the observer's verdicts.
json series_to_json(const process_observer& o, double interval_seconds, json samples, const char* end);

/// The compact text every to_json() returns. Bytes that are not UTF-8 (a hostile XML's
/// description) become U+FFFD rather than an exception from an accessor.
inline std::string dump(const json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace ccnuma::detail
