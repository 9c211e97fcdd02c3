// `trans-quant-param`: the Ascend TransQuantParamV2 words for given scales (and offsets), decoded
// back to the FP19 scale, offset and signed flag that QuantBatchMatMul reads.
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "qonnx/kernels/ascend.h"
#include "qonnx/support/json.h"

namespace qonnx::cli {

namespace {

struct TransQuantOptions {
  std::vector<float> scale;
  std::vector<float> offset;
  int round_mode = 0;
  bool json = false;
};

std::string format_text(const std::vector<uint64_t>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    const auto p = kernels::ascend::decode_trans_quant_param(words[i]);
    out += fmt::format("{}: 0x{:012X} {} scale={:.9g} offset={} signed={}\n", i, words[i], words[i], p.scale, p.offset,
                       p.is_signed ? 1 : 0);
  }
  return out;
}

std::string format_json(const TransQuantOptions& o, const std::vector<uint64_t>& words) {
  JsonWriter w;
  w.begin_object().key("round_mode").value(o.round_mode).key("words").begin_array();
  for (size_t i = 0; i < words.size(); ++i) {
    const auto p = kernels::ascend::decode_trans_quant_param(words[i]);
    w.begin_object();
    w.key("index").value(i);
    w.key("hex").value(fmt::format("0x{:012X}", words[i]));
    // Words are below 2^47, so they fit an int64 (and a JSON number without precision loss in doubles).
    w.key("decimal").value(static_cast<int64_t>(words[i]));
    w.key("scale").value(static_cast<double>(p.scale));
    w.key("offset").value(static_cast<int64_t>(p.offset));
    w.key("signed").value(p.is_signed);
    w.end_object();
  }
  w.end_array().end_object();
  return w.str() + "\n";
}

// CLI11 reads an empty list item as 0: an empty or blank value is a usage error instead.
const CLI::Validator kNonEmpty(
    [](std::string& item) {
      return item.find_first_not_of(" \t") == std::string::npos ? std::string("an empty value is not a number") : std::string();
    },
    "", "non-empty");

}  // namespace

void add_trans_quant_param_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "trans-quant-param",
      "Print Ascend TransQuantParamV2 uint64 words (hex and decimal) with their FP19 scale, offset and signed flag");
  auto o = std::make_shared<TransQuantOptions>();
  cmd->add_option("--scale", o->scale, "float32 scales, comma-separated")->required()->delimiter(',')->check(kNonEmpty);
  cmd->add_option("--offset", o->offset, "offsets (output zero points), comma-separated; length 1 broadcasts")
      ->delimiter(',')
      ->check(kNonEmpty);
  cmd->add_option("--round-mode", o->round_mode, "0 truncate to FP19 (default), 1 round half to even")
      ->check(CLI::IsMember({0, 1}));
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([&exit_code, o, cmd] {
    std::optional<std::vector<float>> offset;
    if (cmd->count("--offset") > 0) offset = o->offset;
    const size_t ns = o->scale.size(), no = offset ? offset->size() : 1;
    if (ns == 0 || no == 0 || (ns != no && ns != 1 && no != 1)) {
      exit_code = report(Status(Code::kUsage, fmt::format("--scale has {} values and --offset {}: the lists must not "
                                                          "be empty, and their lengths agree unless one of them is 1",
                                                          ns, no)));
      return;
    }
    auto words = kernels::ascend::encode_trans_quant_params(o->scale, offset, o->round_mode);
    if (!words.is_ok()) {
      exit_code = report(words.status());
      return;
    }
    std::string out = o->json ? format_json(*o, words.value()) : format_text(words.value());
    std::fwrite(out.data(), 1, out.size(), stdout);
  });
}

}  // namespace qonnx::cli
