tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_version_hpp.cpp.o: \
 /work/main/build/tests/self_contained/ccnuma_version_hpp.cpp \
 /usr/include/stdc-predef.h /work/main/include/ccnuma/version.hpp
