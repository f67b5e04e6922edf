# Writes OUT with `#define CCNUMA_GIT_HASH "<commit>[-dirty]"`, run at every build of ccnuma-bench
# (tools/CMakeLists.txt): the hash a run's context prints is that of the source compiled, not of
# the commit the build directory was configured at. "-dirty" marks tracked files changed since
# that commit. OUT is rewritten only when its text changes, so an unchanged commit recompiles
# nothing.
#   cmake -DSOURCE_DIR=... -DOUT=... [-DGIT_EXECUTABLE=...] -P git_hash.cmake
set(hash unknown)
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD WORKING_DIRECTORY ${SOURCE_DIR}
    OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    set(hash ${out})
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR}
      RESULT_VARIABLE dirty ERROR_QUIET)
    if(dirty EQUAL 1)
      string(APPEND hash "-dirty")
    endif()
  endif()
endif()
set(text "#pragma once\n// Written at build time by cmake/git_hash.cmake.\n#define CCNUMA_GIT_HASH \"${hash}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
