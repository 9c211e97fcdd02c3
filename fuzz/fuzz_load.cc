// libFuzzer target "load" (fuzz/fuzz_targets.h has the body and the input format).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return qonnx::fuzz::load_one(data, size); }
