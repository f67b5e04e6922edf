# Installs the build tree into a scratch prefix, then builds and runs tests/package against it,
# once through find_package(ccnuma) and once through pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# Only what users include is installed: the internals of include/private (JSON and byte
# formatting, test hooks) are not, nor is anything beside include/ccnuma.
foreach(internal detail/json.hpp detail/format.hpp detail/binding_stats.hpp)
  if(EXISTS ${prefix}/include/ccnuma/${internal})
    message(FATAL_ERROR "the internal header ccnuma/${internal} was installed")
  endif()
endforeach()
file(GLOB installed_include_dirs LIST_DIRECTORIES true RELATIVE ${prefix}/include ${prefix}/include/*)
if(NOT installed_include_dirs STREQUAL "ccnuma")
  message(FATAL_ERROR "include/ holds more than ccnuma/: ${installed_include_dirs}")
endif()

# find_package
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer)
# scatter over 2 packages x 2 nodes x 2 cores: package first, then node.
if(NOT last_output MATCHES "^0 4 2 6 \n0\\.1\\.0")
  message(FATAL_ERROR "find_package consumer printed unexpected output:\n${last_output}")
endif()

# pkg-config
file(GLOB pc_dirs ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
list(JOIN pc_dirs ":" pc_path)
set(ENV{PKG_CONFIG_PATH} "${pc_path}")
run(pkg-config --cflags --libs ccnuma)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${CXX_COMPILER} -std=c++20 ${SOURCE_DIR}/tests/package/main.cpp ${flags} -o ${WORK_DIR}/consumer_pc)
run(${WORK_DIR}/consumer_pc)
if(NOT last_output MATCHES "^0 4 2 6 \n")
  message(FATAL_ERROR "pkg-config consumer printed unexpected output:\n${last_output}")
endif()
message(STATUS "find_package and pkg-config consumers OK")
