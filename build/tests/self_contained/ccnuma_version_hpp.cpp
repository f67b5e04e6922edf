#include <ccnuma/version.hpp>
#include <ccnuma/version.hpp>
int ccnuma_version_hpp_compiled = 1;
