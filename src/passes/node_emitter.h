// NodeEmitter is pass::Rewriter (include/qonnx/pass/rewriter.h) for one node replaced in place: the
// same methods and names. Kept as a name so existing passes switch by a rename.
#pragma once

#include "qonnx/pass/rewriter.h"

namespace qonnx::passes {

using NodeEmitter = pass::Rewriter;

}  // namespace qonnx::passes
