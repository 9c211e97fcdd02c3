// qonnx's inference cost model (qonnx/analysis/inference_cost.py, util/inference_cost.py) on a model
// already preprocessed by kCostPreprocessPipeline: MACs per op and per (input, weight) datatype pair,
// weight and output memory per datatype, with zero weights discounted; BOPs and memory bits from the
// datatypes' bit widths. Keys, sums and their order follow qonnx, so the doubles are the same to the bit.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "qonnx/analysis/range.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::analysis {

// qonnx's inference_cost preprocessing as a qonnx-cc pipeline: QONNX domains, shapes, unique
// parameters, datatypes (with SCALEDINT), every constant folded (quantizers included), unused tensors
// and static inputs removed, datatypes again, qonnx's node and tensor names. `clip_aware` narrows
// QCDQ Clip ranges to their true bit width.
std::string cost_preprocess_pipeline(bool clip_aware);

struct CostOptions {
  bool discount_sparsity = true;
  // Only the ops qonnx costs (Conv, MatMul, Gemm, Upsample); ConvTranspose, GlobalAveragePool, Resize
  // and MultiThreshold are then "unsupported", as in qonnx, and so are BipolarQuant, IntQuant and
  // FloatQuant (otherwise free, like Quant).
  bool qonnx_ops_only = false;
};

// Cost entries in the order qonnx creates them ("op_mac_INT2_INT2", "mem_w_INT2", "mem_o_INT32").
using CostTable = std::vector<std::pair<std::string, double>>;

struct NodeCost {
  std::string name, op_type;
  CostTable costs;
  std::string input_datatype, weight_datatype, output_datatype;  // for reports
  int input_bits = 0, weight_bits = 0, output_bits = 0;           // 0: no weight
};

// Sums of a table: BOPs and MACs over op_mac_*, bits and elements over mem_w_* / mem_o_*.
struct CostTotals {
  double bops = 0, macs = 0, mem_w_bits = 0, mem_w_elems = 0, mem_o_bits = 0, mem_o_elems = 0;
};

struct InferenceCost {
  std::vector<NodeCost> nodes;                             // costed nodes, graph order
  CostTable total;                                         // all nodes' tables summed, qonnx's key order
  std::vector<std::pair<std::string, CostTable>> optypes;  // per op type, first appearance order
  std::set<std::string> unsupported;                       // op types neither costed nor free
  bool discount_sparsity = true;
  std::vector<std::string> warnings;
  // Exact accumulator ranges of the costed linear layers (qonnx-cc range), `node` named as in `nodes`;
  // filled by api::cost, empty when the analysis found none.
  std::vector<Accumulator> accumulators;
};

Result<InferenceCost> inference_cost(const ir::Model& model, const CostOptions& options);
CostTotals cost_totals(const CostTable& table);

// qonnx's JSON (json.dump(sort_keys=True, indent=2), floats as Python prints them): {"total_cost": ...}
// with "optype_cost" and "node_cost" when `breakdown`, and then also (beyond qonnx) "node_accumulator"
// (per layer: min, max, signed/unsigned bits, "bits" the narrower that holds it, attained) and
// "total_accumulator_bits"; `flat`: the 2021 layout (the totals at top level).
std::string cost_json(const InferenceCost& cost, bool breakdown, bool flat);
// Python's repr of a float (1345500.0, 1e+16, 0.0001, 1.5e-05): shortest digits that round-trip.
std::string python_float(double v);
// A self-contained HTML page: totals, then per-layer bars (MACs, weight bits, bit widths of input,
// weight and accumulator) in inline SVG sized to their labels, and a per-layer table.
std::string cost_html(const InferenceCost& cost, const std::string& title);

}  // namespace qonnx::analysis
