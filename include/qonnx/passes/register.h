// Explicit registration of the built-in passes.
#pragma once

namespace qonnx::pass {
class PassRegistry;
}

namespace qonnx::passes {

void register_all_passes(pass::PassRegistry& registry);

}  // namespace qonnx::passes
