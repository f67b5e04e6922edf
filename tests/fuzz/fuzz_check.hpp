#pragma once
// What every parser promises, checked by the fuzz targets: it returns or throws ccnuma::error
// whose message is one line that starts with "ccnuma: ". Anything else (another exception, a
// signal, a sanitizer report) is a finding.

#include <ccnuma/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fuzz {

[[noreturn]] inline void finding(const char* what, std::string_view detail = {}) {
    std::fprintf(stderr, "fuzz finding: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
    std::abort();
}

inline void check(bool ok, const char* what) {
    if (!ok) finding(what);
}

/// Runs parse(); a ccnuma::error must carry a one-line "ccnuma: " message.
template <class Parse>
void expect_value_or_error(Parse&& parse) {
    try {
        parse();
    } catch (const ccnuma::error& e) {
        const std::string_view m = e.what();
        if (m.rfind("ccnuma: ", 0) != 0) finding("message without the ccnuma: prefix", m);
        if (m.find('\n') != std::string_view::npos) finding("message of more than one line", m);
    }
}

}  // namespace fuzz
