// reduce_ops' whole program after argv, for reduce_ops itself and for reduce_all --op.
#pragma once

#include <string>
#include <vector>

namespace ops {

// Parses `args` (reduce_ops' options), runs, prints; every error is one line on stderr
// starting with `program`. Exit status: 0 every result verified, 1 a result failed, 2 usage
// error, 3 CUDA or runtime error (no GPU, too large for it).
int ops_main(const std::string& program, const std::vector<std::string>& args);

}  // namespace ops
