file(REMOVE_RECURSE
  "CMakeFiles/binding_test.dir/unit/binding_test.cpp.o"
  "CMakeFiles/binding_test.dir/unit/binding_test.cpp.o.d"
  "binding_test"
  "binding_test.pdb"
  "binding_test[1]_tests.cmake"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/binding_test.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
