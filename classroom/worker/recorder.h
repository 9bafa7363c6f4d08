// The worker's recorder (recorder.cu): while `target` is set, every launch and memset the
// submission's object asks for is made and then written into it with its result, and every
// kernel attribute is written before it is set.
#pragma once

#include "launch_record.h"

namespace recorder {
extern launch_record::Writer* target;  // the current request's record; null between requests
}  // namespace recorder
