// Runs one AVX-512 instruction, as a program built with -march=native on an AVX-512 host does
// early on. QEMU's TCG CPU (-cpu max) has no AVX-512, so inside ccnuma-vm this dies of SIGILL,
// which ccnuma-vm must explain (issue 17).

#include <cstdio>

int main() {
    // GNU as assembles the instruction whatever -march says, so the probe builds on any host.
    asm volatile("vpxord %%zmm0, %%zmm0, %%zmm0" ::: "xmm0");
    std::puts("no SIGILL: this CPU has AVX-512");
    return 0;
}
