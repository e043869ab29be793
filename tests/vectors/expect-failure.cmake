# Runs PROG FILE and passes only if it exits with STATUS and its output matches REGEX.
# Used by the negative vectors tests (see CMakeLists.txt beside this file).
execute_process(COMMAND ${PROG} ${FILE} RESULT_VARIABLE rc OUTPUT_VARIABLE out
	ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL STATUS)
	message(FATAL_ERROR "expected exit status ${STATUS}, got '${rc}'")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
	message(FATAL_ERROR "output does not match: ${REGEX}")
endif()
