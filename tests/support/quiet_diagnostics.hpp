#pragma once
// Small containers over many threads share pages, which the placement diagnostic rightly
// reports; in the container tests that is on purpose. Installed from a gtest environment, not
// a static initializer: the library's default handler may be initialized after the test's
// statics and would replace an empty one set there.

#include <ccnuma/placement.hpp>

#include <gtest/gtest.h>

namespace test_support {

struct quiet_diagnostics : ::testing::Environment {
    void SetUp() override { ccnuma::set_diagnostic_handler({}); }
};

inline const auto* const quiet_diagnostics_installed = ::testing::AddGlobalTestEnvironment(new quiet_diagnostics);

}  // namespace test_support
