# Checks that the committed diagrams are what tools/draw_trees draws from the kernels now.
#   cmake -DTOOL=<draw_trees> -DDOCS=<docs/img> -DWORK=<scratch dir> -P diagrams.cmake
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TOOL}" "${WORK}" RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "draw_trees failed (exit ${rc})")
endif()
foreach(stage reduce0 reduce1 reduce2 reduce3)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/${stage}_tree.svg" "${DOCS}/${stage}_tree.svg"
                  RESULT_VARIABLE differs)
  if(differs)
    message(FATAL_ERROR "docs/img/${stage}_tree.svg differs from what its kernel draws: run scripts/make_diagrams.sh")
  endif()
endforeach()
