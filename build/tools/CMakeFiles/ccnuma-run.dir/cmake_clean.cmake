file(REMOVE_RECURSE
  "CMakeFiles/ccnuma-run.dir/ccnuma-run/main.cpp.o"
  "CMakeFiles/ccnuma-run.dir/ccnuma-run/main.cpp.o.d"
  "ccnuma-run"
  "ccnuma-run.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/ccnuma-run.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
