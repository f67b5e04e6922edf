#pragma once
// ccnuma-vm's temporary files: one private directory per run, so no name in a shared /tmp is
// predictable and no planted symlink is ever followed (issue 23, item 11). The directory and
// what is in it go away on every exit path, including SIGINT, SIGTERM, SIGHUP and SIGPIPE
// while the kit or the image is being prepared (item 13); while QEMU runs, run_qemu's own
// signal guard takes over and returns normally, and the destructor cleans up.

#include <string>

namespace tools::vm {

class scratch_dir {
public:
    /// mkdtemp("$TMPDIR/ccnuma-vm.XXXXXX"), mode 0700, and the signal handlers that remove it.
    /// Throws failure(exit_setup) naming the directory and the reason.
    scratch_dir();
    ~scratch_dir();
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    /// Creates `name` inside the directory with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and returns
    /// its path. At most `max_files` names per run; each is removed with the directory.
    std::string create(const char* name);
    const std::string& path() const noexcept { return dir_; }

    static constexpr int max_files = 4;

private:
    std::string dir_;
};

/// A file for the user to read after the run ("$TMPDIR/ccnuma-vm-XXXXXX.console"), created with
/// mkstemps (O_EXCL, so never through a planted link) and filled with `content`. Returns its
/// path, or "" when it cannot be written (the caller's message then has no log to point at).
std::string keep_log(const std::string& content);

}  // namespace tools::vm
