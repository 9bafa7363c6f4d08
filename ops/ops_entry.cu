// Linked into reduce7 and reduce_all (as a source, not through a library: nothing calls into
// this file, and a linker drops unreferenced library members): registers reduce_ops' program,
// so that their --op runs reduce7's kernel for another operator or type (common/stage_main.h).
#include "ops_main.h"
#include "stage_main.h"

namespace {
[[maybe_unused]] const bool registered = (register_operator_program(&ops::ops_main), true);
}  // namespace
