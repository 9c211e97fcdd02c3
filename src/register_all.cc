#include "qonnx/register_all.h"

#include <mutex>

#include "qonnx/analysis/register.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/kernels/register.h"
#include "qonnx/pass/pass.h"
#include "qonnx/passes/register.h"
#include "qonnx/schemas/schemas.h"
#include "qonnx/targets/target.h"

namespace qonnx {

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] {
    kernels::register_core_kernels(exec::KernelRegistry::global());
    passes::register_all_passes(pass::PassRegistry::global());
    analysis::register_analysis_passes(pass::PassRegistry::global());
    schemas::register_qonnx_schemas();
    targets::register_all_targets(targets::TargetRegistry::global());
    targets::TargetRegistry::global().register_ops(exec::KernelRegistry::global());
    // The executor checks ONNX type constraints as onnxruntime does.
    exec::KernelRegistry::global().set_type_checks(schemas::type_check_for);
  });
}

}  // namespace qonnx
