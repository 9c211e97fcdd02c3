// Reports of a range analysis (qonnx-cc range): qonnx-range-analysis's report modes (ranges, channels
// stuck at a constant, channels stuck at zero) as an aligned text table or as JSON in qonnx's shape,
// with qonnx-cc's own findings (integer forms, accumulators, notes) under one extra key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qonnx/analysis/range.h"
#include "qonnx/ir/model.h"

namespace qonnx::analysis {

enum class ReportMode { kRange, kStuckChannel, kZeroStuckChannel };

// "range", "stuck_channel", "zerostuck_channel" (qonnx's names); nullopt for anything else.
std::optional<ReportMode> parse_report_mode(const std::string& name);

struct ReportOptions {
  ReportMode mode = ReportMode::kRange;
  bool per_channel = false;  // text: a row per channel; JSON: per-channel lists in the extra key
  std::string key_filter;    // only tensors (and accumulators of nodes / outputs) whose name contains it
};

// The top-level JSON key holding what qonnx's report has no place for. '@' and '-' are not in C90
// identifiers (ONNX's rule for names); a model with a tensor of this name is refused by range_json.
inline constexpr const char* kReportExtraKey = "@qonnx-cc";

// A channel (along axis 1) of a node output whose every value is one constant over the input ranges:
// its interval is a single point. A tensor with only a per-tensor point range is stuck in every
// channel its shape has (channel 0 alone when it has no axis 1).
struct StuckChannel {
  std::string tensor;
  int64_t channel = 0;
  double value = 0;
};

// Stuck channels of the outputs of nodes that depend on a graph input (constants are not reported, as
// qonnx folds them first), in topological order; zero_only keeps the channels stuck at 0 (or -0).
std::vector<StuckChannel> stuck_channels(const ir::Graph& graph, const RangeAnalysis& analysis, bool zero_only);

std::string range_text(const ir::Graph& graph, const RangeAnalysis& analysis, const ReportOptions& options);
Result<std::string> range_json(const ir::Graph& graph, const RangeAnalysis& analysis, const ReportOptions& options);

}  // namespace qonnx::analysis
