# deps.EnvironmentSuitesRun: every unit-test suite named *Environment has a ctest entry of its
# own (at least one: a suite's tests may need entries apart, which this does not count). gtest_discover_tests leaves such suites out (TEST_FILTER "-*Environment.*", since they
# need variables of their own), so a suite named that way and not run by an add_test below it
# never runs at all: binding_test's OmpEnvironment suite (what ccnuma-run exports) did not,
# from its first commit until 2026-12-02.
#   cmake -DTEST_DIR=<tests> -P check_environment_suites.cmake
file(GLOB _sources ${TEST_DIR}/unit/*.cpp)
file(READ ${TEST_DIR}/CMakeLists.txt _lists)
set(_missing)
set(_names)
foreach(_file IN LISTS _sources)
  file(READ ${_file} _text)
  string(REGEX MATCHALL "TEST(_F)?\\(([A-Za-z0-9_]*Environment)," _suites "${_text}")
  foreach(_suite IN LISTS _suites)
    string(REGEX REPLACE "TEST(_F)?\\(([A-Za-z0-9_]*Environment)," "\\2" _name "${_suite}")
    list(APPEND _names ${_name})
    if(NOT _lists MATCHES "gtest_filter=${_name}\\.")
      list(APPEND _missing "${_file}: ${_name}")
    endif()
  endforeach()
endforeach()
if(_missing)
  list(REMOVE_DUPLICATES _missing)
  list(JOIN _missing "\n  " _report)
  message(FATAL_ERROR "suites named *Environment that no ctest entry runs (add an add_test with --gtest_filter=<suite>.*, "
                      "or rename the suite):\n  ${_report}")
endif()
list(REMOVE_DUPLICATES _names)
list(LENGTH _names _count)
message(STATUS "each of the ${_count} unit-test suites named *Environment has a ctest entry that runs it")
