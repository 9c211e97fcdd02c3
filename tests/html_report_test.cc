// The HTML report pages (`cost --html`, `range --html`, analysis/html_chart.h) rendered in headless
// Chromium: a probe script added to each page measures every text element of every chart against the
// chart's box (and against the other texts of that chart) and every bar's drawn width, and writes the
// result into the DOM, which `chromium --dump-dom` prints. The test fails on any text outside its chart
// or overlapping another, and on bars whose lengths are not proportional to their values. Pages from
// generated models (1 and 200 layers, long names), shared models, and charts of adversarial labels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "analysis/html_chart.h"
#include "qonnx/analysis/inference_cost.h"
#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx {
namespace {

constexpr const char* kQ = dialect::kGeneralDomain;

// Measures the page as laid out: one line per finding, "done" last.
constexpr const char* kProbe = R"(<script>
(function () {
  const lines = [];
  const charts = document.querySelectorAll('svg.chart');
  charts.forEach(function (svg, i) {
    const box = svg.getBoundingClientRect();
    const texts = Array.from(svg.querySelectorAll('text')).map(function (t) {
      return {t: t.textContent, b: t.getBoundingClientRect()};
    });
    const bars = svg.querySelectorAll('rect[data-value]');
    lines.push('chart ' + i + ' texts ' + texts.length + ' bars ' + bars.length + ' width ' + box.width.toFixed(1));
    texts.forEach(function (x) {
      const b = x.b;
      if (b.width <= 0) lines.push('empty ' + i + ' ' + x.t);
      if (b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 || b.bottom > box.bottom + 0.5)
        lines.push('overflow ' + i + ' ' + x.t + ' [' + b.left.toFixed(1) + ',' + b.right.toFixed(1) + '] outside [' +
                   box.left.toFixed(1) + ',' + box.right.toFixed(1) + ']');
    });
    const byTop = texts.slice().sort(function (a, b) { return a.b.top - b.b.top; });
    for (let p = 0; p < byTop.length; ++p)
      for (let q = p + 1; q < byTop.length && byTop[q].b.top < byTop[p].b.bottom; ++q) {
        const a = byTop[p].b, b = byTop[q].b;
        if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5)
          lines.push('overlap ' + i + ' ' + byTop[p].t + ' | ' + byTop[q].t);
      }
    bars.forEach(function (r) {
      lines.push('bar ' + i + ' ' + r.getAttribute('data-series') + ' ' + r.getAttribute('data-value') + ' ' +
                 r.getBoundingClientRect().width.toPrecision(6));
    });
  });
  lines.push('done');
  const pre = document.createElement('pre');
  pre.id = 'qonnx-cc-layout';
  pre.textContent = lines.join('\n');
  document.body.appendChild(pre);
})();
</script>)";

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const std::string found = "/usr/bin/" + std::string(name);
    if (std::filesystem::exists(found)) return found;
  }
  return "";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Bar {
  int series = 0;
  double value = 0, width = 0;
};

struct Layout {
  int charts = 0, texts = 0;
  std::vector<std::string> problems;  // overflow / overlap / empty lines
  std::map<int, std::vector<Bar>> bars;  // by chart
};

// The page at `html_path` with the probe added, through `chromium --dump-dom`.
Layout measure(const std::string& html_path, const std::string& window = "1280,1024") {
  Layout layout;
  const std::string browser = chromium();
  if (browser.empty()) {
    ADD_FAILURE() << "chromium is not installed: run `make deps` (scripts/install-deps.sh installs the Debian package chromium)";
    return layout;
  }
  std::string page = read_text(html_path);
  const size_t body_end = page.rfind("</body>");
  if (body_end == std::string::npos) {
    ADD_FAILURE() << html_path << ": no </body>";
    return layout;
  }
  page.insert(body_end, kProbe);
  const std::string probe = html_path + ".probe.html";
  std::ofstream(probe, std::ios::binary) << page;
  const std::string cmd = "timeout 180 " + browser +
                          " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --window-size=" + window +
                          " --user-data-dir=" + html_path + ".profile --dump-dom 'file://" + probe + "' 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string dom;
  char buf[65536];
  for (size_t n; pipe && (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) dom.append(buf, n);
  const int status = pipe ? ::pclose(pipe) : -1;
  const size_t begin = dom.find("<pre id=\"qonnx-cc-layout\">");
  const size_t end = dom.find("</pre>", begin);
  if (begin == std::string::npos || end == std::string::npos) {
    ADD_FAILURE() << "no layout report from chromium (exit status " << status << ") for " << html_path << "; "
                  << dom.size() << " bytes of DOM";
    return layout;
  }
  std::istringstream lines(dom.substr(begin, end - begin).substr(std::string("<pre id=\"qonnx-cc-layout\">").size()));
  bool done = false;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "chart") {
      int index = 0, texts = 0;
      std::string word;
      words >> index >> word >> texts;
      ++layout.charts;
      layout.texts += texts;
    } else if (kind == "bar") {
      int chart = 0;
      Bar bar;
      words >> chart >> bar.series >> bar.value >> bar.width;
      layout.bars[chart].push_back(bar);
    } else if (kind == "done") {
      done = true;
    } else {
      layout.problems.push_back(line);
    }
  }
  EXPECT_TRUE(done) << html_path;
  return layout;
}

// No text outside its chart or over another; every chart has text; bars proportional to their values
// (one length per unit within a chart) and different values drawn with different lengths.
void expect_clean(const std::string& html_path, int expected_charts, const std::string& window = "1280,1024") {
  SCOPED_TRACE(html_path + " at " + window);
  const Layout layout = measure(html_path, window);
  EXPECT_EQ(layout.charts, expected_charts);
  EXPECT_GT(layout.texts, 0);
  for (const auto& p : layout.problems) ADD_FAILURE() << p;
  for (const auto& [chart, bars] : layout.bars) {
    // The length per unit from the longest bar: the one least changed by rounding.
    const auto longest = std::max_element(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.value < b.value; });
    const double per_unit = longest->value > 0 ? longest->width / longest->value : 0;
    for (const Bar& b : bars) {
      EXPECT_NEAR(b.width, b.value * per_unit, 0.02 + 1e-4 * b.width) << "chart " << chart << " value " << b.value;
      if (b.value > 0) {
        EXPECT_GT(b.width, 0) << "chart " << chart;
      }
    }
  }
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

Tensor random_tensor(std::mt19937& rng, Dims dims, float lo, float hi) {
  Tensor t(DType::kFloat, dims);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

void add_quant(io::ModelBuilder& b, const std::string& in, const std::string& out, const Tensor& scale, int bits, bool is_signed) {
  b.initializer(out + "_s", scale).initializer(out + "_z", test::f32s(0)).initializer(out + "_b", test::f32s(static_cast<float>(bits)));
  b.node("Quant", {in, out + "_s", out + "_z", out + "_b"}, {out}, kQ)
      .attr("signed", is_signed ? 1 : 0)
      .attr("narrow", 0)
      .attr("rounding_mode", "ROUND")
      .name(out + "/quantizer");
}

// A chain of `layers` quantized MatMul layers of varying widths and bit widths, tensors and nodes with
// long names (one of 200 characters).
io::ModelBuilder long_named_mlp(int layers, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> width(4, 24);
  std::uniform_int_distribution<int> bits(2, 8);
  io::ModelBuilder b;
  int64_t channels = width(rng);
  b.import(kQ, 1).input("x", DType::kFloat, {1, channels});
  std::string in = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string stem = "encoder/stage_" + std::to_string(i) + "/a_rather_long_descriptive_layer_name_for_the_projection" +
                             (i == 0 ? std::string(120, 'W') : "");
    const std::string xq = stem + "/activation_quantized";
    add_quant(b, in, xq, test::f32s(i == 0 ? 0.25f : 0.5f), bits(rng), i == 0);
    const int64_t next = width(rng);
    const std::string w = stem + "/weight";
    b.initializer(w, random_tensor(rng, {channels, next}, -1.0f, 1.0f));
    add_quant(b, w, w + "_quantized", random_tensor(rng, {1, next}, 0.05f, 0.3f), bits(rng), true);
    b.node("MatMul", {xq, w + "_quantized"}, {stem + "/matmul_out"}).name(stem + "/MatMul");
    b.node("Relu", {stem + "/matmul_out"}, {stem + "/relu_out"}).name(stem + "/Relu");
    in = stem + "/relu_out";
    channels = next;
  }
  b.output(in, DType::kFloat);
  return b;
}

class HtmlReport : public test::TempDirTest {
 protected:
  // Both pages of `model` through the CLI; the number of charts each must have.
  void check_pages(const std::string& model, const std::string& name) {
    const std::string cost = path(name + ".cost.html"), range = path(name + ".range.html");
    auto c = test::run_cli("cost " + model + " --html " + cost);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    auto r = test::run_cli("range " + model + " --html " + range);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    for (const std::string& page : {cost, range}) {
      const std::string text = read_text(page);
      EXPECT_EQ(text.rfind("<!DOCTYPE html>", 0), 0u) << page;
      EXPECT_EQ(text.find("src="), std::string::npos) << page;   // nothing loaded from elsewhere
      EXPECT_EQ(text.find("href="), std::string::npos) << page;
      EXPECT_EQ(text.find("<script"), std::string::npos) << page;
      const int charts = count(text, "<svg ");
      EXPECT_GE(charts, 1) << page;
      expect_clean(page, charts);
    }
  }
};

TEST_F(HtmlReport, OneLayerWithLongNamesRendersInsideItsCharts) {
  auto b = long_named_mlp(1, 1);
  ASSERT_TRUE(io::write_file_atomic(path("one.onnx"), b.serialize()).is_ok());
  check_pages(path("one.onnx"), "one");
}

TEST_F(HtmlReport, TwoHundredLayersRenderInsideTheirCharts) {
  auto b = long_named_mlp(200, 2);
  ASSERT_TRUE(io::write_file_atomic(path("deep.onnx"), b.serialize()).is_ok());
  check_pages(path("deep.onnx"), "deep");
  // The cost page lists every layer and sizes every accumulator (all 200 have integer inputs and codes).
  const std::string cost = read_text(path("deep.cost.html"));
  EXPECT_NE(cost.find("accumulators sized: 200 of 200 layers"), std::string::npos);
}

TEST_F(HtmlReport, SharedModelsRenderInsideTheirCharts) {
  int checked = 0;
  for (const char* tail : {"qonnx_model_zoo/TFC_2W2A.onnx", "bsd300x3-espcn/subpixel/quant_model.onnx"}) {
    const auto model = test::shared_model(tail);
    if (model.empty()) continue;
    check_pages(model.string(), std::to_string(checked++));
  }
  EXPECT_GT(checked, 0) << "no shared model found under " << QONNX_SHARED_MODELS;
}

// Charts of adversarial labels (very long, wide letters, markup characters, non-ASCII) and values
// spanning six decades, in a wide and a narrow window.
TEST_F(HtmlReport, AdversarialLabelsStayInsideTheirCharts) {
  std::mt19937 rng(7);
  const std::vector<std::string> labels = {"", "x", std::string(300, 'W'), std::string(300, 'i'), "<&>\"quoted\" & more",
                                           "\u00e9\u00e8\u4e2d\u6587\u540d\u5b57 \u2014 \u03b1\u03b2\u03b3", "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM",
                                           "layer/with/a/path/that/goes/on/for/a/while/and/then/some/more/segments"};
  std::vector<analysis::html::BarRow> single, grouped;
  std::vector<analysis::html::IntervalRow> intervals;
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < 40; ++k) {
    const std::string label = labels[k % labels.size()] + (k >= labels.size() ? std::to_string(k) : "");
    const double v = std::pow(10.0, std::uniform_real_distribution<double>(0, 6)(rng));
    single.push_back({label, {v}, {analysis::html::human(v) + " bits (SCALEDINT<8>) " + labels[(k + 3) % labels.size()].substr(0, 40)}});
    grouped.push_back({label, {v, v / 3, k % 5 == 0 ? -1.0 : 32.0}, {"in", "weight " + std::to_string(k), k % 5 == 0 ? "" : "acc"}});
    const double lo = k % 7 == 0 ? -inf : -v * (k % 3 == 0 ? 0 : 1e-4), hi = k % 11 == 0 ? inf : v;
    intervals.push_back({label, lo, hi, "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]"});
  }
  intervals.push_back({"point", 0.5, 0.5, "[0.5, 0.5]"});
  std::string page = analysis::html::page_begin("adversarial", "Adversarial labels " + std::string(60, 'W'));
  page += analysis::html::bar_chart("single", {{"values", "#4e79a7"}}, single);
  page += analysis::html::bar_chart("grouped", {{"input bits", "#59a14f"}, {std::string(90, 'W'), "#f28e2b"}, {"accumulator bits", "#b07aa1"}},
                                    grouped);
  page += analysis::html::interval_chart("intervals", intervals);
  page += analysis::html::interval_chart("one row", {{std::string(400, 'm'), -3, 2, "x"}});
  page += analysis::html::bar_chart("empty", {{"values", "#4e79a7"}}, {});
  page += analysis::html::page_end();
  ASSERT_TRUE(io::write_file_atomic(path("adversarial.html"), page).is_ok());
  expect_clean(path("adversarial.html"), 5);
  expect_clean(path("adversarial.html"), 5, "420,800");
}

// Bars: length / value is one constant per chart, so different values get different lengths; zero
// draws nothing; a negative value (no bar) draws no rect. Checked on the SVG the module writes.
TEST(HtmlChart, BarLengthsAreProportionalToValues) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<analysis::html::BarRow> rows;
    std::vector<double> values;
    const int n = 1 + trial * 10;
    for (int k = 0; k < n; ++k) {
      values.push_back(k == 0 ? 0 : std::floor(std::uniform_real_distribution<double>(1, 1e6)(rng)));
      rows.push_back({"row" + std::to_string(k), {values.back(), -1.0}, {"t", ""}});
    }
    const std::string svg = analysis::html::bar_chart("t", {{"a", "#000"}, {"b", "#111"}}, rows);
    std::vector<double> widths;
    for (size_t pos = 0; (pos = svg.find("data-value=", pos)) != std::string::npos; ++pos) {
      const size_t rect = svg.rfind("<rect", pos), w = svg.find("width=\"", rect) + 7;
      widths.push_back(std::stod(svg.substr(w)));
    }
    ASSERT_EQ(widths.size(), values.size());  // no rect for the negative (absent) series
    const double max = *std::max_element(values.begin(), values.end());
    for (size_t k = 0; k < values.size(); ++k) {
      EXPECT_NEAR(widths[k], max > 0 ? values[k] / max * widths[std::max_element(values.begin(), values.end()) - values.begin()] : 0, 1e-3);
      for (size_t j = 0; j < k; ++j)
        if (values[j] != values[k]) {
          EXPECT_NE(widths[j], widths[k]);
        }
    }
  }
}

TEST(HtmlChart, FitTextShortensInTheMiddleWithinTheWidth) {
  for (const std::string& s : {std::string(500, 'W'), std::string("conv_") + std::string(200, 'x') + "_out0",
                               std::string("\u4e2d\u6587") + std::string(100, 'a')}) {
    const std::string fitted = analysis::html::fit_text(s, 12, 200);
    EXPECT_LE(analysis::html::text_width(fitted, 12), 200);
    EXPECT_NE(fitted.find("\u2026"), std::string::npos);
    EXPECT_EQ(fitted.substr(0, 1), s.substr(0, 1));
  }
  EXPECT_EQ(analysis::html::fit_text("short", 12, 200), "short");
  // Wider letters are estimated wider, and the estimate grows with the length.
  EXPECT_GT(analysis::html::text_width("WWWW", 12), analysis::html::text_width("iiii", 12));
  EXPECT_GT(analysis::html::text_width("abcde", 12), analysis::html::text_width("abcd", 12));
}

// The accumulator widths in `cost --breakdown` are those of `range` on the same model, per layer (the
// cost names the layers as qonnx does, MatMul_<k> in graph order), and their sum is the total.
TEST_F(HtmlReport, CostBreakdownReportsTheRangeAccumulators) {
  for (int layers : {1, 3, 12}) {
    auto b = long_named_mlp(layers, 10 + static_cast<unsigned>(layers));
    ASSERT_TRUE(io::write_file_atomic(path("m.onnx"), b.serialize()).is_ok());
    auto range = test::run_cli("range " + path("m.onnx") + " --json");
    ASSERT_EQ(range.exit_code, 0) << range.err;
    auto cost = test::run_cli("cost " + path("m.onnx") + " --breakdown");
    ASSERT_EQ(cost.exit_code, 0) << cost.err;
    int64_t total = 0;
    size_t from = 0;
    for (int k = 0; k < layers; ++k) {
      // range --json lists accumulators in graph order: {"node": ..., "min": M, "max": X, ..., "signed_bits": S, "unsigned_bits": U
      from = range.out.find("\"op_type\": \"MatMul\"", from);
      ASSERT_NE(from, std::string::npos) << range.out;
      auto field = [&](const std::string& key) { return std::stoll(range.out.substr(range.out.find("\"" + key + "\": ", from) + key.size() + 4)); };
      const int64_t min = field("min"), max = field("max"), bits = min >= 0 ? field("unsigned_bits") : field("signed_bits");
      ++from;
      total += bits;
      const std::string entry = "\"MatMul_" + std::to_string(k) + "\": {";
      const size_t at = cost.out.find(entry, cost.out.find("\"node_accumulator\""));
      ASSERT_NE(at, std::string::npos) << cost.out;
      const std::string body = cost.out.substr(at, cost.out.find('}', at) - at);
      EXPECT_NE(body.find("\"bits\": " + std::to_string(bits) + ","), std::string::npos) << body;
      EXPECT_NE(body.find("\"min\": " + std::to_string(min) + ","), std::string::npos) << body;
      EXPECT_NE(body.find("\"max\": " + std::to_string(max) + ","), std::string::npos) << body;
    }
    EXPECT_NE(cost.out.find("\"total_accumulator_bits\": " + std::to_string(total) + ",\n"), std::string::npos) << cost.out;
    // Without --breakdown, qonnx's keys only.
    auto plain = test::run_cli("cost " + path("m.onnx"));
    EXPECT_EQ(plain.out.find("accumulator"), std::string::npos);
  }
}

}  // namespace
}  // namespace qonnx
