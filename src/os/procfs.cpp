// Sizes, kernel settings and the procfs/sysfs facts (see os.hpp).

#include "os.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <sstream>
#include <string>

namespace ccnuma::detail {

namespace {

std::string read_first_line(const std::string& path) noexcept {
    try {
        std::ifstream in(path);
        std::string line;
        if (in && std::getline(in, line)) return line;
    } catch (...) {
    }
    return {};
}

// The sysfs THP files list every choice and bracket the active one: "always [madvise] never".
std::string active_choice(const std::string& line) {
    const auto open = line.find('[');
    const auto close = line.find(']', open);
    if (open == std::string::npos || close == std::string::npos) return line;
    return line.substr(open + 1, close - open - 1);
}

constexpr const char* thp_dir = "/sys/kernel/mm/transparent_hugepage/";

// The bytes of a "<key>: <value> kB" line of a meminfo file (/proc/meminfo, or a node's, whose
// lines start "Node 0 ").
std::optional<std::uint64_t> meminfo_field(const std::string& path, const char* key) noexcept {
    try {
        std::ifstream in(path);
        const std::string field = std::string(key) + ":";
        std::string line;
        while (std::getline(in, line)) {
            const auto at = line.find(field);
            if (at == std::string::npos || (at != 0 && line[at - 1] != ' ')) continue;
            std::istringstream value(line.substr(at + field.size()));
            std::uint64_t kb = 0;
            if (value >> kb) return kb * 1024;
        }
    } catch (...) {
    }
    return std::nullopt;
}

}  // namespace

std::size_t page_bytes() noexcept {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

std::optional<std::size_t> huge_page_bytes_told() noexcept {
    static const std::optional<std::size_t> told = []() -> std::optional<std::size_t> {
        std::size_t bytes = 0;
        try {
            std::ifstream pmd(std::string(thp_dir) + "hpage_pmd_size");
            pmd >> bytes;
        } catch (...) {
            bytes = 0;
        }
        if (bytes == 0) return std::nullopt;
        return bytes;
    }();
    return told;
}

std::size_t huge_page_bytes() noexcept { return huge_page_bytes_told().value_or(page_bytes()); }

std::string thp_setting(const char* name) noexcept {
    try {
        return active_choice(read_first_line(std::string(thp_dir) + name));
    } catch (...) {
        return {};
    }
}

std::string thp_mode() noexcept { return thp_setting("enabled"); }

std::optional<int> numa_balancing() noexcept {
    try {
        const auto nb = read_first_line("/proc/sys/kernel/numa_balancing");
        if (!nb.empty()) return std::stoi(nb);
    } catch (...) {
        // A malformed proc file is reported as "unknown" rather than taking the caller down.
    }
    return std::nullopt;
}

std::optional<std::uint64_t> node_meminfo(unsigned node, const char* key) noexcept {
    try {
        return meminfo_field("/sys/devices/system/node/node" + std::to_string(node) + "/meminfo", key);
    } catch (...) {
        return std::nullopt;
    }
}

std::optional<std::uint64_t> meminfo(const char* key) noexcept { return meminfo_field("/proc/meminfo", key); }

std::string executable_path() {
    char self[PATH_MAX] = {};
    const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
    return len > 0 ? std::string(self, static_cast<std::size_t>(len)) : std::string();
}

std::vector<std::string> cpuinfo(const char* key) {
    std::vector<std::string> values;
    std::ifstream in("/proc/cpuinfo");
    const std::string k = key;
    for (std::string line; std::getline(in, line);) {
        // "model name\t: Intel(R) Xeon(R) ...": the key, tabs, a colon, one space.
        const auto colon = line.find(':');
        if (colon == std::string::npos || line.compare(0, k.size(), k) != 0) continue;
        if (line.find_first_not_of(" \t", k.size()) != colon) continue;
        const auto value = line.find_first_not_of(' ', colon + 1);
        values.push_back(value == std::string::npos ? std::string() : line.substr(value));
    }
    return values;
}

std::string cpufreq(unsigned cpu, const char* file) {
    return read_first_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/" + file);
}

std::optional<std::size_t> thread_rlimit() noexcept {
    rlimit r{};
    if (::getuid() == 0 || ::getrlimit(RLIMIT_NPROC, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<std::size_t>(r.rlim_cur);
}

}  // namespace ccnuma::detail
