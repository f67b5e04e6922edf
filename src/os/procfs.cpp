// Sizes, kernel settings and the procfs/sysfs facts (see os.hpp).

#include "os.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// A kernel list ("0-3,8", or empty for none); nullopt where it is not one, so that a file
// the kernel changed the format of reads as unknown, not as a wrong node set.
std::optional<std::vector<unsigned>> kernel_list(const std::string& text) {
    std::vector<unsigned> out;
    std::size_t i = 0;
    const auto number = [&](unsigned& v) {
        if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
        unsigned long long n = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && n <= (1u << 20))
            n = n * 10 + static_cast<unsigned>(text[i++] - '0');
        if (n > (1u << 20)) return false;  // beyond any CPU or node number Linux has
        v = static_cast<unsigned>(n);
        return true;
    };
    while (i < text.size() && text[i] != '\n') {
        unsigned first = 0, last = 0;
        if (!number(first)) return std::nullopt;
        last = first;
        if (i < text.size() && text[i] == '-' && (++i, !number(last))) return std::nullopt;
        if (last < first) return std::nullopt;
        for (unsigned v = first; v <= last; ++v) out.push_back(v);
        if (i < text.size() && text[i] == ',') ++i;
    }
    return out;
}

// A number file of sysfs ("123\n"); nullopt where it is absent or not a number.
std::optional<std::uint64_t> number_file(const std::string& path) noexcept {
    try {
        std::ifstream in(path);
        std::uint64_t v = 0;
        if (in >> v) return v;
    } catch (...) {
    }
    return std::nullopt;
}

// The N of the entries "<prefix>N" of a directory, ascending.
std::vector<unsigned> numbered_entries(const std::string& dir, const std::string& prefix) {
    std::vector<unsigned> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = name.substr(prefix.size());
        if (rest.size() > 7 || rest.find_first_not_of("0123456789") != std::string::npos) continue;
        out.push_back(static_cast<unsigned>(std::stoul(rest)));
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string node_dir(const std::string& sys, unsigned node) {
    return sys + "/devices/system/node/node" + std::to_string(node);
}

}  // namespace

std::size_t page_bytes() noexcept {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

huge_page_size_read read_huge_page_size(const std::string& sys) noexcept {
    huge_page_size_read r;
    try {
        std::ifstream in(sys + "/kernel/mm/transparent_hugepage/hpage_pmd_size");
        if (!in) return r;  // no THP, or a kernel before 4.13
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
        // Digits only: a stream read takes "-1" as 2^64-1. The size is a power of two from a
        // base page to 1 GiB (x86-64's PUD); anything else would wrap the allocator's guards.
        std::uint64_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        const bool number = !text.empty() && ec == std::errc{} && ptr == text.data() + text.size() &&
                            std::isdigit(static_cast<unsigned char>(text.front()));
        if (number && v >= page_bytes() && v <= (std::uint64_t{1} << 30) && (v & (v - 1)) == 0) {
            r.bytes = static_cast<std::size_t>(v);
            return r;
        }
        if (text.size() > 40) text = text.substr(0, 40) + "...";
        r.rejected = "hpage_pmd_size \"" + text + "\" is not a power of two from " + std::to_string(page_bytes()) +
                     " to " + std::to_string(std::uint64_t{1} << 30) + " bytes";
    } catch (...) {
        r = {};
    }
    return r;
}

const huge_page_size_read& huge_page_size_here() noexcept {
    static const huge_page_size_read read = read_huge_page_size("/sys");
    return read;
}

std::optional<std::size_t> huge_page_bytes_told() noexcept { return huge_page_size_here().bytes; }

std::size_t huge_page_bytes() noexcept { return huge_page_bytes_told().value_or(page_bytes()); }

std::string thp_setting(const char* name) noexcept {
    try {
        return active_choice(read_first_line(std::string(thp_dir) + name));
    } catch (...) {
        return {};
    }
}

std::string thp_mode() noexcept { return thp_setting("enabled"); }

std::vector<std::size_t> thp_unadvised_sizes(const std::string& enabled,
                                             const std::vector<std::pair<std::size_t, std::string>>& sizes,
                                             std::size_t pmd) {
    std::vector<std::size_t> out;
    if (sizes.empty()) {
        if (enabled == "always" && pmd != 0) out.push_back(pmd);
        return out;
    }
    for (const auto& [bytes, mode] : sizes)
        if (mode == "always" || (mode == "inherit" && enabled == "always")) out.push_back(bytes);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::pair<std::size_t, std::string>> thp_size_modes() noexcept {
    std::vector<std::pair<std::size_t, std::string>> sizes;
    try {
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(thp_dir, ec)) {
            // "hugepages-64kB": the kernel names each size in kB.
            const std::string name = entry.path().filename().string();
            constexpr std::string_view prefix = "hugepages-", suffix = "kB";
            if (!name.starts_with(prefix) || !name.ends_with(suffix)) continue;
            const std::string_view digits(name.data() + prefix.size(), name.size() - prefix.size() - suffix.size());
            std::size_t kb = 0;
            const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), kb);
            if (err != std::errc{} || end != digits.data() + digits.size() || kb == 0) continue;
            const std::string mode = thp_setting((name + "/enabled").c_str());
            if (!mode.empty()) sizes.emplace_back(kb << 10, mode);
        }
        std::sort(sizes.begin(), sizes.end());
    } catch (...) {
        sizes.clear();
    }
    return sizes;
}

std::string page_table_isolation() noexcept { return read_first_line("/sys/devices/system/cpu/vulnerabilities/meltdown"); }

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

std::optional<std::vector<unsigned>> node_cpus(unsigned node, const std::string& sys) {
    const std::string path = node_dir(sys, node) + "/cpulist";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    return kernel_list(read_first_line(path));
}

std::vector<std::pair<int, std::vector<unsigned>>> memory_tiers(const std::string& sys) {
    std::vector<std::pair<int, std::vector<unsigned>>> tiers;
    const std::string dir = sys + "/devices/virtual/memory_tiering";
    for (unsigned id : numbered_entries(dir, "memory_tier"))
        if (auto nodes = kernel_list(read_first_line(dir + "/memory_tier" + std::to_string(id) + "/nodelist")))
            tiers.emplace_back(static_cast<int>(id), std::move(*nodes));
    return tiers;
}

std::optional<node_access_class> node_access(unsigned node, unsigned access_class, const std::string& sys) {
    const std::string dir = node_dir(sys, node) + "/access" + std::to_string(access_class) + "/initiators";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
    node_access_class a;
    a.initiators = numbered_entries(dir, "node");
    a.read_bandwidth = number_file(dir + "/read_bandwidth").value_or(0);
    a.write_bandwidth = number_file(dir + "/write_bandwidth").value_or(0);
    a.read_latency = number_file(dir + "/read_latency").value_or(0);
    a.write_latency = number_file(dir + "/write_latency").value_or(0);
    return a;
}

std::vector<std::pair<unsigned, unsigned>> interleave_weights(const std::string& sys) {
    std::vector<std::pair<unsigned, unsigned>> weights;
    const std::string dir = sys + "/kernel/mm/mempolicy/weighted_interleave";
    for (unsigned node : numbered_entries(dir, "node"))
        if (const auto w = number_file(dir + "/node" + std::to_string(node)); w && *w <= 255)  // a u8 in the kernel
            weights.emplace_back(node, static_cast<unsigned>(*w));
    return weights;
}

namespace {
// sysfs booleans: "Y"/"N" (weighted_interleave/auto), "true"/"false" (demotion_enabled), "1"/"0".
std::optional<bool> bool_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    const std::string v = read_first_line(path);
    if (v == "Y" || v == "y" || v == "1" || v == "true") return true;
    if (v == "N" || v == "n" || v == "0" || v == "false") return false;
    return std::nullopt;
}
}  // namespace

std::optional<bool> interleave_auto(const std::string& sys) {
    const std::string dir = sys + "/kernel/mm/mempolicy/weighted_interleave/";
    if (auto v = bool_file(dir + "auto")) return v;
    // Kernels that define `auto` as a macro for C23 (`#define auto __auto_type`, 6.18 among
    // them) named the attribute after the expansion: this development host's 6.18.44 shows
    // weighted_interleave/__auto_type ("true"), and no "auto".
    return bool_file(dir + "__auto_type");
}

std::optional<bool> demotion_enabled(const std::string& sys) { return bool_file(sys + "/kernel/mm/numa/demotion_enabled"); }

}  // namespace ccnuma::detail
