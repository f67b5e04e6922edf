#pragma once
// What every ccnuma tool does the same way on its command line (docs/tools/README.md, "Command
// line"): getopt_long with one-line messages for an unknown option, an ambiguous abbreviation and a
// missing or empty value; --help and --version; and the exit codes.

#include <ccnuma/error.hpp>
#include <ccnuma/version.hpp>

#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tools {

/// Exit codes shared by the tools; a tool adds its own above these (ccnuma-run's 3, 126, 127).
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  ///< the request was understood and could not be done
inline constexpr int exit_usage = 2;    ///< the command line itself is wrong

/// A wrong command line. A std::exception, so that a main() that catches only those still
/// reports it; fail() tells it apart by its type.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A message without the library's "ccnuma: " prefix (ccnuma::error::reason()), for a tool that
/// prints its own name first.
inline const char* reason(const std::exception& e) {
    const auto* library = dynamic_cast<const ccnuma::error*>(&e);
    return library != nullptr ? library->reason() : e.what();
}

/// Prints "tool: message" (the library's own "ccnuma: " prefix dropped) and returns
/// exit_usage for a usage_error, exit_failure for anything else.
inline int fail(const char* tool, const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, reason(e));
    return dynamic_cast<const usage_error*>(&e) != nullptr ? exit_usage : exit_failure;
}

/// What an option's value is, for "--bind needs a spec, e.g. --bind 4,scatter".
struct value_help {
    int val;
    const char* needs;    ///< "a spec"
    const char* example;  ///< "4,scatter"
};

/// getopt_long with the tools' conventions. The short options start with "+:" (stop at the
/// command; tell a missing value apart); 'h' and 'V' are --help and --version wherever the
/// table maps them. next() throws usage_error for everything the user typed wrong, so the
/// tool's switch sees only its own options.
class option_parser {
public:
    option_parser(const char* tool, int argc, char** argv, const char* shorts, const option* longs,
                  std::span<const value_help> values = {})
        : tool_(tool), argc_(argc), argv_(argv), shorts_(shorts), longs_(longs), values_(values) {
        opterr = 0;  // our own one-line messages
        optind = 1;
    }

    /// The next option, its value in value() (never empty); -1 after the last option, when
    /// index() is the first operand. Prints `help` for 'h' and the version for 'V' and exits 0.
    int next(const std::string& help) {
        const int c = getopt_long(argc_, argv_, shorts_, longs_, nullptr);
        value_ = optarg != nullptr ? optarg : "";
        if (c == '?') throw usage_error{unknown()};
        if (c == ':') throw usage_error{needs(optopt, false) + " (" + see_help() + ")"};
        if (c != -1 && optarg != nullptr && value_.empty())
            // "--membind=" and "--membind ''" alike: an empty value given explicitly is a mistake,
            // never "no option" (which would fall back to the environment silently).
            throw usage_error{needs(c, std::string_view(argv_[optind - 1]).find('=') != std::string_view::npos) +
                              " (the value given is empty)"};
        if (c == 'h') {
            std::fputs(help.c_str(), stdout);
            std::exit(exit_ok);
        }
        if (c == 'V') {
            std::printf("%s (ccnuma) %s\n", tool_, ccnuma::library_version());
            std::exit(exit_ok);
        }
        return c;
    }

    const std::string& value() const noexcept { return value_; }
    /// The operand at index(), which the next call to next() then skips (a subcommand or kernel
    /// name between options).
    const char* take_operand() noexcept { return argv_[optind++]; }
    int index() const noexcept { return optind; }
    /// The option `val` by its full name, whatever prefix or spelling was written.
    std::string name_of(int val) const {
        for (const option* l = longs_; l->name != nullptr; ++l)
            if (l->val == val) return "--" + std::string(l->name);
        return std::string("-") + static_cast<char>(val > 0 && val < 128 ? val : '?');
    }
    /// "unknown option (see tool --help)" for a switch's default branch.
    std::string see_help() const { return std::string("see ") + tool_ + " --help"; }

private:
    // "--bind needs a spec, e.g. --bind 4,scatter", or "--nodes needs a value" where the table
    // does not describe the option; `glued` for the --opt= spelling.
    std::string needs(int val, bool glued) const {
        const std::string name = name_of(val);
        for (const auto& v : values_)
            if (v.val == val)
                return name + (glued ? "=" : "") + " needs " + v.needs + ", e.g. " + name + (glued ? "=" : " ") +
                       v.example;
        return name + (glued ? "=" : "") + " needs a value";
    }

    // For a '?': the option as the user wrote it, and why it is wrong.
    std::string unknown() const {
        const std::string_view a = optind >= 1 && optind - 1 < argc_ ? argv_[optind - 1] : "";
        if (a.substr(0, 2) == "--") {
            const std::string_view name = a.substr(2, a.find('=') == std::string_view::npos ? std::string_view::npos
                                                                                             : a.find('=') - 2);
            std::string matches;
            for (const option* l = longs_; l->name != nullptr; ++l)
                if (std::string_view(l->name).substr(0, name.size()) == name)
                    matches += std::string(matches.empty() ? "" : ", ") + "--" + l->name;
            if (matches.find(',') != std::string::npos)
                return "ambiguous option \"" + std::string(a) + "\" (could be " + matches + ")";
            if (!matches.empty() && a.find('=') != std::string_view::npos)
                return "option \"" + std::string(a) + "\" takes no value";
            return "unknown option \"" + std::string(a) + "\" (" + see_help() + ")";
        }
        const char letter = optopt > 0 && optopt < 128 ? static_cast<char>(optopt) : '?';
        return "unknown option \"-" + std::string(1, letter) + "\" (" + see_help() + ")";
    }

    const char* tool_;
    int argc_;
    char** argv_;
    const char* shorts_;
    const option* longs_;
    std::span<const value_help> values_;
    std::string value_;
};

}  // namespace tools
