# deps.RequiredPrograms: every find_program/find_file/find_package of the test tree is REQUIRED.
# An optional lookup is how numactl went missing on a fresh machine without anyone noticing
# (issue 31): the test got CCNUMA_NUMACTL-NOTFOUND as an argument. A new lookup must either be
# REQUIRED (and installed by scripts/deps.sh) or its test must skip through ctest's skip code,
# saying why; this check enforces the first, which is the rule here.
#   cmake -DTEST_DIR=<tests> -P check_required.cmake
file(GLOB_RECURSE _lists ${TEST_DIR}/CMakeLists.txt)
set(_bad)
foreach(_file IN LISTS _lists)
  file(READ ${_file} _text)
  string(REGEX REPLACE "#[^\n]*" "" _text "${_text}")  # comments name lookups too
  # One call per match, up to its closing parenthesis (no lookup here spans nested parentheses).
  string(REGEX MATCHALL "(find_program|find_file|find_library|find_path|find_package)\\([^)]*\\)" _calls "${_text}")
  foreach(_call IN LISTS _calls)
    if(NOT _call MATCHES "REQUIRED")
      list(APPEND _bad "${_file}: ${_call}")
    endif()
  endforeach()
endforeach()
if(_bad)
  list(JOIN _bad "\n  " _report)
  message(FATAL_ERROR "lookups that may quietly fail (make them REQUIRED and install the package in scripts/deps.sh):\n  ${_report}")
endif()
list(LENGTH _lists _count)
message(STATUS "every lookup of the ${_count} test CMakeLists is REQUIRED")
