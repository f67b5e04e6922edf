# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
include("/work/main/build/tests/binding_test[1]_include.cmake")
include("/work/main/build/tests/error_test[1]_include.cmake")
include("/work/main/build/tests/system_test[1]_include.cmake")
include("/work/main/build/tests/topology_test[1]_include.cmake")
include("/work/main/build/tests/version_test[1]_include.cmake")
include("/work/main/build/tests/tools_test[1]_include.cmake")
add_test([=[headers_self_contained]=] "/usr/bin/cmake" "--build" "/work/main/build" "--target" "headers_self_contained")
set_tests_properties([=[headers_self_contained]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;29;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[package_consumer]=] "/usr/bin/cmake" "-DSOURCE_DIR=/work/main" "-DBUILD_DIR=/work/main/build" "-DWORK_DIR=/work/main/build/tests/package" "-DCXX_COMPILER=/usr/bin/c++" "-P" "/work/main/tests/package/run.cmake")
set_tests_properties([=[package_consumer]=] PROPERTIES  LABELS "package" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;55;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[example_nested_binding]=] "/work/main/build/examples/01_nested_binding/nested_binding" "2,scatter,1,subcompact")
set_tests_properties([=[example_nested_binding]=] PROPERTIES  ENVIRONMENT "CCNUMA_TOPOLOGY=;CCNUMA_BIND=;CCNUMA_CPUSET=" LABELS "tools" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;66;add_test;/work/main/tests/CMakeLists.txt;0;")
