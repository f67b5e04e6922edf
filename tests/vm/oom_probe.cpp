// Touches memory until the kernel's out-of-memory killer stops it, as a program sized for a
// larger machine does in a small guest: ccnuma-vm must say so, naming --mem-per-node (issue 32).
// Never run on the host: it is a guest test's command only.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main() {
    constexpr std::size_t chunk = std::size_t{1} << 20;
    for (std::size_t mib = 0; mib < (std::size_t{1} << 20); ++mib) {  // 1 TiB: beyond any guest
        void* p = std::malloc(chunk);
        if (p == nullptr) break;
        std::memset(p, 1, chunk);  // touched, so the pages exist
    }
    std::puts("no out-of-memory kill");
    return 0;
}
