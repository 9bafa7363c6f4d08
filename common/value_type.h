// The element types the stages sum, named once for the command line, the tables and the
// templates: --type int | float | double, and the C++ type each stands for.
#pragma once

#include <cstddef>
#include <string_view>

enum class ValueType { Int32, Float32, Float64 };

std::string_view type_name(ValueType type);  // "int", "float", "double"
std::size_t type_size(ValueType type);       // 4, 4, 8

template <typename T> constexpr ValueType value_type_of();
template <> constexpr ValueType value_type_of<int>() { return ValueType::Int32; }
template <> constexpr ValueType value_type_of<float>() { return ValueType::Float32; }
template <> constexpr ValueType value_type_of<double>() { return ValueType::Float64; }
