# Runs one stage executable under compute-sanitizer's racecheck and checks its verdict.
#   cmake -DSANITIZER=<compute-sanitizer> -DEXE=<stage> "-DARGS=<options>" -DEXPECT=none|hazards -P racecheck.cmake
# Prints "SKIPPED: <why>" (CTest then reports the test as skipped) without a GPU or sanitizer.
separate_arguments(args UNIX_COMMAND "${ARGS}")

# Is there a GPU? Ask the stage itself, without the sanitizer.
execute_process(COMMAND "${EXE}" ${args} RESULT_VARIABLE plain_rc OUTPUT_VARIABLE plain_out ERROR_VARIABLE plain_err)
if(plain_rc EQUAL 3 AND plain_err MATCHES "no CUDA device")
  message("SKIPPED: ${plain_err}")
  return()
endif()
if(NOT SANITIZER OR NOT EXISTS "${SANITIZER}")
  message("SKIPPED: compute-sanitizer not found (it ships with the CUDA Toolkit)")
  return()
endif()

execute_process(COMMAND "${SANITIZER}" --tool racecheck "${EXE}" ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(APPEND out "${err}")
string(REGEX MATCH "RACECHECK SUMMARY: ([0-9]+) hazards? displayed \\(([0-9]+) errors?, ([0-9]+) warnings?\\)"
       summary "${out}")
if(NOT summary)
  message(FATAL_ERROR "no racecheck summary in the output (exit ${rc}):\n${out}")
endif()
set(hazards "${CMAKE_MATCH_1}")
message("${summary}")
if(EXPECT STREQUAL "none")
  if(NOT hazards EQUAL 0)
    message(FATAL_ERROR "racecheck found ${hazards} hazards where none were expected:\n${out}")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the stage failed under racecheck (exit ${rc}):\n${out}")
  endif()
elseif(hazards EQUAL 0)
  message(FATAL_ERROR "racecheck found no hazard in code that races:\n${out}")
endif()
