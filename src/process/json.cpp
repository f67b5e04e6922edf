// The JSON of observed processes: one schema (docs/tools/ccnuma-ps.md), shared by ccnuma-ps and
// ccnuma-run --watch, so that a plot reads either.

#include <ccnuma/detail/json.hpp>
#include <ccnuma/process.hpp>

#include <cstdio>

namespace ccnuma::detail {

namespace {

std::string hex(std::uintptr_t a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
    return buf;
}

// Counts indexed by node, as an object keyed by each online node ("0": 12), so that a node
// without pages shows as 0 and a missing node is never read as node 0.
template <class Counts>
json per_node(const Counts& counts, const std::vector<unsigned>& nodes) {
    json j = json::object();
    for (const unsigned n : nodes) j[std::to_string(n)] = n < counts.size() ? counts[n] : 0;
    for (std::size_t n = 0; n < counts.size(); ++n)
        if (counts[n] != 0 && !j.contains(std::to_string(n))) j[std::to_string(n)] = counts[n];
    return j;
}

template <class T>
json optional_value(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

json threads_json(const process_snapshot& s) {
    json a = json::array();
    for (const auto& t : s.threads) {
        json j;
        j["tid"] = t.tid;
        j["name"] = t.name;
        j["state"] = std::string(1, t.state);
        j["cpu"] = t.cpu;
        j["node"] = t.node;
        j["allowed"] = t.allowed;
        j["allowed_nodes"] = t.allowed_nodes;
        j["balancing"] = std::string(to_string(t.balancing));
        j["preferred_node"] = optional_value(t.preferred_node);
        j["faults"] = t.faults.empty() ? json::object() : per_node(t.faults, s.nodes);
        j["local_fault_share"] = optional_value(t.local_fault_share());
        j["pages_migrated"] = optional_value(t.pages_migrated);
        a.push_back(std::move(j));
    }
    return a;
}

json regions_json(const process_snapshot& s) {
    json a = json::array();
    for (const auto& r : s.regions) {
        json j;
        j["start"] = hex(r.start);
        j["end"] = hex(r.end);
        j["bytes"] = r.bytes();
        j["kind"] = std::string(to_string(r.kind));
        j["path"] = r.path;
        j["policy"] = r.policy;
        j["page_size"] = r.page_size;
        j["pages"] = per_node(r.pages, s.nodes);
        j["resident"] = r.resident();
        j["zero_pages"] = optional_value(r.zero_pages);
        j["huge_pages"] = optional_value(r.huge_pages);
        j["regions"] = r.regions;
        json layout = json::array();
        for (const auto& span : r.layout)
            layout.push_back({{"begin", span.begin}, {"end", span.end}, {"node", span.node},
                              {"samples", per_node(span.samples, s.nodes)}});
        j["layout"] = std::move(layout);
        a.push_back(std::move(j));
    }
    return a;
}

json totals_json(const process_snapshot& s) {
    return {{"pages", per_node(s.node_pages(), s.nodes)}, {"bytes", per_node(s.node_bytes, s.nodes)}};
}

}  // namespace

json to_json_value(const std::vector<verdict>& v) {
    json a = json::array();
    for (const auto& x : v) a.push_back({{"kind", x.kind}, {"subject", x.subject}, {"text", x.text}});
    return a;
}

json to_json_value(const process_snapshot& s) {
    json j;
    j["schema_version"] = 1;
    j["pid"] = s.pid;
    j["command"] = s.command;
    j["state"] = std::string(1, s.state);
    j["kernel_thread"] = s.kernel_thread;
    j["start_time"] = s.start_time;
    j["nodes"] = s.nodes;
    j["numa_balancing"] = optional_value(s.numa_balancing);
    j["threads"] = threads_json(s);
    j["regions"] = regions_json(s);
    j["totals"] = totals_json(s);
    j["verdicts"] = to_json_value(s.verdicts);
    j["notes"] = s.notes;
    return j;
}

json to_json_value(const process_sample& s) {
    json j;
    j["seconds"] = s.seconds;
    j["vmstat_pages_migrated"] = s.vmstat_pages_migrated;
    json per_thread = json::object();
    for (const auto& [tid, n] : s.thread_pages_migrated) per_thread[std::to_string(tid)] = n;
    j["thread_pages_migrated"] = std::move(per_thread);
    json moved = json::array();
    for (const auto& m : s.moved) moved.push_back({{"tid", m.tid}, {"from", m.from}, {"to", m.to}});
    j["moved"] = std::move(moved);
    j["started"] = s.started;
    j["ended"] = s.ended;
    j["local_fault_share"] = optional_value(s.local_fault_share);
    j["threads"] = threads_json(s.snapshot);
    j["regions"] = regions_json(s.snapshot);
    j["totals"] = totals_json(s.snapshot);
    j["notes"] = s.snapshot.notes;
    return j;
}

json series_to_json(const process_observer& o, double interval_seconds, json samples, const char* end) {
    json j;
    j["schema_version"] = 1;
    j["pid"] = o.pid();
    j["command"] = o.count() > 0 ? o.last().snapshot.command : std::string();
    j["nodes"] = o.count() > 0 ? json(o.last().snapshot.nodes) : json::array();
    j["interval"] = interval_seconds;
    // Each sample's index first, as docs/tools/ccnuma-ps.md shows it.
    json numbered = json::array();
    for (std::size_t i = 0; i < samples.size(); ++i) {
        json s = {{"sample", i}};
        if (samples[i].is_object()) s.update(samples[i]);
        numbered.push_back(std::move(s));
    }
    j["samples"] = std::move(numbered);
    j["end"] = end;
    j["verdicts"] = to_json_value(o.verdicts());
    return j;
}

}  // namespace ccnuma::detail
