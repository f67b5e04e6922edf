#pragma once
// Output files written the way coreutils writes them (sort -o, install): the text goes to a
// temporary file in the target's directory, which is written, fsync'd and closed with every
// error checked, and then renamed over the target. A failed or interrupted run leaves the old
// file as it was and no temporary file beside it. A target that exists and is not a regular
// file (/dev/full, /dev/stdout, a FIFO) cannot be replaced by a rename: it is written in place,
// and its write and close errors are checked (/dev/full fails with ENOSPC).
//
//     tools::check_output(path, "JSON");                 // before the run: fail early
//     tools::write_outputs({{path, text, "JSON"}, ...});  // after it: all or none replaced

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tools {

namespace detail {

/// What a path names once its symbolic links are followed: the file a write reaches. A path that
/// does not exist yet is its directory's real path plus its last component.
inline std::string resolved(const std::string& path) {
    if (char* real = realpath(path.c_str(), nullptr)) {
        std::string out = real;
        std::free(real);
        return out;
    }
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (char* real = realpath(dir.c_str(), nullptr)) {
        std::string out = real;
        std::free(real);
        return (out == "/" ? "" : out) + "/" + base;
    }
    return path;
}

inline std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] inline void cannot(const std::string& what, const std::string& path, const std::string& why) {
    throw std::runtime_error("cannot write the " + what + " file \"" + path + "\": " + why);
}

// The temporary files that exist right now, for the signal handler: fixed buffers, so that it
// touches no allocator. Only the commit window (write_outputs) has any.
constexpr int max_temps = 8;
inline char temp_names[max_temps][PATH_MAX];
inline volatile sig_atomic_t temp_count = 0;

inline void remove_temps_and_reraise(int sig) {
    for (int i = 0; i < temp_count; ++i) unlink(temp_names[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

/// Removes the temporary files on SIGINT, SIGTERM and SIGHUP while it lives, then dies of the
/// signal as before; restores the previous handlers.
class temp_guard {
public:
    temp_guard() {
        struct sigaction sa {};
        sa.sa_handler = remove_temps_and_reraise;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < 3; ++i) {
            sigaction(signals_[i], nullptr, &old_[i]);
            // An ignored signal (nohup, a background job of a script) stays ignored.
            if (old_[i].sa_handler != SIG_IGN) sigaction(signals_[i], &sa, nullptr);
        }
    }
    ~temp_guard() {
        for (int i = 0; i < 3; ++i) sigaction(signals_[i], &old_[i], nullptr);
        temp_count = 0;
    }
    temp_guard(const temp_guard&) = delete;
    temp_guard& operator=(const temp_guard&) = delete;

private:
    const int signals_[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction old_[3] {};
};

inline void write_all(int fd, const std::string& text, const std::string& what, const std::string& path) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t k = ::write(fd, text.data() + done, text.size() - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) cannot(what, path, k < 0 ? std::strerror(errno) : "nothing written");
        done += static_cast<std::size_t>(k);
    }
}

}  // namespace detail

/// Whether two output paths reach the same file: the same device and inode where both exist,
/// else the same path once symbolic links and "." and ".." are resolved.
inline bool same_file(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return detail::resolved(a) == detail::resolved(b);
}

/// Throws std::runtime_error naming `what` ("JSON") and the path when the run could not write
/// it: a directory, a missing or unwritable directory, an unwritable existing file. Creates and
/// removes a temporary file in the target's directory, the way write_outputs will.
inline void check_output(const std::string& path, const std::string& what) {
    const std::string target = detail::resolved(path);
    struct stat st {};
    if (stat(target.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) detail::cannot(what, path, "it is a directory");
        if (!S_ISREG(st.st_mode)) {
            if (access(target.c_str(), W_OK) != 0) detail::cannot(what, path, std::strerror(errno));
            return;
        }
    }
    const std::string temp = detail::directory_of(target) + "/.ccnuma-check-XXXXXX";
    if (temp.size() >= PATH_MAX) detail::cannot(what, path, "the path is too long");
    detail::temp_guard guard;  // a signal right now removes the probe too
    std::strcpy(detail::temp_names[0], temp.c_str());
    detail::temp_count = 1;
    const int fd = mkstemp(detail::temp_names[0]);
    if (fd < 0) {
        const int err = errno;
        detail::temp_count = 0;
        detail::cannot(what, path, std::strerror(err));
    }
    close(fd);
    unlink(detail::temp_names[0]);
    detail::temp_count = 0;
}

struct output {
    std::string path, text, what;  ///< what: "JSON", "CSV": names the file in errors
};

/// Writes every output with a path (an empty path is skipped). Regular files and new ones go
/// through a temporary file each, all written and checked before the first rename; a target
/// that is not a regular file is written in place. Throws std::runtime_error naming the file and
/// the reason; then no temporary file is left and no regular target was touched.
inline void write_outputs(const std::vector<output>& outputs) {
    struct pending {
        const output* out;
        std::string target, temp;
    };
    std::vector<pending> renames;
    detail::temp_guard guard;
    auto remove_temps = [&] {
        for (const auto& p : renames)
            if (!p.temp.empty()) unlink(p.temp.c_str());
    };
    try {
        for (const auto& o : outputs) {
            if (o.path.empty()) continue;
            const std::string target = detail::resolved(o.path);
            struct stat st {};
            const bool exists = stat(target.c_str(), &st) == 0;
            if (exists && S_ISDIR(st.st_mode)) detail::cannot(o.what, o.path, "it is a directory");
            if (exists && !S_ISREG(st.st_mode)) {
                // A device or FIFO: written where it is, as `sort -o /dev/stdout` does.
                const int fd = open(target.c_str(), O_WRONLY | O_CLOEXEC);
                if (fd < 0) detail::cannot(o.what, o.path, std::strerror(errno));
                try {
                    detail::write_all(fd, o.text, o.what, o.path);
                } catch (...) {
                    close(fd);
                    throw;
                }
                if (close(fd) != 0) detail::cannot(o.what, o.path, std::strerror(errno));
                continue;
            }
            std::string temp = detail::directory_of(target) + "/." + target.substr(target.rfind('/') + 1) + ".XXXXXX";
            if (temp.size() >= PATH_MAX || detail::temp_count >= detail::max_temps)
                detail::cannot(o.what, o.path, "the path is too long");
            // Registered before it exists (mkstemp fills the name in before it creates the file),
            // so that a signal from here to the rename finds it.
            const int slot = detail::temp_count;
            std::strcpy(detail::temp_names[slot], temp.c_str());
            detail::temp_count = slot + 1;
            const int fd = mkstemp(detail::temp_names[slot]);
            if (fd < 0) {
                const int err = errno;
                detail::temp_count = slot;
                detail::cannot(o.what, o.path, std::strerror(err));
            }
            temp = detail::temp_names[slot];
            renames.push_back({&o, target, temp});
            // The old file's permissions, or a new file's as open(0666) and the umask give them.
            mode_t mode = 0;
            if (exists) {
                mode = st.st_mode & 07777;
            } else {
                const mode_t mask = umask(0);
                umask(mask);
                mode = 0666 & ~mask;
            }
            bool ok = fchmod(fd, mode) == 0;
            int err = ok ? 0 : errno;
            if (ok) {
                try {
                    detail::write_all(fd, o.text, o.what, o.path);
                } catch (...) {
                    close(fd);
                    throw;
                }
                ok = fsync(fd) == 0;
                if (!ok) err = errno;
            }
            if (close(fd) != 0 && ok) ok = false, err = errno;
            if (!ok) detail::cannot(o.what, o.path, std::strerror(err));
        }
        for (auto& p : renames) {
            if (rename(p.temp.c_str(), p.target.c_str()) != 0) detail::cannot(p.out->what, p.out->path, std::strerror(errno));
            p.temp.clear();
        }
    } catch (...) {
        remove_temps();
        throw;
    }
}

}  // namespace tools
