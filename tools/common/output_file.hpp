#pragma once
// Output files written the way coreutils writes them (sort -o, install): the text goes to a
// temporary file in the named file's directory, which is written, fsync'd and closed with every
// error checked, and then renamed over the named entry. A failed or interrupted run leaves the old
// file as it was and no temporary file beside it; a replaced file keeps its owner (where the
// caller may give it away: root), group and mode. Paths are never resolved here: the kernel
// walks them, and a symbolic link as the last component is replaced by the rename, never
// written through, so the file it pointed to is left as it was. A link that someone else
// planted in a sticky world-writable directory (/tmp) is refused, as fs.protected_symlinks
// does. Written in place instead, with write and close errors checked: a device or FIFO
// (/dev/full fails with ENOSPC), also through a link (/dev/stdout); a regular file of the
// caller's with several hard links, so that every name sees the new text (not all-or-none then).
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

inline std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

inline std::string base_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

[[noreturn]] inline void cannot(const std::string& what, const std::string& path, const std::string& why) {
    throw std::runtime_error("cannot write the " + what + " file \"" + path + "\": " + why);
}

/// The kernel's fs.protected_symlinks rule, applied to every symbolic link the named path walks
/// through, whatever the sysctl says: in a sticky world-writable directory (/tmp) a link is
/// followed only if the caller, the directory's owner or root owns it. Anyone may plant a link
/// there, so a link that someone else owns must not decide which file a run (as root, say)
/// writes.
inline void check_links(const std::string& path, const std::string& what) {
    for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
        const std::string prefix = path.substr(0, end);
        if (!prefix.empty() && prefix.back() == '/') {  // "a//b": the same component again
            if (end == std::string::npos) return;
            continue;
        }
        struct stat link {}, dir {};
        if (!prefix.empty() && lstat(prefix.c_str(), &link) != 0) return;  // the rest does not exist yet
        if (!prefix.empty() && S_ISLNK(link.st_mode) && stat(directory_of(prefix).c_str(), &dir) == 0 &&
            (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH) && link.st_uid != geteuid() &&
            link.st_uid != dir.st_uid && link.st_uid != 0)
            cannot(what, path,
                   (prefix == path ? std::string("it") : "\"" + prefix + "\"") + " is a symbolic link owned by uid " +
                       std::to_string(link.st_uid) + " in the sticky world-writable directory \"" + directory_of(prefix) +
                       "\"; only a link of yours, of the directory's owner or of root is followed there "
                       "(fs.protected_symlinks): remove it or name another file");
        if (end == std::string::npos) return;
    }
}

/// How an output reaches its file. `replace`: a temporary file beside the named entry is renamed
/// over it: a new file, a regular file with one link, or a symbolic link, which is then replaced
/// itself and the file it pointed to is left as it was. `in_place`: opened and written where it
/// is: a device or FIFO (also through a link), a regular file of the caller's with several hard
/// links, which all keep seeing the new text, or the file this process's stdout or stderr goes to, named
/// through /dev/stdout or /proc/self/fd/1 (appended to, as the process's own output is).
struct plan {
    enum kind_t { replace, in_place } kind = replace;
    bool exists = false;  ///< a regular file named directly: keep its owner, group and mode
    bool follow = false;  ///< in place through a symbolic link
    bool append = false;  ///< in place after what is there: this process's own stdout or stderr
    struct stat st {};    ///< what lstat (or, with follow, stat) said of it
};

inline bool is_own_output(const struct stat& st) {
    for (int fd : {1, 2}) {
        struct stat out {};
        if (fstat(fd, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino) return true;
    }
    return false;
}

inline plan plan_for(const std::string& path, const std::string& what) {
    check_links(path, what);
    plan p;
    if (lstat(path.c_str(), &p.st) != 0) {
        if (errno != ENOENT) cannot(what, path, std::strerror(errno));
        return p;
    }
    if (S_ISLNK(p.st.st_mode)) {
        struct stat to {};
        if (stat(path.c_str(), &to) != 0) return p;  // dangling: the link is replaced, nothing is created
        if (S_ISDIR(to.st_mode)) cannot(what, path, "it is a symbolic link to a directory");
        if (!S_ISREG(to.st_mode) || is_own_output(to)) p.kind = plan::in_place, p.follow = true, p.st = to;
        p.append = S_ISREG(to.st_mode) && p.follow;
        return p;  // else a link to a regular file: the link is replaced, the file is left as it was
    }
    if (S_ISDIR(p.st.st_mode)) cannot(what, path, "it is a directory");
    p.exists = S_ISREG(p.st.st_mode);
    // Only the caller's own file is written in place for its other names: a hard link someone
    // else made (where fs.protected_hardlinks is off) must not carry the write to their target.
    if (!p.exists || (p.st.st_nlink > 1 && p.st.st_uid == geteuid())) p.kind = plan::in_place;
    return p;
}

/// Opens an in-place target for writing: through the link for a device or FIFO reached by one,
/// else never through a link, and only the file that plan_for saw.
inline int open_in_place(const std::string& path, const plan& p, const std::string& what) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | (p.follow ? 0 : O_NOFOLLOW) | (p.append ? O_APPEND : 0));
    if (fd < 0) cannot(what, path, std::strerror(errno));
    struct stat now {};
    if (fstat(fd, &now) != 0 || now.st_dev != p.st.st_dev || now.st_ino != p.st.st_ino) {
        close(fd);
        cannot(what, path, "it was replaced while the run went on");
    }
    return fd;
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

/// Whether two output paths name the same file: the same device and inode where both exist
/// (symbolic links followed, hard links included), else the same entry of the same directory.
inline bool same_file(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (lstat(a.c_str(), &sa) == 0 && lstat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (detail::base_of(a) != detail::base_of(b)) return false;
    return stat(detail::directory_of(a).c_str(), &sa) == 0 && stat(detail::directory_of(b).c_str(), &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/// Throws std::runtime_error naming `what` ("JSON") and the path when the run could not write
/// it: a directory, a missing or unwritable directory, an unwritable file written in place, a
/// symbolic link planted by someone else in a sticky directory. Creates and removes a temporary
/// file in the named entry's directory, the way write_outputs will.
inline void check_output(const std::string& path, const std::string& what) {
    const detail::plan p = detail::plan_for(path, what);
    if (p.kind == detail::plan::in_place) {
        if (access(path.c_str(), W_OK) != 0) detail::cannot(what, path, std::strerror(errno));
        return;
    }
    const std::string temp = detail::directory_of(path) + "/.ccnuma-check-XXXXXX";
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

/// Writes every output with a path (an empty path is skipped), never through a symbolic link to
/// a regular file (see detail::plan). Replaced files go through a temporary file each, all
/// written and checked before the first rename; a device or FIFO is written where it is first,
/// then files with several hard links in place, then the renames. Throws std::runtime_error
/// naming the file and the reason; then no temporary file is left, and no replaced file was
/// touched.
// Over 80 lines: all files are written and checked before the first rename, and every failure
// removes every temporary; the guard and the two lists are that transaction's state.
inline void write_outputs(const std::vector<output>& outputs) {
    struct pending {
        const output* out;
        detail::plan plan;
        std::string temp;
    };
    std::vector<pending> renames, rewrites;
    detail::temp_guard guard;
    auto remove_temps = [&] {
        for (const auto& p : renames)
            if (!p.temp.empty()) unlink(p.temp.c_str());
    };
    auto write_in_place = [](const output& o, const detail::plan& plan) {
        const int fd = detail::open_in_place(o.path, plan, o.what);
        try {
            // A regular file is cut to the new text; a device or FIFO just gets it.
            if (S_ISREG(plan.st.st_mode) && !plan.append && ftruncate(fd, 0) != 0)
                detail::cannot(o.what, o.path, std::strerror(errno));
            detail::write_all(fd, o.text, o.what, o.path);
            if (S_ISREG(plan.st.st_mode) && fsync(fd) != 0) detail::cannot(o.what, o.path, std::strerror(errno));
        } catch (...) {
            close(fd);
            throw;
        }
        if (close(fd) != 0) detail::cannot(o.what, o.path, std::strerror(errno));
    };
    try {
        for (const auto& o : outputs) {
            if (o.path.empty()) continue;
            const detail::plan plan = detail::plan_for(o.path, o.what);
            if (plan.kind == detail::plan::in_place) {
                // A device or FIFO: written where it is, as `sort -o /dev/stdout` does.
                if (S_ISREG(plan.st.st_mode) && !plan.append)
                    rewrites.push_back({&o, plan, {}});
                else
                    write_in_place(o, plan);
                continue;
            }
            std::string temp = detail::directory_of(o.path) + "/." + detail::base_of(o.path) + ".XXXXXX";
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
            renames.push_back({&o, plan, temp});
            // The old file's owner, group and permissions, or a new file's as open(0666) and the
            // umask give them (a replaced symbolic link's target lends nothing). Only root can
            // give a file away; a group the caller is not in stays the caller's.
            mode_t mode = 0;
            if (plan.exists) {
                if (fchown(fd, plan.st.st_uid, plan.st.st_gid) != 0) {
                    [[maybe_unused]] const int kept_group = fchown(fd, static_cast<uid_t>(-1), plan.st.st_gid);
                }
                mode = plan.st.st_mode & 07777;
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
        for (const auto& p : rewrites) write_in_place(*p.out, p.plan);
        for (auto& p : renames) {
            // rename() replaces the named entry itself: a symbolic link there is replaced, never
            // followed.
            if (rename(p.temp.c_str(), p.out->path.c_str()) != 0) detail::cannot(p.out->what, p.out->path, std::strerror(errno));
            p.temp.clear();
        }
    } catch (...) {
        remove_temps();
        throw;
    }
}

}  // namespace tools
