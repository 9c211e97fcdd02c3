#include "analysis/html_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace qonnx::analysis::html {

namespace {

constexpr double kFont = 12;        // labels and single-series values (px)
constexpr double kSmallFont = 10;   // values of grouped bars, tick labels
constexpr double kPad = 8;          // around the chart
constexpr double kGap = 6;          // between a label and its bar
constexpr double kAxis = 480;       // bar / axis length
constexpr double kMaxLabel = 320;   // longer labels are shortened in the middle
constexpr double kBar = 12;         // bar thickness
constexpr const char* kFonts = "'DejaVu Sans', Verdana, Arial, Helvetica, sans-serif";

// Advance widths of ASCII 32..126 in DejaVu Sans, in 1/100 em, rounded up (measured in Chromium). Arial,
// Liberation Sans and Helvetica are narrower for every character, so the estimate bounds them too.
constexpr int kAsciiWidth[95] = {
    32, 41, 46, 84, 64, 96, 78, 28, 40, 40, 50, 84, 32, 37, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 34, 34, 84, 84, 84, 54, 100, 71, 69, 70, 77, 64, 58, 78, 76, 30, 30, 66, 56, 87, 75, 79,
    61, 79, 70, 64, 60, 74, 69, 99, 69, 62, 69, 40, 34, 40, 84, 50, 50, 62, 64, 55, 64, 62, 35, 64,
    64, 28, 28, 58, 28, 98, 64, 62, 64, 64, 40, 53, 40, 64, 60, 82, 60, 60, 53, 64, 34, 64, 84};

// UTF-8 code points as byte ranges [begin, end).
std::vector<std::pair<size_t, size_t>> code_points(const std::string& s) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
    out.emplace_back(i, j);
    i = j;
  }
  return out;
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

std::string svg_open(double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\">\n",
      num(width), num(height));
}

// A text element; `anchor` is start, middle or end.
std::string text_at(double x, double y, const std::string& text, double font, const char* anchor, const std::string& full = "") {
  if (text.empty()) return "";
  std::string out = fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\">{}", num(x), num(y), font, anchor,
                                escape(text));
  if (!full.empty() && full != text) out += "<title>" + escape(full) + "</title>";
  return out + "</text>";
}

// y of a baseline that centres text of size `font` on `middle`.
double baseline(double middle, double font) { return middle + 0.36 * font; }

// Shortened labels and the width of the label column.
std::pair<std::vector<std::string>, double> label_column(const std::vector<std::string>& labels) {
  std::vector<std::string> shown;
  double width = 0;
  for (const auto& l : labels) {
    shown.push_back(fit_text(l, kFont, kMaxLabel));
    width = std::max(width, text_width(shown.back(), kFont));
  }
  return {shown, width};
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string human(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}{}", v, units[u]);
}

double text_width(const std::string& text, double font_px) {
  double hundredths = 0;
  for (const auto& [begin, end] : code_points(text)) {
    const unsigned char c = static_cast<unsigned char>(text[begin]);
    if (end - begin > 1) hundredths += 100;  // one em: wide enough for any letter or symbol
    else if (c >= 32 && c < 127) hundredths += kAsciiWidth[c - 32];
  }
  // 5% and 1 px on top: rounding of hinted glyph advances.
  return hundredths / 100 * font_px * 1.05 + 1;
}

std::string fit_text(const std::string& text, double font_px, double max_px) {
  if (text_width(text, font_px) <= max_px) return text;
  const auto cps = code_points(text);
  for (size_t keep = cps.size(); keep-- > 0;) {
    const size_t head = (keep + 1) / 2, tail = keep / 2;
    std::string s = text.substr(0, head == 0 ? 0 : cps[head - 1].second) + "\u2026" +
                    (tail == 0 ? "" : text.substr(cps[cps.size() - tail].first));
    if (text_width(s, font_px) <= max_px) return s;
  }
  return "\u2026";
}

std::string page_begin(const std::string& title, const std::string& heading) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{0}</title>\n<style>"
      "body{{font-family:{2};margin:2em;color:#222}}svg.chart{{max-width:100%;height:auto;display:block}}"
      "svg.chart text{{font-family:{2};fill:#222}}"
      "table{{border-collapse:collapse;margin:0.5em 0}}td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}"
      "td.n{{text-align:right;font-variant-numeric:tabular-nums}}h2{{margin-top:1.5em}}h1,h2,p,td{{overflow-wrap:anywhere}}</style></head><body>\n<h1>{1}</h1>\n",
      escape(title), escape(heading), kFonts);
}

std::string page_end() { return "</body></html>\n"; }

std::string bar_chart(const std::string& title, const std::vector<Series>& series, const std::vector<BarRow>& rows) {
  const size_t S = series.size();
  const double group = static_cast<double>(S) * kBar + static_cast<double>(S - 1) * 2, row_height = group + 8;
  const double value_font = S > 1 ? kSmallFont : kFont;
  std::vector<std::string> labels;
  for (const auto& r : rows) labels.push_back(r.label);
  const auto [shown, label_width] = label_column(labels);
  const double x0 = kPad + label_width + kGap;
  double max = 0;
  for (const auto& r : rows)
    for (double v : r.values) max = std::max(max, v);
  auto length = [max](double v) { return max > 0 && v > 0 ? v / max * kAxis : 0.0; };
  double width = x0 + kAxis + kPad;
  for (const auto& r : rows)
    for (size_t s = 0; s < S && s < r.values.size(); ++s)
      if (s < r.texts.size()) width = std::max(width, x0 + length(r.values[s]) + 4 + text_width(r.texts[s], value_font) + kPad);
  // The legend: swatches with names, wrapped at the chart's width.
  std::string legend;
  double legend_height = 0;
  if (S > 1) {
    double x = kPad, y = kPad;
    for (size_t s = 0; s < S; ++s) {
      const double item = 14 + text_width(series[s].name, kFont);
      width = std::max(width, kPad + item + kPad);
      if (x > kPad && x + item > width - kPad) {
        x = kPad;
        y += 18;
      }
      legend += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>", num(x), num(y + 2), series[s].color);
      legend += text_at(x + 14, baseline(y + 7, kFont), series[s].name, kFont, "start") + "\n";
      x += item + 16;
    }
    legend_height = y + 18 - kPad + 6;
  }
  const double top = kPad + legend_height;
  const double height = top + row_height * static_cast<double>(rows.size()) + kPad;
  std::string svg = "<h2>" + escape(title) + "</h2>\n" + svg_open(width, height) + legend;
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/>\n", num(x0), num(top), num(height - kPad));
  for (size_t k = 0; k < rows.size(); ++k) {
    const BarRow& r = rows[k];
    const double y = top + row_height * static_cast<double>(k) + 4;
    svg += text_at(kPad + label_width, baseline(y + group / 2, kFont), shown[k], kFont, "end", r.label);
    for (size_t s = 0; s < S && s < r.values.size(); ++s) {
      if (r.values[s] < 0) continue;
      const double by = y + static_cast<double>(s) * (kBar + 2), len = length(r.values[s]);
      const std::string text = s < r.texts.size() ? r.texts[s] : "";
      // Six significant digits, not a fixed number of decimals: a bar of 1 next to one of 1e6 keeps its length.
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.6g}\" height=\"{}\" fill=\"{}\" data-value=\"{}\" data-series=\"{}\">"
                         "<title>{}</title></rect>",
                         num(x0), num(by), len, kBar, series[s].color, r.values[s], s,
                         escape(r.label + " \u2014 " + series[s].name + ": " + text));
      if (!text.empty()) svg += text_at(x0 + len + 4, baseline(by + kBar / 2, value_font), text, value_font, "start");
    }
    svg += "\n";
  }
  return svg + "</svg>\n";
}

std::string interval_chart(const std::string& title, const std::vector<IntervalRow>& rows) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // The symmetric log scale: linear up to `t`, the smallest non-zero finite bound (at most 12 decades
  // below the largest, so that the axis stays readable).
  double t = kInf, largest = 0;
  bool open_low = false, open_high = false;
  for (const auto& r : rows)
    for (double v : {r.lo, r.hi}) {
      if (std::isfinite(v) && v != 0) {
        t = std::min(t, std::fabs(v));
        largest = std::max(largest, std::fabs(v));
      }
      open_low = open_low || v == -kInf;
      open_high = open_high || v == kInf;
    }
  if (!std::isfinite(t)) t = largest = 1;
  t = std::max(t, largest * 1e-12);
  auto f = [t](double v) { return std::copysign(std::log10(1 + std::fabs(v) / t), v); };
  double dlo = 0, dhi = 0;
  for (const auto& r : rows)
    for (double v : {r.lo, r.hi})
      if (std::isfinite(v)) {
        dlo = std::min(dlo, f(v));
        dhi = std::max(dhi, f(v));
      }
  if (dlo == dhi) {
    dlo = -1;
    dhi = 1;
  }
  const double span = dhi - dlo;
  if (open_low) dlo -= 0.08 * span;  // room for the arrow of an infinite end
  if (open_high) dhi += 0.08 * span;

  // Tick candidates: 0 and the powers of ten on the axis, with their labels.
  std::vector<double> ticks = {0};
  for (int e = static_cast<int>(std::floor(std::log10(t))); e <= static_cast<int>(std::ceil(std::log10(largest))); ++e)
    for (double sign : {1.0, -1.0}) {
      const double v = sign * std::pow(10.0, e);
      if (f(v) >= dlo && f(v) <= dhi) ticks.push_back(v);
    }
  double half_tick = 0;
  for (double v : ticks) half_tick = std::max(half_tick, text_width(fmt::format("{:g}", v), kSmallFont) / 2);

  std::vector<std::string> labels;
  for (const auto& r : rows) labels.push_back(r.label);
  const auto [shown, label_width] = label_column(labels);
  const double x0 = kPad + std::max(label_width + kGap, half_tick);
  auto px = [&](double v) {
    if (v == -kInf) return x0;
    if (v == kInf) return x0 + kAxis;
    return x0 + (f(v) - dlo) / (dhi - dlo) * kAxis;
  };
  const double text_x = x0 + kAxis + std::max(10.0, half_tick + 4);
  double width = text_x + kPad;
  for (const auto& r : rows) width = std::max(width, text_x + text_width(r.text, kFont) + kPad);
  const double row_height = kBar + 8, top = kPad, axis_y = top + row_height * static_cast<double>(rows.size());
  const double height = axis_y + 6 + kSmallFont * 1.3 + kPad;

  std::string svg = "<h2>" + escape(title) + "</h2>\n" + svg_open(width, height);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/>", num(px(0)), num(top), num(axis_y));
  svg += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#999\"/>\n", num(x0), num(x0 + kAxis), num(axis_y));
  // Ticks: 0 first, then the outermost, each kept when its label clears the ones kept before.
  std::sort(ticks.begin() + 1, ticks.end(), [](double a, double b) { return std::fabs(a) > std::fabs(b) || (std::fabs(a) == std::fabs(b) && a > b); });
  std::vector<std::pair<double, double>> taken;  // label extents
  for (double v : ticks) {
    const std::string label = fmt::format("{:g}", v);
    const double x = px(v), w = text_width(label, kSmallFont);
    const bool clear = std::all_of(taken.begin(), taken.end(), [&](const auto& e) { return x + w / 2 + 6 < e.first || x - w / 2 - 6 > e.second; });
    if (!clear) continue;
    taken.emplace_back(x - w / 2, x + w / 2);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/>", num(x), num(axis_y), num(axis_y + 4));
    svg += text_at(x, axis_y + 4 + kSmallFont, label, kSmallFont, "middle") + "\n";
  }
  for (size_t k = 0; k < rows.size(); ++k) {
    const IntervalRow& r = rows[k];
    const double y = top + row_height * static_cast<double>(k) + 4, middle = y + kBar / 2;
    svg += text_at(kPad + label_width, baseline(middle, kFont), shown[k], kFont, "end", r.label);
    double a = px(r.lo), b = px(r.hi);
    if (b - a < 2) {  // a point (or a very narrow interval) stays visible
      a = std::max(x0, (a + b) / 2 - 1);
      b = std::min(x0 + kAxis, a + 2);
    }
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.3f}\" height=\"{}\" fill=\"#4e79a7\" data-lo=\"{}\" data-hi=\"{}\">"
                       "<title>{}</title></rect>",
                       num(a), num(y), b - a, kBar, r.lo, r.hi, escape(r.label + ": " + r.text));
    if (r.lo == -kInf)
      svg += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"#e15759\"/>", num(x0), num(middle), num(x0 + 8), num(y),
                         num(x0 + 8), num(y + kBar));
    if (r.hi == kInf)
      svg += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"#e15759\"/>", num(x0 + kAxis), num(middle), num(x0 + kAxis - 8),
                         num(y), num(x0 + kAxis - 8), num(y + kBar));
    svg += text_at(text_x, baseline(middle, kFont), r.text, kFont, "start") + "\n";
  }
  return svg + "</svg>\n";
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<bool>& numeric) {
  std::string out = "<table>\n<tr>";
  for (const auto& h : header) out += "<th>" + escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      out += (c < numeric.size() && numeric[c] ? "<td class=\"n\">" : "<td>") + escape(row[c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace qonnx::analysis::html
