// reduce2: checks, times and prints this stage (see kernel.cu; the harness is in common/).
//
//   run:      build/release/bin/reduce2 --n 2^26 --type float
//   explain:  build/release/bin/reduce2 --explain --block 256
//   profile:  scripts/profile.sh reduce2
#include "stage_main.h"

extern const Stage reduce2_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce2_stage); }
