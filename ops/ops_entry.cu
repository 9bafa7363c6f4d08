// Linked into reduce7 and reduce_all (as a source, not through a library: nothing calls into
// this file, and a linker drops unreferenced library members): registers reduce_ops' program,
// so that their --op runs reduce7's kernel for another operator or type (common/stage_main.h).
#include "ops_main.h"
#include "ops_options.h"  // op_choices
#include "stage_main.h"

namespace {
[[maybe_unused]] const bool registered =
    (register_operator_program(
         &ops::ops_main,
         "  --op OP           " + ops::op_choices() + ": instead of the\n"
         "                    stages, reduce7's kernel for that operator beside CUB's (reduce_ops; with\n"
         "                    --op, --type also takes int64, half, bfloat16; see reduce_ops --help)\n"),
     true);
}  // namespace
