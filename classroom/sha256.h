// SHA-256 (FIPS 180-4), for the grader's tamper check: the generator records the hash of
// every file it hands out, and the grader refuses a submission whose protected files differ.
#pragma once

#include <string>

namespace classroom {

// The hash of `data` as 64 lowercase hex digits.
std::string sha256_hex(const std::string& data);

}  // namespace classroom
