// One explicit registration step above every layer: the infrastructure (kernel and pass registries,
// the ONNX schema registry) never calls up into what it hosts.
#pragma once

namespace qonnx {

// Fills the process-wide kernel and pass registries and registers the ONNX schemas of the QONNX,
// nGraph and Ascend domains. Idempotent and thread-safe; the CLI, tests, benchmarks and fuzzers call it
// before anything else.
void register_all();

}  // namespace qonnx
