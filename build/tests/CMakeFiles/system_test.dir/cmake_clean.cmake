file(REMOVE_RECURSE
  "CMakeFiles/system_test.dir/unit/system_test.cpp.o"
  "CMakeFiles/system_test.dir/unit/system_test.cpp.o.d"
  "system_test"
  "system_test.pdb"
  "system_test[1]_tests.cmake"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/system_test.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
