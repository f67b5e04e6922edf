#pragma once
// The kernel file QEMU boots. Debian ships the kernel as a bzImage: QEMU then runs SeaBIOS's
// real-mode loader, and the guest decompresses itself, instruction by translated instruction.
// Under TCG that took about 2 s of a 2-node guest's 5 to 7 s from start to its command. The
// payload of the same bzImage, decompressed once into the cache, is the kernel's ELF image; a
// kernel built with CONFIG_PVH carries a PVH entry note in it, and QEMU enters it directly
// (-kernel with an ELF file), with the same command line, initramfs and ACPI tables.

#include <cstdint>
#include <string>

namespace tools::vm {

/// Where a bzImage keeps its compressed kernel, read from its setup header (boot protocol 2.08
/// and later: payload_offset and payload_length), and how to decompress it.
struct bzimage_payload {
    std::uint64_t offset = 0, length = 0;  ///< the compressed stream, without the size trailer
    std::uint64_t size = 0;                ///< the decompressed size the trailer names; 0 if none
    std::string program, package;          ///< the decompressor ("zstd") and its Debian package
};

/// Why a bzImage gives no ELF image to boot; `lasting` when the file itself is the reason (its
/// format, its payload's contents), so that the cache may remember it, and not when the cause
/// may pass (a file that cannot be read, a full disk, a decompressor that was killed).
struct no_pvh_kernel {
    std::string why;
    bool lasting = false;
};

/// The payload of the bzImage at `path`, or false and the reason (not a bzImage, an old boot
/// protocol, a format with no decompressor here, a truncated or unreadable file). Never throws
/// for a bad file.
bool find_payload(const std::string& path, bzimage_payload& payload, no_pvh_kernel& why);

/// Decompresses `payload` of the bzImage at `bzimage` with `program` (an executable path) into
/// `out`, through temporary files beside it (`out`.tmp-<pid>.*, removed on every path out) that
/// become `out` only once the result is a 64-bit ELF file of the size the trailer names, with a
/// PVH entry (the "Xen" note XEN_ELFNOTE_PHYS32_ENTRY). Returns an empty reason on success;
/// `out` is untouched otherwise.
no_pvh_kernel extract_pvh_kernel(const std::string& bzimage, const bzimage_payload& payload, const std::string& program,
                                 const std::string& out);

}  // namespace tools::vm
