// The worker's recorder (recorder.cu): while `target` is set, every launch, memset and
// kernel attribute the submission's object asks for is written into it before it is made.
#pragma once

#include "launch_record.h"

namespace recorder {
extern launch_record::Writer* target;  // the current request's record; null between requests
}  // namespace recorder
