// The model-changing commands (qonnx/api) for qonnx_cc.commands: options from a dict, results as a dict.
#include "core.h"

#include <memory>

#include <pybind11/stl.h>

#include "numpy_tensor.h"
#include "qonnx/api/commands.h"

namespace qonnx::python {
namespace {

template <typename T>
T option(const py::dict& options, const char* key, T fallback) {
  return options.contains(key) ? options[key].cast<T>() : fallback;
}

Model wrap(ir::Model model) { return Model{std::make_shared<ir::Model>(std::move(model))}; }

template <typename R>
R run_command(const std::function<Result<R>()>& fn) {
  Result<R> result = Status::ok();
  {
    py::gil_scoped_release nogil;
    result = guarded(fn);
  }
  return value_or_raise(std::move(result));
}

py::dict convert(const Model& model, const py::dict& options) {
  api::ConvertOptions o;
  o.target = option<std::string>(options, "target", o.target);
  o.passes = option<std::string>(options, "passes", "");
  o.target_opset = option<int>(options, "target_opset", 0);
  o.round_mode = option<std::string>(options, "round_mode", "");
  o.strict = option<bool>(options, "strict", false);
  o.allow_approximate = option<bool>(options, "allow_approximate", false);
  o.keep_initializer_inputs = option<bool>(options, "keep_initializer_inputs", false);
  o.check = option<int>(options, "check", 0);
  o.seed = option<uint64_t>(options, "seed", 0);
  o.tolerance_given = options.contains("atol") || options.contains("rtol");
  o.atol = option<double>(options, "atol", o.atol);
  o.rtol = option<double>(options, "rtol", o.rtol);
  o.input_name = option<std::string>(options, "input_name", "");
  o.output_name = option<std::string>(options, "output_name", "");
  ir::Model input = model.model->clone();
  api::ConvertResult r = run_command<api::ConvertResult>([&] { return api::convert(std::move(input), o); });
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
  o.preserve_qnt_ops = option<bool>(options, "preserve_qnt_ops", true);
  o.extract_conv_bias = option<bool>(options, "extract_conv_bias", false);
  o.override_batchsize = option<int64_t>(options, "override_batchsize", 0);
  o.override_inpsize = option<std::string>(options, "override_inpsize", "");
  o.check = option<int>(options, "check", 0);
  o.seed = option<uint64_t>(options, "seed", 0);
  o.input_name = option<std::string>(options, "input_name", "");
  ir::Model input = model.model->clone();
  return pass_result(run_command<api::PassResult>([&] { return api::cleanup(std::move(input), o); }));
}

py::dict channels_last(const Model& model, const py::dict& options) {
  api::ChannelsLastOptions o;
  o.make_input_channels_last = option<bool>(options, "make_input_channels_last", false);
  o.check = option<int>(options, "check", 0);
  o.seed = option<uint64_t>(options, "seed", 0);
  o.input_name = option<std::string>(options, "input_name", "");
  ir::Model input = model.model->clone();
  return pass_result(run_command<api::PassResult>([&] { return api::channels_last(std::move(input), o); }));
}

std::string cost(const Model& model, const py::dict& options) {
  api::CostOptions o;
  o.discount_sparsity = option<bool>(options, "discount_sparsity", true);
  o.qonnx_ops_only = option<bool>(options, "qonnx_ops_only", false);
  o.clip_aware = option<bool>(options, "clip_aware", false);
  o.breakdown = option<bool>(options, "breakdown", false);
  o.flat = option<bool>(options, "flat", false);
  o.input_name = option<std::string>(options, "input_name", "");
  ir::Model input = model.model->clone();
  return run_command<api::CostResult>([&] { return api::cost(std::move(input), o); }).json;
}

}  // namespace

void add_commands(py::module_& m) {
  m.def("convert", &convert, py::arg("model"), py::arg("options"));
  m.def("cleanup", &cleanup, py::arg("model"), py::arg("options"));
  m.def("channels_last", &channels_last, py::arg("model"), py::arg("options"));
  m.def("cost", &cost, py::arg("model"), py::arg("options"));
}

}  // namespace qonnx::python
