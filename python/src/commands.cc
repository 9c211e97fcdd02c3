// The model-changing commands (qonnx/api) for qonnx_cc.commands: options from a dict, results as a dict.
#include "core.h"

#include <memory>

#include <pybind11/stl.h>

#include "qonnx/api/commands.h"

namespace qonnx::python {
namespace {

// `field` takes options[key] when the dict has it, else keeps the options struct's default.
template <typename T>
void option(const py::dict& options, const char* key, T& field) {
  if (options.contains(key)) field = options[key].cast<T>();
}

Model wrap(ir::Model model) { return Model{std::make_shared<ir::Model>(std::move(model))}; }

py::dict convert(const Model& model, const py::dict& options) {
  api::ConvertOptions o;
  option(options, "target", o.target);
  option(options, "passes", o.passes);
  option(options, "target_opset", o.target_opset);
  option(options, "round_mode", o.round_mode);
  option(options, "strict", o.strict);
  option(options, "max_multithreshold_bits", o.max_multithreshold_bits);
  option(options, "allow_approximate", o.allow_approximate);
  option(options, "keep_initializer_inputs", o.keep_initializer_inputs);
  option(options, "check", o.check);
  option(options, "seed", o.seed);
  o.tolerance_given = options.contains("atol") || options.contains("rtol");
  option(options, "atol", o.atol);
  option(options, "rtol", o.rtol);
  if (options.contains("arith")) o.arithmetic = arithmetic_option(options["arith"].cast<std::string>());
  option(options, "input_name", o.input_name);
  option(options, "output_name", o.output_name);
  ir::Model input = model.model->clone();
  api::ConvertResult r = without_gil([&] { return api::convert(std::move(input), o); });
  py::dict out;
  out["report_json"] = r.report_json;
  out["check_lines"] = r.check_lines;
  out["check_failed"] = r.check_failed;
  out["check_failure"] = r.check_failure;
  out["pipeline"] = r.pipeline;
  out["model"] = wrap(std::move(r.model));
  return out;
}

py::dict pass_result(api::PassResult r) {
  py::dict out;
  out["check_lines"] = r.check_lines;
  out["check_failed"] = r.check_failed;
  out["check_failure"] = r.check_failure;
  out["model"] = wrap(std::move(r.model));
  return out;
}

py::dict cleanup(const Model& model, const py::dict& options) {
  api::CleanupOptions o;
  option(options, "preserve_qnt_ops", o.preserve_qnt_ops);
  option(options, "extract_conv_bias", o.extract_conv_bias);
  option(options, "override_batchsize", o.override_batchsize);
  option(options, "override_inpsize", o.override_inpsize);
  option(options, "check", o.check);
  option(options, "seed", o.seed);
  option(options, "input_name", o.input_name);
  ir::Model input = model.model->clone();
  return pass_result(without_gil([&] { return api::cleanup(std::move(input), o); }));
}

py::dict channels_last(const Model& model, const py::dict& options) {
  api::ChannelsLastOptions o;
  option(options, "make_input_channels_last", o.make_input_channels_last);
  option(options, "check", o.check);
  option(options, "seed", o.seed);
  option(options, "input_name", o.input_name);
  ir::Model input = model.model->clone();
  return pass_result(without_gil([&] { return api::channels_last(std::move(input), o); }));
}

std::string cost(const Model& model, const py::dict& options) {
  api::CostOptions o;
  option(options, "discount_sparsity", o.discount_sparsity);
  option(options, "qonnx_ops_only", o.qonnx_ops_only);
  option(options, "clip_aware", o.clip_aware);
  option(options, "breakdown", o.breakdown);
  option(options, "flat", o.flat);
  option(options, "input_name", o.input_name);
  ir::Model input = model.model->clone();
  return without_gil([&] { return api::cost(std::move(input), o); }).json;
}

}  // namespace

void add_commands(py::module_& m) {
  m.def("convert", &convert, py::arg("model"), py::arg("options"));
  m.def("cleanup", &cleanup, py::arg("model"), py::arg("options"));
  m.def("channels_last", &channels_last, py::arg("model"), py::arg("options"));
  m.def("cost", &cost, py::arg("model"), py::arg("options"));
}

}  // namespace qonnx::python
