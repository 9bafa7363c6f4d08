// reduce2: checks, times and prints this stage (see kernel.cu; the harness is in common/).
#include "stage_main.h"
#include "stages.h"

int main(int argc, char** argv) { return stage_main(argc, argv, reduce2_stage); }
