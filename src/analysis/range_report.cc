#include "qonnx/analysis/range_report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "qonnx/support/json.h"

namespace qonnx::analysis {

namespace {

// Shortest text that reads back as the same value: as a float32 when the value is one (the ranges of
// float32 tensors), else as a double.
std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const float f = static_cast<float>(v);
  return static_cast<double>(f) == v ? fmt::format("{}", f) : fmt::format("{}", v);
}
std::string interval(Interval i) { return "[" + number(i.lo) + ", " + number(i.hi) + "]"; }

// Rows of cells as columns padded to their widest cell, each line indented by two spaces.
std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) line += " " + (c + 1 < row.size() ? fmt::format("{:<{}}", row[c], width[c]) : row[c]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

bool uniform(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
}

// "[-3, 4] x 0.5, zero point 0": the integer range over all channels and the scale (when it is one).
std::string integer_form(const ScaledInt& s) {
  if (s.lo.empty() || s.scale.empty()) return "";
  std::string out = fmt::format("[{}, {}] x ", *std::min_element(s.lo.begin(), s.lo.end()),
                                *std::max_element(s.hi.begin(), s.hi.end()));
  out += uniform(s.scale) ? number(s.scale[0]) : "per-channel scale";
  if (!s.zero_point.empty() && uniform(s.zero_point)) out += ", zero point " + number(s.zero_point[0]);
  return out;
}

bool passes(const std::string& name, const ReportOptions& options) {
  return options.key_filter.empty() || name.find(options.key_filter) != std::string::npos;
}

// Names of the values that depend on a runtime input (the rest are constants qonnx folds away).
std::set<std::string> dynamic_values(const ir::Graph& graph, const RangeAnalysis& a) {
  std::set<std::string> dynamic;
  for (const ir::Value* in : graph.runtime_inputs()) dynamic.insert(in->name());
  for (const std::string& name : a.order) {  // topological: producers' inputs are decided first
    const ir::Value* v = graph.find_value(name);
    const ir::Node* p = v ? v->producer() : nullptr;
    if (!p) continue;
    for (const ir::Value* in : p->inputs())
      if (in && dynamic.count(in->name())) {
        dynamic.insert(name);
        break;
      }
  }
  return dynamic;
}

std::vector<StuckChannel> filtered_stuck(const ir::Graph& graph, const RangeAnalysis& a, const ReportOptions& options) {
  std::vector<StuckChannel> out;
  for (StuckChannel& s : stuck_channels(graph, a, options.mode == ReportMode::kZeroStuckChannel))
    if (passes(s.tensor, options)) out.push_back(std::move(s));
  return out;
}

std::string attainment(const Accumulator& acc) {
  if (acc.attained) return "attained";
  if (acc.not_attained.empty()) return "bound (attainment not checked)";
  return "bound, not attained (" + acc.not_attained + ")";
}

std::string thresholds_text(const RangeAnalysis& a, const ReportOptions& options) {
  std::vector<std::vector<std::string>> rows{{"node", "input int", "thresholds as integers", "signed bits",
                                              "unsigned bits", "always crossed", "never crossed"}};
  for (const ThresholdWidth& t : a.thresholds) {
    if (!passes(t.node, options) && !passes(t.input, options)) continue;
    if (!t.note.empty()) {
      rows.push_back({t.node, "", t.note});
      continue;
    }
    rows.push_back({t.node, fmt::format("[{}, {}]", t.input_lo, t.input_hi), fmt::format("[{}, {}]", t.min, t.max),
                    std::to_string(t.signed_bits), t.unsigned_bits ? std::to_string(t.unsigned_bits) : "-",
                    std::to_string(t.always_crossed), std::to_string(t.never_crossed)});
  }
  if (rows.size() == 1) return "";
  return fmt::format("\nMultiThreshold thresholds ({}):\n", a.thresholds.size()) + aligned(rows);
}

std::string accumulators_text(const RangeAnalysis& a, const ReportOptions& options) {
  std::vector<std::vector<std::string>> rows{{"node", "op", "output", "accumulator", "terms", "signed bits",
                                              "unsigned bits", ""}};
  for (const Accumulator& acc : a.accumulators) {
    if (!passes(acc.node, options) && !passes(acc.output, options)) continue;
    rows.push_back({acc.node, acc.op_type, acc.output, fmt::format("[{}, {}]", acc.min, acc.max),
                    std::to_string(acc.reduction), std::to_string(acc.signed_bits),
                    acc.unsigned_bits ? std::to_string(acc.unsigned_bits) : "-",
                    attainment(acc)});
    if (options.per_channel)
      for (size_t c = 0; c < acc.lo.size(); ++c)
        rows.push_back({"", "", fmt::format("  [{}]", c), fmt::format("[{}, {}]", acc.lo[c], acc.hi[c])});
  }
  if (rows.size() == 1) return "";
  return fmt::format("\naccumulators ({}):\n", a.accumulators.size()) + aligned(rows);
}

std::string ranges_text(const RangeAnalysis& a, const ReportOptions& options) {
  std::vector<std::vector<std::string>> rows{{"tensor", "range", "integer form", "note"}};
  for (const std::string& name : a.order) {
    if (!passes(name, options)) continue;
    const TensorRange& r = a.tensors.at(name);
    rows.push_back({name, interval(r.all), r.scaled_int ? integer_form(*r.scaled_int) : "", r.note});
    if (!options.per_channel) continue;
    for (size_t c = 0; c < r.channels.size(); ++c) {
      std::string form;
      if (r.scaled_int && r.scaled_int->lo.size() == r.channels.size()) {
        const ScaledInt& s = *r.scaled_int;
        form = fmt::format("[{}, {}] x {}", s.lo[c], s.hi[c], number(s.scale[s.scale.size() == 1 ? 0 : c]));
      }
      rows.push_back({fmt::format("  [{}]", c), interval(r.channels[c]), form, ""});
    }
  }
  return aligned(rows);
}

std::string stuck_text(const ir::Graph& graph, const RangeAnalysis& a, const ReportOptions& options) {
  const std::vector<StuckChannel> stuck = filtered_stuck(graph, a, options);
  std::set<std::string> tensors;
  for (const StuckChannel& s : stuck) tensors.insert(s.tensor);
  const bool zero = options.mode == ReportMode::kZeroStuckChannel;
  std::string out = fmt::format("{} channel{} in {} tensor{} {} over the input ranges\n", stuck.size(),
                                stuck.size() == 1 ? "" : "s", tensors.size(), tensors.size() == 1 ? "" : "s",
                                zero ? "stuck at zero" : "stuck at a constant");
  if (stuck.empty()) return out;
  std::vector<std::vector<std::string>> rows{{"tensor", "channel", "value"}};
  for (const StuckChannel& s : stuck) rows.push_back({s.tensor, std::to_string(s.channel), number(s.value)});
  return out + aligned(rows);
}

void write_interval(JsonWriter& j, Interval i) {
  j.begin_array();
  for (double v : {i.lo, i.hi}) std::isinf(v) ? j.value(v > 0 ? "inf" : "-inf") : j.value(v);
  j.end_array();
}
void write_bound(JsonWriter& j, double v) { std::isinf(v) ? j.value(v > 0 ? "inf" : "-inf") : j.value(v); }

// qonnx's range entry: [lo, hi], or [[lo per channel], [hi per channel]] when the channels differ.
void write_qonnx_range(JsonWriter& j, const TensorRange& r) {
  const bool same = std::all_of(r.channels.begin(), r.channels.end(), [&](const Interval& c) {
    return c.lo == r.channels[0].lo && c.hi == r.channels[0].hi;
  });
  if (r.channels.empty() || same) return write_interval(j, r.all);
  j.begin_array().begin_array();
  for (const Interval& c : r.channels) write_bound(j, c.lo);
  j.end_array().begin_array();
  for (const Interval& c : r.channels) write_bound(j, c.hi);
  j.end_array().end_array();
}

const char* mode_name(ReportMode mode) {
  switch (mode) {
    case ReportMode::kRange: return "range";
    case ReportMode::kStuckChannel: return "stuck_channel";
    case ReportMode::kZeroStuckChannel: return "zerostuck_channel";
  }
  return "range";
}

// What qonnx's report has no place for: every tensor's range, integer form and note, the accumulators.
void write_extra(JsonWriter& j, const RangeAnalysis& a, const ReportOptions& options) {
  j.key(kReportExtraKey).begin_object().key("report_mode").value(mode_name(options.mode));
  j.key("tensors").begin_object();
  for (const std::string& name : a.order) {
    if (!passes(name, options)) continue;
    const TensorRange& r = a.tensors.at(name);
    j.key(name).begin_object().key("range");
    write_interval(j, r.all);
    if (options.per_channel && !r.channels.empty()) {
      j.key("channels").begin_array();
      for (const Interval& c : r.channels) write_interval(j, c);
      j.end_array();
    }
    if (r.scaled_int) {
      const ScaledInt& s = *r.scaled_int;
      j.key("int").begin_object();
      j.key("lo").begin_array();
      for (int64_t x : s.lo) j.value(x);
      j.end_array().key("hi").begin_array();
      for (int64_t x : s.hi) j.value(x);
      j.end_array().key("scale").begin_array();
      for (double x : s.scale) j.value(x);
      j.end_array().key("zero_point").begin_array();
      for (double x : s.zero_point) j.value(x);
      j.end_array().end_object();
    }
    if (!r.note.empty()) j.key("note").value(r.note);
    j.end_object();
  }
  j.end_object().key("accumulators").begin_array();
  for (const Accumulator& acc : a.accumulators) {
    if (!passes(acc.node, options) && !passes(acc.output, options)) continue;
    j.begin_object().key("node").value(acc.node).key("op_type").value(acc.op_type).key("output").value(acc.output);
    j.key("min").value(acc.min).key("max").value(acc.max).key("terms").value(acc.reduction);
    j.key("signed_bits").value(acc.signed_bits).key("unsigned_bits").value(acc.unsigned_bits);
    j.key("attained").value(acc.attained);
    if (!acc.not_attained.empty()) j.key("not_attained").value(acc.not_attained);
    if (options.per_channel) {
      j.key("channels").begin_array();
      for (size_t c = 0; c < acc.lo.size(); ++c) j.begin_array().value(acc.lo[c]).value(acc.hi[c]).end_array();
      j.end_array();
    }
    j.end_object();
  }
  j.end_array().key("thresholds").begin_array();
  for (const ThresholdWidth& t : a.thresholds) {
    if (!passes(t.node, options) && !passes(t.input, options)) continue;
    j.begin_object().key("node").value(t.node).key("input").value(t.input).key("thresholds").value(t.thresholds);
    if (!t.note.empty()) {
      j.key("note").value(t.note).end_object();
      continue;
    }
    j.key("input_int").begin_array().value(t.input_lo).value(t.input_hi).end_array();
    j.key("min").value(t.min).key("max").value(t.max);
    j.key("signed_bits").value(t.signed_bits).key("unsigned_bits").value(t.unsigned_bits);
    j.key("always_crossed").value(t.always_crossed).key("never_crossed").value(t.never_crossed);
    j.end_object();
  }
  j.end_array().end_object();
}

}  // namespace

std::optional<ReportMode> parse_report_mode(const std::string& name) {
  for (ReportMode m : {ReportMode::kRange, ReportMode::kStuckChannel, ReportMode::kZeroStuckChannel})
    if (name == mode_name(m)) return m;
  return std::nullopt;
}

std::vector<StuckChannel> stuck_channels(const ir::Graph& graph, const RangeAnalysis& a, bool zero_only) {
  const std::set<std::string> dynamic = dynamic_values(graph, a);
  std::vector<StuckChannel> out;
  auto add = [&](const std::string& name, int64_t channel, double value) {
    if (!zero_only || value == 0) out.push_back({name, channel, value});
  };
  for (const std::string& name : a.order) {
    const ir::Value* v = graph.find_value(name);
    if (!v || !v->producer() || !dynamic.count(name)) continue;
    const TensorRange& r = a.tensors.at(name);
    if (!r.channels.empty()) {
      for (size_t c = 0; c < r.channels.size(); ++c)
        if (r.channels[c].lo == r.channels[c].hi) add(name, static_cast<int64_t>(c), r.channels[c].lo);
    } else if (r.all.lo == r.all.hi) {
      const auto dims = graph.dims_of(v);
      const int64_t count = dims && dims->size() >= 2 && (*dims)[1] > 0 ? (*dims)[1] : 1;
      for (int64_t c = 0; c < count; ++c) add(name, c, r.all.lo);
    }
  }
  return out;
}

std::string range_text(const ir::Graph& graph, const RangeAnalysis& a, const ReportOptions& options) {
  if (options.mode != ReportMode::kRange) return stuck_text(graph, a, options);
  return ranges_text(a, options) + accumulators_text(a, options) + thresholds_text(a, options);
}

Result<std::string> range_json(const ir::Graph& graph, const RangeAnalysis& a, const ReportOptions& options) {
  if (graph.find_value(kReportExtraKey))
    return Status(Code::kUnsupported, fmt::format("a tensor is named '{}', the JSON report's own key", kReportExtraKey));
  JsonWriter j;
  j.begin_object();
  if (options.mode == ReportMode::kRange) {
    const std::set<std::string> dynamic = dynamic_values(graph, a);
    for (const std::string& name : a.order)
      if (dynamic.count(name) && passes(name, options)) {
        j.key(name);
        write_qonnx_range(j, a.tensors.at(name));
      }
  } else {
    const std::vector<StuckChannel> stuck = filtered_stuck(graph, a, options);
    for (size_t i = 0; i < stuck.size();) {  // grouped by tensor (they come in tensor order)
      const std::string& name = stuck[i].tensor;
      j.key(name).begin_array();
      for (; i < stuck.size() && stuck[i].tensor == name; ++i) {
        if (options.mode == ReportMode::kZeroStuckChannel) {
          j.value(stuck[i].channel);
        } else {
          j.begin_array().value(stuck[i].channel).value(stuck[i].value).end_array();
        }
      }
      j.end_array();
    }
  }
  write_extra(j, a, options);
  j.end_object();
  return j.str() + "\n";
}

}  // namespace qonnx::analysis
