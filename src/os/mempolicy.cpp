// The memory-policy calls: mbind, set_mempolicy, get_mempolicy (see os.hpp).

#include "os.hpp"

#include "../list_internal.hpp"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
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

}  // namespace

std::vector<unsigned> allowed_memory_nodes() {
    node_mask m(max_node_bits / bits_per_word, 0);
    int mode = 0;
    if (::syscall(SYS_get_mempolicy, &mode, m.data(), syscall_max_node, nullptr, MPOL_F_MEMS_ALLOWED) == 0)
        return nodes_of(m);
    // No memory-policy calls (a kernel without CONFIG_NUMA): the kernel's online nodes.
    constexpr const char* online_path = "/sys/devices/system/node/online";
    try {
        std::ifstream in(online_path);
        std::string online;
        if (std::getline(in, online) && !online.empty())
            return parse_list(online, 0, online_path, "a list such as 0-3");
    } catch (...) {
    }
    return {0};
}

bool has_mempolicy() noexcept {
    int mode = 0;
    return ::syscall(SYS_get_mempolicy, &mode, nullptr, 0, nullptr, 0) == 0;
}

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

int next_interleave_node(int& node) {
    return ::syscall(SYS_get_mempolicy, &node, nullptr, 0, nullptr, MPOL_F_NODE) == 0 ? 0 : errno;
}

}  // namespace ccnuma::detail
