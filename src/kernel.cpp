// The syscall layer (see kernel.hpp): NUMA system calls and the sysfs/procfs reads.

#include "kernel.hpp"

#include <ccnuma/topology.hpp>

#include <linux/mempolicy.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

namespace ccnuma::detail {

namespace {

// Node masks as mbind, set_mempolicy and get_mempolicy take them: MAX_NUMNODES bits (1024 on
// Debian's kernels), one bit per OS node index.
constexpr unsigned long max_node_bits = 1024;
// The maxnode argument for such a mask: the kernel reads one bit fewer than it is told (a
// historical off-by-one that libnuma compensates for the same way).
constexpr unsigned long syscall_max_node = max_node_bits + 1;
constexpr std::size_t bits_per_word = 8 * sizeof(unsigned long);
using node_mask = std::vector<unsigned long>;

// The mask of `nodes`; nodes at or above max_node_bits are left out.
node_mask mask_of(const std::vector<unsigned>& nodes) {
    node_mask m(max_node_bits / bits_per_word, 0);
    for (unsigned n : nodes)
        if (n < max_node_bits) m[n / bits_per_word] |= 1ul << (n % bits_per_word);
    return m;
}

// The nodes of a mask, ascending.
std::vector<unsigned> nodes_of(const node_mask& m) {
    std::vector<unsigned> nodes;
    for (unsigned n = 0; n < max_node_bits && n / bits_per_word < m.size(); ++n)
        if (m[n / bits_per_word] & (1ul << (n % bits_per_word))) nodes.push_back(n);
    return nodes;
}

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

std::size_t huge_page_bytes() noexcept { return huge_page_bytes_told().value_or(std::size_t{2} << 20); }

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
        std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/meminfo");
        const std::string field = std::string(key) + ":";
        std::string line;
        // "Node 0 MemFree:        12345678 kB"
        while (std::getline(in, line)) {
            const auto at = line.find(field);
            if (at == std::string::npos) continue;
            std::istringstream value(line.substr(at + field.size()));
            std::uint64_t kb = 0;
            if (value >> kb) return kb * 1024;
        }
    } catch (...) {
    }
    return std::nullopt;
}

std::vector<unsigned> allowed_memory_nodes() {
    node_mask m(max_node_bits / bits_per_word, 0);
    int mode = 0;
    if (::syscall(SYS_get_mempolicy, &mode, m.data(), syscall_max_node, nullptr, MPOL_F_MEMS_ALLOWED) == 0)
        return nodes_of(m);
    // No memory-policy calls (a kernel without CONFIG_NUMA): the kernel's online nodes.
    try {
        const std::string online = read_first_line("/sys/devices/system/node/online");
        if (!online.empty()) return ccnuma::parse_list(online, "/sys/devices/system/node/online");
    } catch (...) {
    }
    return {0};
}

bool has_mempolicy() noexcept {
    int mode = 0;
    return ::syscall(SYS_get_mempolicy, &mode, nullptr, 0, nullptr, 0) == 0;
}

bool has_move_pages() noexcept { return ::syscall(SYS_move_pages, 0, 0, nullptr, nullptr, nullptr, 0) == 0; }

int mbind_range(void* addr, std::size_t len, int mode, const std::vector<unsigned>& nodes, unsigned flags) {
    if (len == 0) return 0;
    const node_mask m = mask_of(nodes);
    const long rc = ::syscall(SYS_mbind, addr, len, mode, nodes.empty() ? nullptr : m.data(),
                              nodes.empty() ? 0 : syscall_max_node, flags);
    return rc == 0 ? 0 : errno;
}

int set_thread_policy(int mode, const std::vector<unsigned>& nodes) {
    const node_mask m = mask_of(nodes);
    const bool none = nodes.empty();
    return ::syscall(SYS_set_mempolicy, mode, none ? nullptr : m.data(), none ? 0 : syscall_max_node) == 0 ? 0
                                                                                                          : errno;
}

int get_thread_policy(int& mode, std::vector<unsigned>& nodes) {
    node_mask m(max_node_bits / bits_per_word, 0);
    if (::syscall(SYS_get_mempolicy, &mode, m.data(), syscall_max_node, nullptr, 0) != 0) return errno;
    nodes = nodes_of(m);
    return 0;
}

int move_pages(std::size_t count, void** pages, const int* to, int* status, int flags, std::size_t* not_migrated) {
    const long rc = ::syscall(SYS_move_pages, 0, count, pages, to, status, flags);
    if (rc < 0) return errno;
    if (not_migrated) *not_migrated = static_cast<std::size_t>(rc);
    return 0;
}

std::optional<std::size_t> thread_rlimit() noexcept {
    rlimit r{};
    if (::getuid() == 0 || ::getrlimit(RLIMIT_NPROC, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<std::size_t>(r.rlim_cur);
}

}  // namespace ccnuma::detail
