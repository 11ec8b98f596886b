# Runs `${BINARY} demo ${ARGS}` (ARGS: a ;-list) and fails unless it exits 0 and its output holds
# every regular expression of EXPECT (a |-separated list): the exit code alone would pass a day
# that skipped a step, the lines alone a day that failed after printing them.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${BINARY}" demo ${args}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "`gpu-fabric-plugin demo ${ARGS}` exited with ${code}")
endif()
string(REPLACE "|" ";" expected "${EXPECT}")
foreach(line IN LISTS expected)
  if(NOT out MATCHES "${line}")
    message(FATAL_ERROR "`gpu-fabric-plugin demo ${ARGS}` printed no line matching: ${line}")
  endif()
endforeach()
