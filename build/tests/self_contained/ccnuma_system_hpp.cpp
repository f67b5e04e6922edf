#include <ccnuma/system.hpp>
#include <ccnuma/system.hpp>
int ccnuma_system_hpp_compiled = 1;
