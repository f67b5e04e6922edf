file(REMOVE_RECURSE
  "CMakeFiles/ccnuma-info.dir/ccnuma-info/main.cpp.o"
  "CMakeFiles/ccnuma-info.dir/ccnuma-info/main.cpp.o.d"
  "ccnuma-info"
  "ccnuma-info.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/ccnuma-info.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
