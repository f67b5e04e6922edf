# deps.EnvironmentSuitesRun: every test of a suite named *Environment is run by a ctest entry of
# its own. gtest_discover_tests leaves such suites out (TEST_FILTER "-*Environment.*", since they
# need variables of their own), so a test there that no add_test's --gtest_filter names never
# runs at all: binding_test's OmpEnvironment suite (what ccnuma-run exports) did not, from its
# first commit until 2026-12-02.
#
# Each TEST or TEST_F of tests/unit/*.cpp and tests/tools/*.cpp in a suite named *Environment must
# match the positive part of a literal --gtest_filter in tests/CMakeLists.txt (its patterns
# split at ':', '*' and '?' as gtest reads them). Filters built from variables are not read;
# TEST_P suites (named Prefix/Suite.Test/Param) are not matched, and none is named so.
#   cmake -DTEST_DIR=<tests> -P check_environment_suites.cmake
file(GLOB _sources ${TEST_DIR}/unit/*.cpp ${TEST_DIR}/tools/*.cpp)
file(READ ${TEST_DIR}/CMakeLists.txt _lists)
string(REGEX REPLACE "#[^\n]*" "" _lists "${_lists}")  # a comment runs nothing
string(REGEX MATCHALL "--gtest_filter=[^ \t\n\")]+" _filters "${_lists}")
set(_patterns)
foreach(_filter IN LISTS _filters)
  string(REGEX REPLACE "^--gtest_filter=" "" _filter "${_filter}")
  string(REGEX REPLACE "-.*$" "" _filter "${_filter}")  # the negative part excludes
  if(_filter STREQUAL "" OR _filter MATCHES "\\$")
    continue()
  endif()
  string(REPLACE ":" ";" _globs "${_filter}")
  foreach(_glob IN LISTS _globs)
    string(REPLACE "." "\\." _re "${_glob}")
    string(REPLACE "*" ".*" _re "${_re}")
    string(REPLACE "?" "." _re "${_re}")
    list(APPEND _patterns "^${_re}$")
  endforeach()
endforeach()
set(_missing)
set(_count 0)
foreach(_file IN LISTS _sources)
  file(READ ${_file} _text)
  string(REGEX REPLACE "//[^\n]*" "" _text "${_text}")
  # The character before TEST keeps TYPED_TEST and the like out.
  string(REGEX MATCHALL "[^A-Za-z0-9_]TEST(_F)?\\([ \t\n]*[A-Za-z0-9_]*Environment[ \t\n]*,[ \t\n]*[A-Za-z0-9_]+" _tests
         "${_text}")
  foreach(_test IN LISTS _tests)
    string(REGEX REPLACE "^.TEST(_F)?\\([ \t\n]*([A-Za-z0-9_]*Environment)[ \t\n]*,[ \t\n]*([A-Za-z0-9_]+)$" "\\2.\\3"
           _name "${_test}")
    math(EXPR _count "${_count} + 1")
    set(_run FALSE)
    foreach(_re IN LISTS _patterns)
      if(_name MATCHES "${_re}")
        set(_run TRUE)
        break()
      endif()
    endforeach()
    if(NOT _run)
      list(APPEND _missing "${_file}: ${_name}")
    endif()
  endforeach()
endforeach()
if(_missing)
  list(JOIN _missing "\n  " _report)
  message(FATAL_ERROR "tests of suites named *Environment that no ctest entry runs (add an add_test with "
                      "--gtest_filter=<suite>.<test>, or rename the suite):\n  ${_report}")
endif()
message(STATUS "each of the ${_count} tests in suites named *Environment is run by a --gtest_filter of its own")
