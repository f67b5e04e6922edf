#include "kernel_image.hpp"

#include "../common/elf.hpp"
#include "process.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <utility>

namespace tools::vm {

namespace {

// The setup header's fields (Documentation/arch/x86/boot.rst), as offsets into the file.
constexpr std::size_t setup_sects_at = 0x1f1, header_magic_at = 0x202, version_at = 0x206;
constexpr std::size_t payload_offset_at = 0x248, payload_length_at = 0x24c;
constexpr std::uint16_t first_version_with_payload = 0x0208;
// XEN_ELFNOTE_PHYS32_ENTRY (xen/include/public/elfnote.h): the 32-bit entry point QEMU's PVH
// boot jumps to.
constexpr std::uint32_t xen_elfnote_phys32_entry = 18;

std::uint64_t le(const std::string& b, std::size_t at, std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(b[at + i])} << (8 * i);
    return v;
}

struct format {
    std::string_view magic, name, program, package;
    bool size_trailer;  // the kernel's build appends the decompressed size (size_append)
};

// The compressions x86 kernels are built with that Debian's tools decompress. gzip has its own
// size field, so the build appends none (arch/x86/boot/compressed/Makefile).
constexpr std::array<format, 3> formats{{
    {std::string_view("\x28\xb5\x2f\xfd", 4), "zstd", "zstd", "zstd", true},
    {std::string_view("\xfd" "7zXZ\0", 6), "xz", "xz", "xz-utils", true},
    {std::string_view("\x1f\x8b", 2), "gzip", "gzip", "gzip", false},
}};

// Writes `bytes` to a new file at `path` (O_EXCL, no link followed); false with `why` set on any
// error, the partial file then removed.
bool write_new(const std::string& path, std::string_view bytes, std::string& why) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        why = "cannot create " + path + ": " + std::strerror(errno);
        return false;
    }
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            why = "cannot write " + path + ": " + std::strerror(errno);
            ::close(fd);
            ::unlink(path.c_str());
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::close(fd) != 0) {
        why = "cannot write " + path + ": " + std::strerror(errno);
        ::unlink(path.c_str());
        return false;
    }
    return true;
}

}  // namespace

bool find_payload(const std::string& path, bzimage_payload& payload, no_pvh_kernel& why) {
    const auto lasting = [&](std::string reason) {
        why = {std::move(reason), true};
        return false;
    };
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        why = {"cannot open " + path + ": " + std::strerror(errno), false};
        return false;
    }
    std::string head(payload_length_at + 4, '\0');
    if (!in.read(head.data(), static_cast<std::streamsize>(head.size())))
        return lasting(path + " is too short for a bzImage setup header");
    if (head.compare(header_magic_at, 4, "HdrS") != 0)
        return lasting(path + " has no bzImage setup header (no \"HdrS\" at 0x202)");
    const auto version = static_cast<std::uint16_t>(le(head, version_at, 2));
    if (version < first_version_with_payload) {
        char v[16];
        std::snprintf(v, sizeof v, "%u.%02u", version >> 8, version & 0xffu);
        return lasting(path + " uses boot protocol " + v + ", which does not locate its payload (2.08 and later do)");
    }
    // setup_sects 0 means 4 (boot.rst); the protected-mode code follows the setup sectors.
    const std::uint64_t sects = static_cast<unsigned char>(head[setup_sects_at]);
    const std::uint64_t offset = le(head, payload_offset_at, 4), length = le(head, payload_length_at, 4);
    if (offset == 0 || length == 0) return lasting(path + ": its setup header names no payload");
    const std::uint64_t start = ((sects == 0 ? 4 : sects) + 1) * 512 + offset;
    in.seekg(0, std::ios::end);
    const auto file_size = static_cast<std::uint64_t>(in.tellg());
    if (length < 8 || start > file_size || length > file_size - start)
        return lasting(path + ": its payload (" + std::to_string(length) + " bytes at " + std::to_string(start) +
                       ") does not lie inside the file (" + std::to_string(file_size) + " bytes)");
    std::string magic(6, '\0');
    in.seekg(static_cast<std::streamoff>(start));
    in.read(magic.data(), static_cast<std::streamsize>(magic.size()));
    for (const format& f : formats) {
        if (magic.compare(0, f.magic.size(), f.magic) != 0) continue;
        payload.offset = start;
        payload.length = f.size_trailer ? length - 4 : length;
        payload.size = 0;
        if (f.size_trailer) {
            std::string trailer(4, '\0');
            in.seekg(static_cast<std::streamoff>(start + length - 4));
            in.read(trailer.data(), 4);
            payload.size = le(trailer, 0, 4);
        }
        payload.program = f.program;
        payload.package = f.package;
        return true;
    }
    return lasting(path + ": its payload is in a compression ccnuma-vm does not decompress (zstd, xz and gzip it does)");
}

no_pvh_kernel extract_pvh_kernel(const std::string& bzimage, const bzimage_payload& payload, const std::string& program,
                                 const std::string& out) {
    std::string compressed(payload.length, '\0');
    {
        std::ifstream in(bzimage, std::ios::binary);
        in.seekg(static_cast<std::streamoff>(payload.offset));
        if (!in.read(compressed.data(), static_cast<std::streamsize>(compressed.size())))
            return {"cannot read the payload of " + bzimage, false};
    }
    // Temporary names beside `out`, unique to this process (the kit's lock serializes runs, and
    // removes what a killed run left); gone on every path out of here, exceptions included.
    const std::string stem = out + ".tmp-" + std::to_string(::getpid());
    struct temporary {
        std::string path;
        ~temporary() { ::unlink(path.c_str()); }
    } packed{stem + ".payload"}, unpacked{stem + ".elf"};
    std::string why;
    if (!write_new(packed.path, compressed, why)) return {why, false};
    compressed.clear();
    compressed.shrink_to_fit();
    const captured d = capture({program, "-d", "-c", "-q", packed.path});
    if (d.status != 0) {
        // A status from 128 up is a signal (the OOM killer, a timeout): that may pass.
        const std::string said = last_line(d.err);
        return {program + " could not decompress the payload of " + bzimage + " (status " + std::to_string(d.status) +
                    (said.empty() ? ")" : "): " + said),
                d.status < 128};
    }
    if (d.out.size() < SELFMAG || d.out.compare(0, SELFMAG, ELFMAG) != 0)
        return {"the payload of " + bzimage + " is not an ELF file", true};
    if (payload.size != 0 && d.out.size() != payload.size)
        return {"the payload of " + bzimage + " decompressed to " + std::to_string(d.out.size()) +
                    " bytes, where its trailer names " + std::to_string(payload.size),
                true};
    if (!write_new(unpacked.path, d.out, why)) return {why, false};
    if (!elf_has_note(unpacked.path, "Xen", xen_elfnote_phys32_entry))
        return {"the kernel in " + bzimage + " has no PVH entry note (it is built without CONFIG_PVH)", true};
    if (::rename(unpacked.path.c_str(), out.c_str()) != 0)
        return {"cannot rename " + unpacked.path + " to " + out + ": " + std::strerror(errno), false};
    return {};
}

}  // namespace tools::vm
