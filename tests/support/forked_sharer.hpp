#pragma once
// A child process that holds a copy-on-write share of the parent's pages until release(), for
// the tests of what move_pages and migrate() do with shared pages (tests/unit/pages_test.cpp on
// the host, tests/vm/pages_vm_test.cpp in the guest).

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace test_support {

struct forked_sharer {
    forked_sharer() {
        if (::pipe(fd) != 0) return;
        // A bare clone(SIGCHLD) is fork() without the pthread_atfork handlers: libomp 14's child
        // handler aborts ("free(): invalid size") in a process bound through OMP_PLACES, and a
        // child that dies unshares the pages these tests need shared. The child only reads and
        // exits, both plain system calls, so it needs none of the handlers' repairs.
        pid = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
        if (pid == 0) {
            char c;
            ::syscall(SYS_close, fd[1]);
            while (::syscall(SYS_read, fd[0], &c, 1) < 0 && errno == EINTR) {
            }
            ::syscall(SYS_exit_group, 0);
        }
        ::close(fd[0]);
    }
    forked_sharer(const forked_sharer&) = delete;
    forked_sharer& operator=(const forked_sharer&) = delete;
    ~forked_sharer() { release(); }
    /// Ends the share: the child exits and is reaped.
    void release() {
        if (pid <= 0) return;
        ::close(fd[1]);
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
    }
    int fd[2]{-1, -1};
    pid_t pid = -1;
};

}  // namespace test_support
