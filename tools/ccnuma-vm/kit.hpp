#pragma once
// What ccnuma-vm needs to boot a guest: QEMU, a Debian cloud kernel and a static busybox.
// Installed from Debian's packages on first use; the kernel and busybox are unpacked into a
// cache directory, so later runs start at once and need no root.

#include <string>

namespace tools::vm {

struct kit {
    std::string cache_dir;
    std::string qemu;            ///< qemu-system-x86_64
    std::string kernel;          ///< vmlinuz in the cache
    std::string boot_kernel;     ///< what QEMU boots: kernel/vmlinux (PVH entry), else `kernel`
    std::string boot_note;       ///< why `kernel` is booted, when it is (kernel_image.hpp)
    std::string kernel_package;  ///< e.g. linux-image-6.12.117+deb12-cloud-amd64 6.12.117-1~deb12u1
    std::string busybox;         ///< static busybox in the cache
};

/// $CCNUMA_VM_CACHE, else $XDG_CACHE_HOME/ccnuma-vm, else $HOME/.cache/ccnuma-vm.
std::string cache_directory();

/// Finds or installs everything (holding a lock on the cache, so that concurrent first runs
/// install once). `progress` reports the installation steps on stderr. Throws failure.
kit prepare_kit(bool progress);

}  // namespace tools::vm
