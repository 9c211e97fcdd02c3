// Explicit registration of the passes the analysis layer provides (minimize-accumulator-width).
#pragma once

namespace qonnx::pass {
class PassRegistry;
}

namespace qonnx::analysis {

void register_analysis_passes(pass::PassRegistry& registry);

}  // namespace qonnx::analysis
