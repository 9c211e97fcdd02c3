// lower-quant's pieces, private to the pass: the layout and storage rules every form shares
// (layout.cc), one run's state with the forms every backend shares (lower_quant.cc: weights as integer
// codes, exact float emulations), and the QuantEmitter interface that writes a quantizer in a
// backend's own ops (qdq_emitter.cc, ngraph_emitter.cc). The pass picks the emitter by its `target`
// option and never branches on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "passes/node_emitter.h"
#include "passes/param_layout.h"
#include "qonnx/ir/model.h"
#include "qonnx/pass/pass.h"
#include "qonnx/quant/params.h"

namespace qonnx::passes::lowering {

// The zero point fits the integer type of `storage_bits` bits (8 or 16) holding the codes: a storage
// cast would saturate it.
bool zero_point_fits(const quant::QuantParams& p, int storage_bits);
Result<Tensor> to_storage(const Tensor& floats, DType dtype);

// X as float32: QONNX computes in float32 whatever type X is stored in (the kernels convert it too),
// and the emitted ops then see one element type.
Result<ir::Value*> float32_x(const ir::Graph& g, NodeEmitter& e, ir::Value* x);
// Clip(q, min, max) with the bounds in the codes' storage type.
Result<ir::Value*> emit_int_clip(NodeEmitter& e, ir::Value* q, DType storage, const quant::IntRange& r);

// What an emitter's ops can hold in the model being lowered.
struct Capabilities {
  bool wide_codes = false;         // int4/uint4 and int16/uint16 codes (QDQ from opset 21)
  bool block_size = false;         // a dequantize op with block_size (QDQ from opset 21)
  bool float8 = false;             // float8 codes (QDQ from opset 19): FloatQuant is lowered
  bool zero_point_always = false;  // the dequantize op takes its zero point even with int32 codes and z = 0
};

// Where a dequantize op's scale varies: per tensor, along an axis, or in blocks along an axis.
struct DequantizeLayout {
  bool per_axis = false;
  int64_t axis = 0;
  int64_t block = 0;  // 0: no blocks
};

class Lowering;

// Writes quantizers in one backend's ops. An emitter also declares, on the pass that owns it, the
// statistics of the forms it emits.
class QuantEmitter {
 public:
  virtual ~QuantEmitter() = default;
  virtual Capabilities capabilities(int64_t opset, bool byte_codes) const = 0;
  // Once per run, after every graph, whether anything was lowered or not (e.g. the emitter's domain import).
  virtual void finish_model(ir::Model& model) const {}
  // The dequantize op's name, for report lines.
  virtual const char* dequantize_op() const = 0;
  // The last node of a weight: (codes, scale[, zero point]) -> float, replacing the quantizer.
  virtual Status finish_dequantize(NodeEmitter& e, const std::vector<ir::Value*>& inputs, const DequantizeLayout& layout) const = 0;
  // An activation Quant in the emitter's own ops when they compute it exactly (or, where the option
  // allows, approximately): true when emitted; false leaves it to the exact float emulation.
  virtual Result<bool> lower_activation(Lowering& l, ir::Node* node, const quant::QuantParams& p, const Layout& scale_layout,
                                        int64_t x_rank) = 0;
  // A FloatQuant (only asked when capabilities().float8): true when lowered, false when left.
  virtual Result<bool> lower_float_quant(Lowering& l, ir::Node* node, const quant::NodeInputs& in, int64_t x_rank) {
    return false;
  }
};

struct EmitterEntry {
  const char* name;
  const char* description;  // for the option's help
  std::unique_ptr<QuantEmitter> (*make)(pass::Pass* owner);
};
// Every emitter, in the order the option lists them.
const std::vector<EmitterEntry>& emitters();

std::unique_ptr<QuantEmitter> make_qdq_emitter(pass::Pass* owner);
std::unique_ptr<QuantEmitter> make_ngraph_emitter(pass::Pass* owner);

// The pass's statistics of the forms every emitter shares.
struct SharedStatistics {
  pass::Statistic& left;
  pass::Statistic& weights_to_dequantize;
  pass::Statistic& weights_folded_float;
  pass::Statistic& activations_to_float_ops;
};

struct Settings {
  Capabilities caps;
  bool strict = false;
  bool allow_approximate = false;
};

// One run of lower-quant over a model: the shared forms, and what emitters need from the run.
class Lowering {
 public:
  Lowering(ir::Model& model, pass::PassContext& ctx, QuantEmitter& emitter, const Settings& settings, const SharedStatistics& stats)
      : model_(model), ctx_(ctx), emitter_(emitter), settings_(settings), stats_(stats) {}

  // Lowers `node` (a quantizer of the graph); returns whether it changed the graph.
  Result<bool> lower(ir::Node* node);

  ir::Model& model() { return model_; }
  pass::PassContext& ctx() { return ctx_; }
  const Settings& settings() const { return settings_; }
  const SharedStatistics& stats() const { return stats_; }
  // Records why `node` stays a QONNX op: an error with strict, else a warning; returns false (no change).
  Result<bool> leave(ir::Node* node, const std::string& why);

 private:
  Status lower_constant_quant(ir::Node* node, const quant::NodeInputs& in, const quant::QuantParams& p);
  Status lower_activation_quant(ir::Node* node, const quant::QuantParams& p, int64_t x_rank);
  Status emit_float_quant(ir::Graph& g, ir::Node* node, const quant::QuantParams& p);
  Status lower_bipolar(ir::Node* node, const quant::NodeInputs& in);
  Status lower_trunc(ir::Node* node, const quant::NodeInputs& in);
  // Replaces `node` by `value` computed with the kernels (a weight no integer form fits).
  Status fold_to_float(ir::Node* node, const std::vector<const Tensor*>& inputs, const std::string& why);

  ir::Model& model_;
  pass::PassContext& ctx_;
  QuantEmitter& emitter_;
  const Settings& settings_;
  const SharedStatistics& stats_;
};

}  // namespace qonnx::passes::lowering
