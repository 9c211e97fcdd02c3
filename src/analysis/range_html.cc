// `range --html`: the range analysis as a self-contained page (charts from analysis/html_chart.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/html_chart.h"
#include "qonnx/analysis/range.h"

namespace qonnx::analysis {

namespace {

std::string value(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.9g}", v);
}

// "s" when every entry is s, else "per channel (min .. max)".
std::string uniform_or_span(const std::vector<double>& v) {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *lo == *hi ? value(*lo) : fmt::format("per channel ({} .. {})", value(*lo), value(*hi));
}

std::string int_type(int bits, bool is_unsigned) { return fmt::format("{}INT{}", is_unsigned ? "U" : "", bits); }

}  // namespace

std::string range_html(const RangeAnalysis& a, const std::string& title) {
  std::string page = html::page_begin(title + " - value ranges", "Value ranges: " + title);
  int64_t total_bits = 0;
  int widest = 0;
  for (const Accumulator& acc : a.accumulators) {
    total_bits += accumulator_bits(acc);
    widest = std::max(widest, accumulator_bits(acc));
  }
  const size_t finite = static_cast<size_t>(std::count_if(a.order.begin(), a.order.end(), [&a](const std::string& name) {
    const Interval& i = a.tensors.at(name).all;
    return std::isfinite(i.lo) && std::isfinite(i.hi);
  }));
  page += fmt::format(
      "<p>{} tensors, {} with a finite range; {} accumulators, {} bits in all, the widest {} bits. Every value any "
      "execution produces on inputs in the given ranges lies inside its interval.</p>\n",
      a.order.size(), finite, a.accumulators.size(), total_bits, widest);

  std::vector<html::BarRow> acc_rows;
  std::vector<std::vector<std::string>> acc_table;
  for (const Accumulator& acc : a.accumulators) {
    const int bits = accumulator_bits(acc);
    acc_rows.push_back({acc.node, {static_cast<double>(bits)},
                        {fmt::format("{} [{}, {}]{}", int_type(bits, acc.min >= 0), acc.min, acc.max, acc.attained ? "" : ", bound (padding)")}});
    acc_table.push_back({acc.node, acc.op_type, acc.output, std::to_string(acc.reduction), std::to_string(acc.min),
                         std::to_string(acc.max), std::to_string(acc.signed_bits),
                         acc.unsigned_bits ? std::to_string(acc.unsigned_bits) : "-", acc.attained ? "yes" : "bound, not attained"});
  }
  if (acc_rows.empty()) page += "<h2>Accumulator widths per layer</h2>\n<p>No MatMul, Gemm or Conv over integer-valued inputs.</p>\n";
  else page += html::bar_chart("Accumulator widths per layer (bits)", {{"accumulator bits", "#b07aa1"}}, acc_rows);

  std::vector<html::IntervalRow> intervals;
  std::vector<html::BarRow> int_rows;
  std::vector<std::vector<std::string>> tensor_table;
  for (const std::string& name : a.order) {
    const TensorRange& r = a.tensors.at(name);
    intervals.push_back({name, r.all.lo, r.all.hi, fmt::format("[{}, {}]", value(r.all.lo), value(r.all.hi))});
    std::string ints = "-", scale = "-", zero_point = "-";
    if (r.scaled_int && !r.scaled_int->lo.empty()) {
      const ScaledInt& s = *r.scaled_int;
      const int64_t lo = *std::min_element(s.lo.begin(), s.lo.end()), hi = *std::max_element(s.hi.begin(), s.hi.end());
      const bool is_unsigned = lo >= 0;
      const int bits = is_unsigned ? unsigned_bits_for(lo, hi) : signed_bits_for(lo, hi);
      ints = fmt::format("[{}, {}]", lo, hi);
      scale = uniform_or_span(s.scale);
      zero_point = uniform_or_span(s.zero_point);
      int_rows.push_back({name, {static_cast<double>(bits)}, {fmt::format("{} {} \u00d7 {}", int_type(bits, is_unsigned), ints, scale)}});
    }
    tensor_table.push_back({name, value(r.all.lo), value(r.all.hi), ints, scale, zero_point, r.note});
  }
  page += html::interval_chart("Value range per tensor (symmetric log scale)", intervals);
  if (!int_rows.empty()) page += html::bar_chart("Integer form per quantized tensor (bits of the integer range)", {{"integer bits", "#59a14f"}}, int_rows);

  if (!acc_table.empty())
    page += "<h2>Accumulators</h2>\n" +
            html::table({"node", "op", "output", "terms", "min", "max", "signed bits", "unsigned bits", "attained"}, acc_table,
                        {false, false, false, true, true, true, true, true, false});
  page += "<h2>Tensors</h2>\n" + html::table({"tensor", "lo", "hi", "integer range", "scale", "zero point", "note"}, tensor_table,
                                             {false, true, true, true, true, true, false});
  return page + html::page_end();
}

}  // namespace qonnx::analysis
