# Compiles SOURCE with COMPILER and FLAGS (a ;-list) and checks that it fails, that the first
# "error:" line contains EXPECTED, and with ONE_ERROR that it is the only one: a wrong use must
# say what is valid, first. (Clang goes on after a failed static_assert inside a class that a
# standard container uses, so its later lines come from libstdc++'s recovery.)
execute_process(COMMAND ${COMPILER} ${FLAGS} -fsyntax-only ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()
string(REGEX MATCHALL "error:[^\n]*" errors "${err}")
list(LENGTH errors count)
if(count EQUAL 0)
  message(FATAL_ERROR "no error line:\n${err}")
endif()
list(GET errors 0 first)
string(FIND "${first}" "${EXPECTED}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the first error does not say \"${EXPECTED}\":\n${err}")
endif()
if(ONE_ERROR AND NOT count EQUAL 1)
  message(FATAL_ERROR "expected one error, got ${count}:\n${err}")
endif()
message(STATUS "${count} error(s), the first: ${first}")
