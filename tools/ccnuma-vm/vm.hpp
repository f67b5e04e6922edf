#pragma once
// ccnuma-vm's units: options.cpp reads the command line, request.cpp decides what goes into the
// guest (the command, the files it names, Open MPI, the environment), main.cpp boots it.

#include "guest.hpp"
#include "qemu.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace tools::vm {

struct options {
    request req;
    std::optional<vm::accel> accel;  ///< nothing: auto (KVM where a probe boot with it succeeded)
    /// Lines of the console log printed before a guest failure's message (--console-tail, else
    /// $CCNUMA_VM_CONSOLE_TAIL, else 0): a CI log keeps them where the kept file is lost.
    unsigned console_tail = 0;
    bool setup = false;
};

/// Throws tools::usage_error for a wrong command line, failure for a --copy path that is missing.
options parse(int argc, char** argv);
/// A shell variable name (NAME of --env NAME=VALUE).
bool valid_name(std::string_view name);
std::string absolute(const std::string& path);

// request.cpp
/// The command as the guest will run it: an absolute path to a regular, executable host file.
std::string resolve_command(const std::string& name);
void copy_named_files(request& r);
void add_open_mpi(request& r);
void inherit_environment(request& r);

}  // namespace tools::vm
