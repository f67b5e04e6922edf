#pragma once
// What runs inside the guest: the request (machine shape, command, environment) and the image
// that carries it, with the generated /init.

#include "kit.hpp"

#include <ccnuma/emulated_machine.hpp>

#include <string>
#include <utility>
#include <vector>

namespace tools::vm {

struct request {
    ccnuma::emulated_machine shape;
    std::vector<std::string> command;  ///< command[0] is an absolute host path
    std::vector<std::string> copies;   ///< --copy paths, absolute
    std::vector<std::pair<std::string, std::string>> env;  ///< exported in the guest, in order
    std::string cwd;                   ///< created in the guest and entered before the command
    double timeout_s = 600;
    bool keep_going = false;
    bool verbose = false;
};

/// The guest's /init: mounts /proc, /sys and /dev, checks THP and NUMA balancing, and reports on
/// the status port (ttyS3) "booted", "running" just before the command (stdout on ttyS1, stderr
/// on ttyS2), then "exit N" (or "setup-failed <why>"); then powers off.
std::string init_script(const request& r);

/// Writes the initramfs for `r` to `file`: busybox, /init, /etc/ccnuma-vm, the command with its
/// libraries and the copies. Returns the size of its content in bytes.
std::uint64_t build_image(const kit& k, const request& r, const std::string& file);

/// Quotes a word for sh, so that any byte string survives as one argument.
std::string sh_quote(const std::string& word);

}  // namespace tools::vm
