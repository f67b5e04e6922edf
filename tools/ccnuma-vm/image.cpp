#include "image.hpp"

#include "process.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace tools::vm {

namespace {

constexpr int max_link_depth = 40;  // as the kernel's MAXSYMLINKS

std::string normal(const std::string& p) {
    std::string s = fs::path(p).lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

std::string parent_of(const std::string& p) {
    const auto slash = p.find_last_of('/');
    return slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
}

std::string base_of(const std::string& p) { return p.substr(p.find_last_of('/') + 1); }

std::string join(const std::string& dir, const std::string& name) {
    return normal(name.starts_with('/') ? name : (dir == "/" ? "/" + name : dir + "/" + name));
}

struct host_entry {
    struct stat st {};
    std::string link;
};

host_entry inspect(const std::string& path) {
    host_entry e;
    if (::lstat(path.c_str(), &e.st) != 0) throw failure(exit_not_found, path + ": " + std::strerror(errno));
    if (S_ISLNK(e.st.st_mode)) {
        std::string buf(4096, '\0');
        const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
        if (n < 0) throw failure(exit_setup, "cannot read the symlink " + path + ": " + std::strerror(errno));
        e.link.assign(buf.data(), static_cast<std::size_t>(n));
    }
    return e;
}

// Makes sure the guest has a directory at `path` that resolves as on the host, and returns the
// path it resolves to. Each symlink met on the way is added as a symlink.
template <class AddDir, class AddLink>
std::string mirror_directory(const std::string& path, int depth, AddDir&& add_dir, AddLink&& add_link) {
    if (depth > max_link_depth) throw failure(exit_setup, "too many levels of symlinks at " + path);
    std::string cur = "/";
    std::size_t pos = 1;
    while (pos < path.size()) {
        std::size_t end = path.find('/', pos);
        if (end == std::string::npos) end = path.size();
        const std::string next = join(cur, path.substr(pos, end - pos));
        pos = end + 1;
        const host_entry e = inspect(next);
        if (S_ISLNK(e.st.st_mode)) {
            add_link(next, e.link);
            cur = mirror_directory(join(cur, e.link), depth + 1, add_dir, add_link);
        } else if (S_ISDIR(e.st.st_mode)) {
            add_dir(next, e.st.st_mode & 07777);
            cur = next;
        } else {
            throw failure(exit_setup, next + " is not a directory");
        }
    }
    return cur;
}

void put_hex(std::string& out, std::uint64_t v) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08llX", static_cast<unsigned long long>(v & 0xffffffffu));
    out.append(buf, 8);
}

}  // namespace

bool initramfs::seen(const std::string& path) { return !paths_.insert(path).second; }

void initramfs::add_parents(const std::string& guest_path) {
    const std::string parent = parent_of(guest_path);
    if (parent != "/") add_directory(parent);
}

void initramfs::add_directory(const std::string& guest_path) {
    const std::string p = normal(guest_path);
    if (p == "/" || paths_.count(p)) return;
    add_parents(p);
    seen(p);
    entries_.push_back({p.substr(1), S_IFDIR | 0755, {}, {}});
}

void initramfs::add_bytes(const std::string& guest_path, std::string content, unsigned mode) {
    const std::string p = normal(guest_path);
    add_parents(p);
    if (seen(p)) return;
    payload_ += content.size();
    entries_.push_back({p.substr(1), S_IFREG | mode, std::move(content), {}});
}

void initramfs::add_host_file_as(const std::string& guest_path, const std::string& host_path, unsigned mode) {
    const std::string p = normal(guest_path);
    struct stat st {};
    if (::stat(host_path.c_str(), &st) != 0) throw failure(exit_setup, host_path + ": " + std::strerror(errno));
    add_parents(p);
    if (seen(p)) return;
    payload_ += static_cast<std::uint64_t>(st.st_size);
    entries_.push_back({p.substr(1), S_IFREG | mode, {}, host_path});
}

void initramfs::add_host_path(const std::string& host_path) { add_tree(normal(host_path), 0); }

void initramfs::dir_entry(const std::string& p, unsigned mode) {
    if (!seen(p)) entries_.push_back({p.substr(1), S_IFDIR | mode, {}, {}});
}

void initramfs::link_entry(const std::string& p, const std::string& target) {
    if (!seen(p)) entries_.push_back({p.substr(1), S_IFLNK | 0777, target, {}});
}

void initramfs::mirror_host_directory(const std::string& host_path) {
    mirror_directory(
        normal(host_path), 0, [this](const std::string& p, unsigned mode) { dir_entry(p, mode); },
        [this](const std::string& p, const std::string& target) { link_entry(p, target); });
}

void initramfs::add_tree(const std::string& path, int depth) {
    if (depth > max_link_depth) throw failure(exit_setup, "too many levels of symlinks at " + path);
    auto add_dir = [this](const std::string& p, unsigned mode) { dir_entry(p, mode); };
    auto add_link = [this](const std::string& p, const std::string& target) { link_entry(p, target); };
    const std::string dir = mirror_directory(parent_of(path), 0, add_dir, add_link);
    const std::string real = join(dir, base_of(path));
    const host_entry e = inspect(real);
    if (S_ISLNK(e.st.st_mode)) {
        add_link(real, e.link);
        add_tree(join(dir, e.link), depth + 1);
    } else if (S_ISDIR(e.st.st_mode)) {
        add_dir(real, e.st.st_mode & 07777);
        for (const auto& child : fs::directory_iterator(real)) {
            const auto s = child.symlink_status().type();
            if (s == fs::file_type::regular || s == fs::file_type::directory || s == fs::file_type::symlink)
                add_tree(child.path().string(), depth);
        }
    } else if (S_ISREG(e.st.st_mode)) {
        if (seen(real)) return;
        payload_ += static_cast<std::uint64_t>(e.st.st_size);
        entries_.push_back({real.substr(1), S_IFREG | (e.st.st_mode & 07777), {}, real});
        if (!elf_done_.insert(real).second) return;
        if (is_elf(real)) {
            for (const auto& lib : shared_libraries(real)) add_tree(normal(lib), 0);
        } else if (const std::string interpreter = script_interpreter(real); !interpreter.empty()) {
            // A script brings its interpreter (and, if that is ELF, its libraries), not the
            // interpreter's modules: those go in with --copy.
            if (::access(interpreter.c_str(), X_OK) != 0)
                throw failure(exit_not_found, real + " is a script for " + interpreter + ", which is not on this host");
            add_tree(interpreter, 0);
        }
    } else {
        throw failure(exit_setup, real + " is not a regular file, directory or symlink");
    }
}

void initramfs::write(const std::string& file) const {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out) throw failure(exit_setup, "cannot write the guest image " + file + ": " + std::strerror(errno));
    std::uint64_t ino = 1;
    auto record = [&](const std::string& name, unsigned mode, std::uint64_t size) {
        std::string h = "070701";
        for (std::uint64_t v : {ino++, std::uint64_t{mode}, std::uint64_t{0}, std::uint64_t{0},
                                std::uint64_t{S_ISDIR(mode) ? 2u : 1u}, std::uint64_t{0}, size, std::uint64_t{0},
                                std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{name.size() + 1},
                                std::uint64_t{0}})
            put_hex(h, v);
        h += name;
        h.push_back('\0');
        h.resize((h.size() + 3) & ~std::size_t{3}, '\0');  // newc pads header+name to 4 bytes
        out.write(h.data(), static_cast<std::streamsize>(h.size()));
    };
    auto pad = [&](std::uint64_t size) {
        static const char zeros[4] = {};
        out.write(zeros, static_cast<std::streamsize>((4 - size % 4) % 4));
    };
    for (const auto& e : entries_) {
        if (!e.host.empty()) {
            std::ifstream in(e.host, std::ios::binary);
            if (!in) throw failure(exit_setup, "cannot read " + e.host + ": " + std::strerror(errno));
            std::stringstream content;
            content << in.rdbuf();
            const std::string data = content.str();
            if (data.size() > 0xffffffffu) throw failure(exit_setup, e.host + " is larger than 4 GiB, the cpio limit");
            record(e.path, e.mode, data.size());
            out.write(data.data(), static_cast<std::streamsize>(data.size()));
            pad(data.size());
        } else {
            record(e.path, e.mode, e.data.size());
            out.write(e.data.data(), static_cast<std::streamsize>(e.data.size()));
            pad(e.data.size());
        }
    }
    record("TRAILER!!!", 0, 0);
    out.flush();
    if (!out) throw failure(exit_setup, "cannot write the guest image " + file + ": " + std::strerror(errno));
}

std::string script_interpreter(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    if (!std::getline(in, line) || line.rfind("#!", 0) != 0) return {};
    const auto begin = line.find_first_not_of(" \t", 2);
    if (begin == std::string::npos) return {};
    const auto end = line.find_first_of(" \t\r", begin);
    return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

bool is_elf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

std::vector<std::string> shared_libraries(const std::string& elf) {
    const captured r = capture({"ldd", elf});
    std::vector<std::string> libs;
    if (r.status != 0) return libs;  // static, or not an executable/shared object of this host
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        // "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x...)", "\t/lib64/ld-linux-x86-64.so.2 (0x...)",
        // "\tlinux-vdso.so.1 (0x...)" (in the kernel, nothing to copy), "\tlibfoo.so => not found".
        const auto arrow = line.find(" => ");
        std::string path;
        if (arrow != std::string::npos) {
            path = line.substr(arrow + 4);
            if (path.rfind("not found", 0) == 0) {
                const auto name = line.substr(line.find_first_not_of(" \t"), arrow - line.find_first_not_of(" \t"));
                throw failure(exit_not_found, elf + " needs " + name + ", which the host's dynamic loader cannot find");
            }
        } else {
            path = line.substr(line.find_first_not_of(" \t") == std::string::npos ? line.size()
                                                                                    : line.find_first_not_of(" \t"));
        }
        path = path.substr(0, path.find(" ("));
        if (path.starts_with('/')) libs.push_back(path);
    }
    return libs;
}

}  // namespace tools::vm
