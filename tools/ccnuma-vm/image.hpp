#pragma once
// The guest's root file system: an uncompressed initramfs (cpio "newc") holding busybox, /init,
// the command, its shared libraries and every --copy path, each at its host path. Host symlinks
// (/lib -> usr/lib on merged-/usr Debian, libfoo.so.1 -> libfoo.so.1.2.3) are reproduced, so the
// dynamic loader and $ORIGIN resolve inside the guest exactly as on the host. Uncompressed
// because unpacking gzip under TCG costs more than reading the larger image.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tools::vm {

class initramfs {
public:
    /// A directory and its parents.
    void add_directory(const std::string& guest_path);
    /// `content` stored at guest_path (an absolute path).
    void add_bytes(const std::string& guest_path, std::string content, unsigned mode);
    /// The host file at host_path, stored at guest_path.
    void add_host_file_as(const std::string& guest_path, const std::string& host_path, unsigned mode);
    /// The host path at the same guest path, with symlinks along the way reproduced. Directories
    /// are added with their whole content. ELF files bring their shared libraries (see
    /// shared_libraries()), scripts their "#!" interpreter. Throws failure if a path does not exist.
    void add_host_path(const std::string& host_path);
    /// A directory at the host path, resolving as on the host (for /lib -> usr/lib), without its
    /// content.
    void mirror_host_directory(const std::string& host_path);
    /// Writes the archive; throws failure on I/O errors.
    void write(const std::string& file) const;

    std::uint64_t payload_bytes() const noexcept { return payload_; }
    std::size_t entries() const noexcept { return entries_.size(); }

private:
    struct entry {
        std::string path;  // without the leading '/'
        unsigned mode;     // type and permission bits
        std::string data;  // symlink target or inline content
        std::string host;  // host file to copy, when not inline
    };
    void add_parents(const std::string& guest_path);
    void add_tree(const std::string& host_path, int depth);
    void dir_entry(const std::string& path, unsigned mode);
    void link_entry(const std::string& path, const std::string& target);
    bool seen(const std::string& path);

    std::vector<entry> entries_;
    std::set<std::string> paths_;
    std::set<std::string> elf_done_;
    std::uint64_t payload_ = 0;
};

/// The shared libraries an ELF file needs, including the dynamic loader, as `ldd` resolves them
/// on this host (so RUNPATH, $ORIGIN and LD_LIBRARY_PATH count). Empty for static executables
/// and non-ELF files. Throws failure naming the library if one is not found.
std::vector<std::string> shared_libraries(const std::string& elf);

/// The interpreter of a "#!" script ("/usr/bin/python3" for "#!/usr/bin/python3 -u"), or "".
std::string script_interpreter(const std::string& path);

/// True if the file starts with the ELF magic.
bool is_elf(const std::string& path);

}  // namespace tools::vm
