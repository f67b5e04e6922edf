#include "kit.hpp"

#include "kernel_image.hpp"
#include "process.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace tools::vm {

namespace {

void note(bool progress, const std::string& line) {
    if (progress) std::fprintf(stderr, "ccnuma-vm: %s\n", line.c_str());
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// apt runs non-interactively; an update is done at most once per run, and only when a package
// is unknown, because a fresh container has empty package lists.
class apt {
public:
    explicit apt(bool progress) : progress_(progress) { ::setenv("DEBIAN_FRONTEND", "noninteractive", 1); }

    captured run(std::vector<std::string> argv, const std::string& cwd = {}) {
        captured r = capture(argv, cwd);
        if (r.status != 0 && !updated_ && ::geteuid() == 0) {
            note(progress_, "apt-get update (package lists look stale)");
            updated_ = true;
            const captured u = capture({"apt-get", "update", "-qq"});
            if (u.status != 0) throw failure(exit_setup, "apt-get update failed: " + last_line(u.err));
            r = capture(argv, cwd);
        }
        return r;
    }

private:
    bool progress_;
    bool updated_ = false;
};

std::string ensure_qemu(apt& a, bool progress) {
    std::string qemu = find_in_path("qemu-system-x86_64");
    if (!qemu.empty()) return qemu;
    if (::geteuid() != 0)
        throw failure(exit_setup,
                      "qemu-system-x86_64 is not installed and installing it needs root "
                      "(run: apt-get install --no-install-recommends qemu-system-x86)");
    note(progress, "installing qemu-system-x86 from Debian's packages");
    const captured r = a.run({"apt-get", "install", "-y", "-qq", "--no-install-recommends", "qemu-system-x86"});
    if (r.status != 0) throw failure(exit_setup, "apt-get install qemu-system-x86 failed: " + last_line(r.err));
    qemu = find_in_path("qemu-system-x86_64");
    if (qemu.empty()) throw failure(exit_setup, "qemu-system-x86 is installed but qemu-system-x86_64 is not in PATH");
    return qemu;
}

// The decompressor a bzImage's payload needs, installed like QEMU when it is missing and we are
// root; "" (and `why`) when it cannot be had, and the compressed kernel is booted instead. An
// offline machine is such a case: the bzImage still boots there.
std::string ensure_decompressor(apt& a, bool progress, const bzimage_payload& p, std::string& why) {
    std::string program = find_in_path(p.program);
    if (!program.empty()) return program;
    if (::geteuid() != 0) {
        why = p.program + " is not installed (apt-get install " + p.package + ")";
        return {};
    }
    note(progress, "installing " + p.package + " from Debian's packages");
    try {
        const captured r = a.run({"apt-get", "install", "-y", "-qq", "--no-install-recommends", p.package});
        program = find_in_path(p.program);
        if (program.empty()) why = "apt-get install " + p.package + " failed: " + last_line(r.err);
    } catch (const failure& e) {
        why = p.program + " is not installed, and installing " + p.package + " failed: " + e.what();
    }
    return program;
}

// Sets k.boot_kernel: the cached ELF image with a PVH entry, made on the first run from the
// bzImage (kernel_image.hpp), or the bzImage itself with the reason in k.boot_note. A reason
// in the kernel file itself (no PVH note, a payload that does not read) is recorded in
// vmlinux.none, so later runs do not decompress it again; one that may pass (no decompressor,
// a full disk) is not.
void prepare_boot_kernel(apt& a, bool progress, const fs::path& kdir, kit& k) {
    const fs::path pvh = kdir / "vmlinux", none = kdir / "vmlinux.none";
    k.boot_kernel = k.kernel;
    if (fs::exists(pvh)) {
        k.boot_kernel = pvh.string();
        return;
    }
    if (fs::exists(none)) {
        k.boot_note = read_file(none.string());
        while (!k.boot_note.empty() && k.boot_note.back() == '\n') k.boot_note.pop_back();
        note(progress, "booting the compressed kernel: " + k.boot_note);
        return;
    }
    // What a run killed while decompressing left (we hold the lock: nobody else is writing).
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(kdir, ec))
        if (e.path().filename().string().rfind("vmlinux.tmp-", 0) == 0) fs::remove(e.path(), ec);
    bzimage_payload p;
    no_pvh_kernel why;
    if (find_payload(k.kernel, p, why)) {
        const std::string program = ensure_decompressor(a, progress, p, why.why);
        if (!program.empty()) {
            note(progress, "decompressing " + k.kernel + " into " + pvh.string() + " for a direct (PVH) boot");
            why = extract_pvh_kernel(k.kernel, p, program, pvh.string());
        }
    }
    if (why.why.empty()) {
        k.boot_kernel = pvh.string();
        return;
    }
    k.boot_note = why.why;
    if (why.lasting) std::ofstream(none) << why.why << '\n';
    note(progress, "booting the compressed kernel: " + why.why);
}

// Downloads a package into `work` (no root needed) and unpacks it into work/root.
fs::path unpack(apt& a, const std::string& package, const fs::path& work) {
    fs::remove_all(work);
    fs::create_directories(work);
    // As root, apt would hand the download to the _apt user, who cannot write into the cache.
    std::vector<std::string> argv = {"apt-get", "download", "-q", package};
    if (::geteuid() == 0) argv.insert(argv.begin() + 1, {"-o", "APT::Sandbox::User=root"});
    const captured d = a.run(argv, work.string());
    if (d.status != 0) throw failure(exit_setup, "apt-get download " + package + " failed: " + last_line(d.err));
    fs::path deb;
    for (const auto& e : fs::directory_iterator(work))
        if (e.path().extension() == ".deb") deb = e.path();
    if (deb.empty()) throw failure(exit_setup, "apt-get download " + package + " left no .deb in " + work.string());
    const captured x = capture({"dpkg-deb", "-x", deb.string(), (work / "root").string()});
    if (x.status != 0) throw failure(exit_setup, "dpkg-deb -x " + deb.string() + " failed: " + last_line(x.err));
    return work / "root";
}

// The newest cloud kernel, chosen by the ABI in the package name (6.12.117+deb12 > 6.1.0-56),
// among the packages apt can actually install. Meta-packages (linux-image-cloud-amd64,
// linux-image-6.12-cloud-amd64), -dbg and -unsigned are skipped: they carry no vmlinuz or
// duplicate one.
std::pair<std::string, std::string> newest_kernel(apt& a) {
    static const std::regex name(R"(^linux-image-([0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+|\+[A-Za-z0-9.]+))-cloud-amd64$)");
    auto list = [&] {
        std::vector<std::pair<std::string, std::string>> found;  // abi, package
        const captured r = capture({"apt-cache", "pkgnames", "linux-image-"});
        std::istringstream in(r.out);
        std::string line;
        std::smatch m;
        while (std::getline(in, line))
            if (std::regex_match(line, m, name)) found.emplace_back(m[1].str(), line);
        return found;
    };
    auto found = list();
    if (found.empty() && ::geteuid() == 0) {
        (void)a.run({"apt-get", "update", "-qq"});
        found = list();
    }
    if (found.empty())
        throw failure(exit_setup,
                      "apt knows no linux-image-*-cloud-amd64 package (check /etc/apt/sources.list, then apt-get update)");
    std::sort(found.begin(), found.end(),
              [](const auto& x, const auto& y) { return ::strverscmp(x.first.c_str(), y.first.c_str()) > 0; });
    for (const auto& [abi, package] : found) {
        const captured show = capture({"apt-cache", "show", "--no-all-versions", package});
        const auto at = show.out.find("\nVersion: ");
        if (show.status != 0 || at == std::string::npos) continue;
        const auto end = show.out.find('\n', at + 10);
        return {package, show.out.substr(at + 10, end - at - 10)};
    }
    throw failure(exit_setup, "none of the " + std::to_string(found.size()) +
                                  " linux-image-*-cloud-amd64 packages apt lists can be installed");
}

}  // namespace

std::string cache_directory() {
    if (const char* c = std::getenv("CCNUMA_VM_CACHE"); c && *c) return c;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ccnuma-vm";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/ccnuma-vm";
    return "/tmp/ccnuma-vm-" + std::to_string(::getuid());
}

kit prepare_kit(bool progress) {
    kit k;
    k.cache_dir = cache_directory();
    const fs::path dir = k.cache_dir;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw failure(exit_setup, "cannot create the cache directory " + dir.string() + ": " + ec.message());

    // One installer at a time: ctest may start several guests at once on a fresh machine.
    const int lock = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0)
        throw failure(exit_setup, "cannot lock " + (dir / ".lock").string() + ": " + std::strerror(errno));
    struct unlock {
        int fd;
        ~unlock() { ::close(fd); }
    } guard{lock};

    apt a(progress);
    k.qemu = ensure_qemu(a, progress);

    k.busybox = (dir / "busybox").string();
    if (!fs::exists(k.busybox)) {
        note(progress, "unpacking busybox-static into " + dir.string());
        const fs::path root = unpack(a, "busybox-static", dir / "tmp-busybox");
        fs::rename(root / "bin" / "busybox", k.busybox);
        fs::remove_all(dir / "tmp-busybox");
    }

    const fs::path kdir = dir / "kernel";
    k.kernel = (kdir / "vmlinuz").string();
    if (!fs::exists(k.kernel) || !fs::exists(kdir / "package")) {
        const auto [package, version] = newest_kernel(a);
        note(progress, "unpacking " + package + " " + version + " into " + kdir.string());
        const fs::path root = unpack(a, package, dir / "tmp-kernel");
        fs::path vmlinuz, config;
        for (const auto& e : fs::directory_iterator(root / "boot")) {
            const auto name = e.path().filename().string();
            if (name.rfind("vmlinuz-", 0) == 0) vmlinuz = e.path();
            if (name.rfind("config-", 0) == 0) config = e.path();
        }
        if (vmlinuz.empty()) throw failure(exit_setup, package + " contains no /boot/vmlinuz-*");
        if (!config.empty() && read_file(config.string()).find("\nCONFIG_NUMA=y\n") == std::string::npos)
            throw failure(exit_setup, package + " is built without CONFIG_NUMA, so it cannot emulate NUMA nodes");
        fs::remove_all(kdir);
        fs::create_directories(kdir);
        if (!config.empty()) fs::rename(config, kdir / "config");
        fs::rename(vmlinuz, k.kernel);
        std::ofstream(kdir / "package") << package << ' ' << version << '\n';
        fs::remove_all(dir / "tmp-kernel");
    }
    k.kernel_package = read_file((kdir / "package").string());
    while (!k.kernel_package.empty() && k.kernel_package.back() == '\n') k.kernel_package.pop_back();
    prepare_boot_kernel(a, progress, kdir, k);
    return k;
}

}  // namespace tools::vm
