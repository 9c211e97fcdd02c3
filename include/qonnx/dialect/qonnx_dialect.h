// The QONNX dialect in one place: the domain spellings exporters use, the op names and aliases, which
// ops are quantizers, and the version an op runs at. Kernels, passes, schemas and analyses ask here;
// nobody else spells a QONNX domain or op name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qonnx/support/status.h"

namespace qonnx::ir {
class Model;
class Node;
}  // namespace qonnx::ir

namespace qonnx::dialect {

// The canonical domain of the general QONNX ops, as qonnx writes it after loading a model.
inline constexpr const char* kGeneralDomain = "qonnx.custom_op.general";
// NHWC variants of Conv, MaxPool and BatchNormalization.
inline constexpr const char* kChannelsLastDomain = "qonnx.custom_op.channels_last";

// The op types of the general domain (IntQuant is an alias of Quant).
inline constexpr const char* kQuantOp = "Quant";
inline constexpr const char* kIntQuantOp = "IntQuant";
inline constexpr const char* kBipolarQuantOp = "BipolarQuant";
inline constexpr const char* kTruncOp = "Trunc";
inline constexpr const char* kFloatQuantOp = "FloatQuant";
inline constexpr const char* kMultiThresholdOp = "MultiThreshold";
// FINN's integer average pool (Brevitas TruncAvgPool2d); semantics in qonnx/quant/avg_pool.h.
inline constexpr const char* kQuantAvgPool2dOp = "QuantAvgPool2d";

// Every spelling of the general domain seen in exports, canonical first: qonnx.custom_op.general,
// finn.custom_op.general (legacy FINN), finn (bare, which qonnx maps to the general domain), onnx.brevitas.
const std::vector<std::string>& general_domain_spellings();
bool is_general_domain(const std::string& domain);

enum class Op {
  kNone,          // not a QONNX op
  kQuant,         // Quant and its alias IntQuant
  kBipolarQuant,
  kTrunc,
  kFloatQuant,
  kMultiThreshold,
  kQuantAvgPool2d,
  kChannelsLastConv,
  kChannelsLastMaxPool,
  kChannelsLastBatchNormalization,
};

// The QONNX op a (domain, op_type) pair names. The default domain carries the quantizers of 2021
// exports (Quant, IntQuant, BipolarQuant, Trunc), nothing else.
Op classify(const std::string& domain, const std::string& op_type);
Op classify(const ir::Node& node);

// The op types of the general domain, aliases included (Quant, IntQuant, ...), for registration.
const std::vector<std::string>& general_op_types();
// Ops that may appear in the default domain as QONNX ops.
bool allowed_in_default_domain(Op op);

// Quant, BipolarQuant, Trunc and FloatQuant: the ops with a scale that `info`, folding and lowering treat.
bool is_quantizer(Op op);
bool is_quantizer(const ir::Node& node);
// The integer quantizers lowering handles (FloatQuant excluded).
bool is_integer_quantizer(const ir::Node& node);

// The rounding_mode names the QONNX quantizers accept (case-insensitive; HALF_EVEN = ROUND).
const std::vector<std::string>& rounding_mode_names();
bool is_rounding_mode(const std::string& text);

// The verifier (run at load): a QONNX node has exactly the inputs of its op at `version` (Trunc v1: 5,
// v2: 6), one output, and only its op's attributes with their types and values (signed/narrow and the
// FloatQuant flags 0 or 1, a known rounding_mode, a qonnx DataType as MultiThreshold's out_dtype, ...).
// Errors are kInvalidModel, an unknown rounding mode kUnsupported (as the kernels report it).
// Non-QONNX nodes pass.
Status verify_node(const ir::Node& node, int64_t version);
// Every node of every graph (bodies included), naming the first bad node.
Status verify_model(const ir::Model& model);

}  // namespace qonnx::dialect
