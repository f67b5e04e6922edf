// --print-plan: the plan or the likwid-pin pinning, the OpenMP variables and the memory policy,
// as text or as one JSON object (docs/tools/ccnuma-run.md lists the keys).

#include "run.hpp"

#include <ccnuma/detail/json.hpp>

#include <cstdio>

namespace tools::run {

using ccnuma::detail::json;

void print_plan(const std::optional<ccnuma::binding_plan>& plan, const ccnuma::omp_realization& omp,
                const std::optional<ccnuma::memory_policy>& memory, bool as_json) {
    if (as_json) {
        // The schema version first and a "memory_policy" key last, so that the plan's own keys
        // keep their order.
        json doc;
        doc["schema_version"] = json_schema_version;
        if (plan) {
            json plan_doc = ccnuma::detail::to_json_value(*plan);
            for (auto& [key, value] : plan_doc.items()) doc[key] = std::move(value);
        }
        if (memory) doc["memory_policy"] = ccnuma::detail::to_json_value(*memory);
        std::puts(doc.dump().c_str());
        return;
    }
    if (plan) {
        std::fputs(plan->to_text().c_str(), stdout);
        std::puts("");
        for (const auto& v : omp.variables) std::printf("%s=%s\n", v.name.c_str(), v.value.c_str());
        for (const auto& n : omp.notes) std::printf("note: %s\n", n.c_str());
    }
    if (memory) std::printf("memory policy: %s\n", memory->to_string().c_str());
}

void print_pinning(const std::string& expression, const std::vector<unsigned>& pinned, const ccnuma::topology& topo,
                   const std::vector<ccnuma::omp_variable>& variables,
                   const std::optional<ccnuma::memory_policy>& memory, bool as_json) {
    if (as_json) {
        json doc;
        doc["schema_version"] = json_schema_version;
        doc["cpus"] = expression;
        doc["threads"] = json::array();
        for (std::size_t i = 0; i < pinned.size(); ++i) {
            const auto& pu = topo.pu(pinned[i]);
            doc["threads"].push_back({{"thread", i},
                                      {"pu", pinned[i]},
                                      {"core", pu.core},
                                      {"numa", pu.numa},
                                      {"package", pu.package == ccnuma::no_package ? -1 : static_cast<long>(pu.package)}});
        }
        if (memory) doc["memory_policy"] = ccnuma::detail::to_json_value(*memory);
        std::puts(doc.dump().c_str());
        return;
    }
    std::printf("likwid-pin expression %s: %zu threads\nthread  pu  core  numa  package\n", expression.c_str(),
                pinned.size());
    for (std::size_t i = 0; i < pinned.size(); ++i) {
        const auto& pu = topo.pu(pinned[i]);
        std::printf("%6zu %3u %5u %5d %8s\n", i, pinned[i], pu.core, pu.numa,
                    pu.package == ccnuma::no_package ? "-" : std::to_string(pu.package).c_str());
    }
    std::puts("");
    for (const auto& v : variables) std::printf("%s=%s\n", v.name.c_str(), v.value.c_str());
    if (memory) std::printf("memory policy: %s\n", memory->to_string().c_str());
}

}  // namespace tools::run
