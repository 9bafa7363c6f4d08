# The submission's object with every name it defines for the whole program renamed, but
# its stage's record: cmake -DNM=... -DOBJCOPY=... -DAR=... -DREADELF=... -DARCHIVE=libreduceN_kernel.a
#   -DRECORD=reduceN_stage -DOUT=reduceN_private.o -P private_symbols.cmake
#
# Why (review11/20): a worker is one executable, and a name defined in it answers every
# reference to that name, the C++ library's own calls through its PLT among them (attack
# 20 defined std::future_category(), which libstdc++'s initializer calls, and ran there
# before the sanitizer's library had read its settings), and a strong definition takes the
# place of the harness's weak one at link time (an explicit specialization of a template
# the timing code uses would time itself). Renamed "__grading_private_<name>", what the
# submission defines is reachable only from the submission: its own references follow the
# rename (they are the same symbol-table entries), COMDAT groups no longer match the
# harness's (their signatures are renamed too: a constructor's or destructor's group is
# named by a local symbol, "..D5Ev", and were it kept, the linker would keep the harness's
# copy of the group and drop the object's, whose renamed names would then be undefined), and the CUDA runtime finds the kernels by address and by the device name
# strings of the fatbinary, neither of which changes. The record keeps its name: it is the
# one thing the worker reads from the stage.
cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)
foreach(var NM OBJCOPY AR READELF ARCHIVE RECORD OUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "private_symbols.cmake: -D${var}=... is required")
  endif()
endforeach()

set(unpacked "${OUT}.members")
file(REMOVE_RECURSE "${unpacked}")
file(MAKE_DIRECTORY "${unpacked}")
execute_process(COMMAND "${AR}" x "${ARCHIVE}" WORKING_DIRECTORY "${unpacked}" RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "private_symbols.cmake: ${AR} x ${ARCHIVE} failed: ${err}")
endif()
file(GLOB members "${unpacked}/*.o")
list(LENGTH members count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "private_symbols.cmake: ${ARCHIVE} holds ${count} objects, not the one kernel.cu makes")
endif()

# Every name the object defines for the program (nm -g: global, weak, unique), in POSIX form.
execute_process(COMMAND "${NM}" -g --defined-only -P "${members}" OUTPUT_VARIABLE defined RESULT_VARIABLE status
                ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "private_symbols.cmake: ${NM} failed on ${members}: ${err}")
endif()
string(REPLACE "\n" ";" lines "${defined}")
set(renames "")
set(renamed "")
set(found_record FALSE)
foreach(line IN LISTS lines)
  string(REGEX MATCH "^[^ ]+" name "${line}")
  if(name STREQUAL "")
    continue()
  endif()
  if(name STREQUAL RECORD)
    set(found_record TRUE)
    continue()
  endif()
  string(APPEND renames "${name} __grading_private_${name}\n")
  list(APPEND renamed "${name}")
endforeach()
if(NOT found_record)
  message(FATAL_ERROR "private_symbols.cmake: the object does not define ${RECORD}")
endif()
# The COMDAT groups' signatures: "COMDAT group section [    1] `.group' [_ZN9CudaErrorD5Ev] contains 4 sections:"
execute_process(COMMAND "${READELF}" -g -W "${members}" OUTPUT_VARIABLE groups RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "private_symbols.cmake: ${READELF} -g failed on ${members}: ${err}")
endif()
string(REGEX MATCHALL "\\[[^]\n]+\\] contains" signatures "${groups}")
foreach(signature IN LISTS signatures)
  string(REGEX REPLACE "^\\[(.*)\\] contains$" "\\1" name "${signature}")
  if(name STREQUAL RECORD)
    message(FATAL_ERROR "private_symbols.cmake: ${RECORD} names a COMDAT group")
  endif()
  if(NOT name IN_LIST renamed)
    string(APPEND renames "${name} __grading_private_${name}\n")
    list(APPEND renamed "${name}")
  endif()
endforeach()
# The calls that set work going on the GPU, recorded (recorder.cu): the object's references,
# and only the object's, are renamed to the recorder's functions, which make the call after
# writing it into the request's record. A name the object defines itself was renamed above.
foreach(name __cudaLaunchKernel __cudaLaunchKernel_ptsz cudaLaunchKernel cudaLaunchKernelExC cudaLaunchCooperativeKernel
             cudaMemsetAsync cudaMemset cudaFuncSetAttribute)
  if(NOT name IN_LIST renamed)
    string(APPEND renames "${name} grading_recorded_${name}\n")
  endif()
endforeach()
file(WRITE "${OUT}.renames" "${renames}")
execute_process(COMMAND "${OBJCOPY}" "--redefine-syms=${OUT}.renames" "${members}" "${OUT}" RESULT_VARIABLE status
                ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "private_symbols.cmake: ${OBJCOPY} failed: ${err}")
endif()
file(REMOVE_RECURSE "${unpacked}")
