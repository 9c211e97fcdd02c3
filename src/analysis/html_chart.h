// Self-contained HTML report pages (cost --html, range --html): the page frame and inline-SVG charts
// whose every text lies inside its chart. Text widths are estimated from DejaVu Sans advance widths (the
// widest of the usual sans-serif fonts; the pages ask for it first) and each chart's viewBox is sized
// from them, so no label is cut at an edge; labels longer than a column are shortened in the middle and
// keep the whole name in a tooltip. Bars are proportional to their values (data-value holds the value).
#pragma once

#include <string>
#include <vector>

namespace qonnx::analysis::html {

std::string escape(const std::string& text);
// Large counts as 12.3M / 4.56G; below 1000 as an integer.
std::string human(double v);
// An upper bound of the width in px of `text` (UTF-8) drawn at `font_px` in the pages' fonts.
double text_width(const std::string& text, double font_px);
// `text` shortened in the middle ("conv_…_out0") until it is at most `max_px` wide at `font_px`.
std::string fit_text(const std::string& text, double font_px, double max_px);

// <!DOCTYPE html> ... <body><h1>heading</h1>, and the closing tags.
std::string page_begin(const std::string& title, const std::string& heading);
std::string page_end();

struct Series {
  std::string name, color;
};

// One row of a bar chart: a bar per series (a negative value: no bar), each followed by its text.
struct BarRow {
  std::string label;
  std::vector<double> values;
  std::vector<std::string> texts;
};

// Horizontal bars, one group per row, all series on one linear scale from 0: lengths are proportional.
// A legend is drawn when there is more than one series.
std::string bar_chart(const std::string& title, const std::vector<Series>& series, const std::vector<BarRow>& rows);

struct IntervalRow {
  std::string label;
  double lo = 0, hi = 0;  // infinite ends run to the chart's edge with an arrow
  std::string text;
};

// Intervals on a symmetric log axis (linear near 0, logarithmic beyond the smallest non-zero bound), the
// value 0 marked, tick labels below; each row's text in a column to the right of the axis.
std::string interval_chart(const std::string& title, const std::vector<IntervalRow>& rows);

// A table: header cells, then rows of cells (escaped here); `numeric` columns are right-aligned.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<bool>& numeric);

}  // namespace qonnx::analysis::html
