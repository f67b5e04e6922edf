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

/// The payload of the bzImage at `path`, or a reason why it has none that can be read (not a
/// bzImage, an old boot protocol, a format with no decompressor here, a truncated file).
/// Never throws for a bad file: the reason is returned in `why` and the result is empty.
bool find_payload(const std::string& path, bzimage_payload& payload, std::string& why);

/// Decompresses `payload` of the bzImage at `bzimage` with `program` (an executable path) into
/// `out`, through a temporary file beside it that is renamed only once the result is a 64-bit
/// ELF file of the size the trailer names, with a PVH entry (the "Xen" note
/// XEN_ELFNOTE_PHYS32_ENTRY). Returns "" on success, else the reason; `out` is then untouched.
std::string extract_pvh_kernel(const std::string& bzimage, const bzimage_payload& payload, const std::string& program,
                               const std::string& out);

}  // namespace tools::vm
