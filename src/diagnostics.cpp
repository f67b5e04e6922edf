// Placement diagnostics: one handler for the process, set by set_diagnostic_handler().

#include "placement_internal.hpp"

#include <ccnuma/placement.hpp>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

namespace ccnuma {

namespace {
std::mutex diagnostics_mutex;
std::function<void(std::string_view)> diagnostics_handler = [](std::string_view message) {
    static std::set<std::string, std::less<>> seen;
    if (!seen.insert(std::string(message)).second) return;
    std::fprintf(stderr, "ccnuma: warning: %.*s\n", static_cast<int>(message.size()), message.data());
};
}  // namespace

namespace detail {
void diagnose(const std::string& message) {
    std::lock_guard lock(diagnostics_mutex);
    if (diagnostics_handler) diagnostics_handler(message);
}
}  // namespace detail

void set_diagnostic_handler(std::function<void(std::string_view)> handler) {
    std::lock_guard lock(diagnostics_mutex);
    diagnostics_handler = std::move(handler);
}

}  // namespace ccnuma
