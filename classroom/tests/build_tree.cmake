# Generates one assignment's student tree and builds it as a student would, with the
# README's build command (configure + build; its tests fail on the stubs by design).
#   cmake -DCLASSROOM=<classroom> -DASSIGNMENT=reduce4 -DOUT=<dir> -P build_tree.cmake
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${CLASSROOM}" generate "${ASSIGNMENT}" --out "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "classroom generate ${ASSIGNMENT} failed (exit ${rc})")
endif()
foreach(step "--preset;release" "--build;--preset;release")
  execute_process(COMMAND ${CMAKE_COMMAND} ${step} WORKING_DIRECTORY "${OUT}/student" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake ${step} failed in the ${ASSIGNMENT} student tree (exit ${rc}):\n${log}")
  endif()
endforeach()
foreach(exe reduce_all gpu_tests host_tests ${ASSIGNMENT})
  if(NOT EXISTS "${OUT}/student/build/release/bin/${exe}")
    message(FATAL_ERROR "the ${ASSIGNMENT} student tree did not build ${exe}")
  endif()
endforeach()
message("the ${ASSIGNMENT} student tree builds")
