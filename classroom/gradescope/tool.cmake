# The grader alone, for an autograder image (classroom generate copies this file to
# autograder/tool/CMakeLists.txt, next to the grader's sources). Host C++ only.
cmake_minimum_required(VERSION 3.24)
project(classroom_tool LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
file(GLOB sources ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
add_executable(classroom ${sources})
