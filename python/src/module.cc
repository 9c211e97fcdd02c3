// qonnx_cc._core: the C++ side of the Python package. The Python modules (python/qonnx_cc/*.py) give
// it its onnxruntime- and qonnx-shaped surface; this file only moves values across the edge.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "core.h"
#include "exit_codes.h"
#include "numpy_tensor.h"
#include "qonnx/analysis/summary.h"
#include "qonnx/analysis/validate.h"
#include "qonnx/exec/context_run.h"
#include "qonnx/exec/dataset.h"
#include "qonnx/exec/executor.h"
#include "qonnx/exec/threads.h"
#include "qonnx/io/model_io.h"
#include "qonnx/kernels/ascend.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/register_all.h"
#include "qonnx/support/log.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

namespace qonnx::python {

void raise_status(const Status& status) {
  py::object cls = py::module_::import("qonnx_cc._errors").attr("error_class")(static_cast<int>(status.code()));
  PyErr_SetString(cls.ptr(), status.to_string().c_str());
  throw py::error_already_set();
}

namespace {

Model load_from_path(const std::string& path) {
  auto loaded = guarded([&]() -> Result<ir::Model> { return io::load_model(path); });
  return Model{std::make_shared<ir::Model>(value_or_raise(std::move(loaded)))};
}

Model load_from_bytes(const py::bytes& bytes, const std::string& base_dir) {
  std::string data = bytes;
  auto loaded = guarded([&]() -> Result<ir::Model> { return io::load_model_from_bytes(data, base_dir); });
  return Model{std::make_shared<ir::Model>(value_or_raise(std::move(loaded)))};
}

// Dims of the graph outputs that shape inference knows where the declaration does not (onnxruntime
// reports those); empty when every output's shape is declared in full or inference fails.
std::map<std::string, std::vector<int64_t>> inferred_output_dims(const ir::Model& model) {
  std::map<std::string, std::vector<int64_t>> dims;
  bool open = false;
  for (const ir::Value* v : model.graph().outputs()) {
    auto t = model.graph().type_of(v);
    open |= !t || !t->has_shape || std::any_of(t->dims.begin(), t->dims.end(), [](int64_t d) { return d < 0; });
  }
  if (!open || model.opset("").value_or(1) > onnxlib::onnx_library_opset()) return dims;
  auto inferred = guarded([&] { return onnxlib::onnx_infer_output_types(model); });
  if (!inferred.is_ok()) return dims;
  for (const auto& vi : inferred.value()) {
    if (!vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape()) continue;
    auto& out = dims[vi->name()];
    for (const auto& d : vi->type().tensor_type().shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return dims;
}

// ORT's NodeArg fields: name, shape (int, symbolic name, or None per dim), "tensor(<type>)". `inferred`
// fills dims the declaration leaves open.
py::tuple describe_value(const ir::Graph& graph, const ir::Value* v, const std::vector<int64_t>* inferred = nullptr) {
  py::object shape = py::none();
  std::string type = "tensor(undefined)";
  if (auto info = graph.type_of(v)) {
    type = fmt::format("tensor({})", dtype_name(info->dtype));
    if (info->has_shape) {
      py::list dims;
      const bool use_inferred = inferred && inferred->size() == info->dims.size();
      for (size_t i = 0; i < info->dims.size(); ++i) {
        if (info->dims[i] >= 0) dims.append(info->dims[i]);
        else if (use_inferred && (*inferred)[i] >= 0) dims.append((*inferred)[i]);
        else if (i < info->dim_params.size() && !info->dim_params[i].empty()) dims.append(info->dim_params[i]);
        else dims.append(py::none());
      }
      shape = dims;
    } else {
      shape = py::list();
    }
  }
  return py::make_tuple(v->name(), shape, type);
}

py::dict graph_metadata(const Model& self) {
  constexpr int kGraphMetadataProps = 16;
  const onnx::GraphProto& rest = self.model->graph().rest();
  const auto& unknown = rest.GetReflection()->GetUnknownFields(rest);
  py::dict props;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& field = unknown.field(i);
    if (field.number() != kGraphMetadataProps || field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited())) props[py::str(entry.key())] = entry.value();
  }
  return props;
}

class Session {
 public:
  // `check_input_shapes` false: declared dims are a default, not a contract (dataset mode's batches).
  Session(const Model& model, bool expose_all, bool check_input_shapes, const std::string& arith) : model_(model.model) {
    const exec::Arithmetic arithmetic = arithmetic_option(arith);
    auto created = guarded([&]() -> Result<exec::Executor> { return exec::Executor::create(*model_, arithmetic); });
    executor_.emplace(value_or_raise(std::move(created)));
    executor_->set_check_input_shapes(check_input_shapes);
    checks_input_shapes_ = check_input_shapes;
    const ir::Graph& graph = model_->graph();
    for (const ir::Value* v : graph.runtime_inputs()) {
      input_names_.push_back(v->name());
      graph.type_of(v);  // builds the graph's lazy type index now: runs from several threads only read it
    }
    for (const ir::Value* v : graph.outputs()) output_names_.push_back(v->name());
    if (expose_all) {
      std::vector<std::string> names;
      for (const auto& node : graph.nodes())
        for (const ir::Value* v : node->outputs())
          if (v) names.push_back(v->name());
      if (Status st = executor_->expose(names); !st.is_ok()) raise_status(st);
    }
  }

  std::vector<std::pair<std::string, std::string>> path_notes() const { return executor_->path_notes(); }
  std::string streaming_note() const { return executor_->streaming_note(); }

  py::list inputs() const { return describe(model_->graph().runtime_inputs(), {}); }
  py::list outputs() const { return describe(model_->graph().outputs(), inferred_output_dims(*model_)); }

  // Graph outputs named by `names` (all when None or empty), in that order.
  py::list run(const py::object& names, const py::dict& feed, int threads) const {
    std::vector<std::string> wanted = names.is_none() ? std::vector<std::string>{} : names.cast<std::vector<std::string>>();
    if (wanted.empty()) wanted = output_names_;
    std::vector<size_t> positions;
    for (const std::string& name : wanted) {
      auto it = std::find(output_names_.begin(), output_names_.end(), name);
      if (it == output_names_.end())
        raise_status(Status(Code::kUsage, fmt::format("invalid output name '{}' (the model's outputs: {})", name,
                                                      fmt::join(output_names_, ", "))));
      positions.push_back(static_cast<size_t>(it - output_names_.begin()));
    }
    std::map<std::string, Tensor> inputs = checked_feed(feed);
    exec::RunResult result = execute(inputs, threads);
    py::list out;
    for (size_t p : positions) out.append(tensor_to_numpy(result.outputs[p]));
    return out;
  }

  // qonnx's full execution context: empty_context (declared zeros, initializers), then the inputs and
  // every value of the run. Needs expose_all.
  py::dict run_all(const py::dict& feed, int threads) const {
    std::map<std::string, Tensor> inputs = checked_feed(feed);
    exec::RunResult result = execute(inputs, threads);
    std::map<std::string, Tensor> context = value_or_raise(exec::empty_context(model_->graph()));
    for (const auto& [name, t] : inputs) context[name] = t;
    for (const auto& [name, t] : result.exposed) context[name] = t;
    for (size_t i = 0; i < output_names_.size(); ++i) context[output_names_[i]] = result.outputs[i];
    py::dict out;
    for (const auto& [name, t] : context) out[py::str(name)] = tensor_to_numpy(t);
    return out;
  }

  // exec's dataset mode: samples along axis 0 of each input, in batches; outputs stacked. Needs a session
  // made with check_input_shapes false (the batch dim changes).
  py::tuple run_dataset(const py::dict& data, int64_t batch_size, int threads) const {
    if (checks_input_shapes_)
      raise_status(Status(Code::kUsage, "run_dataset needs a session made with check_input_shapes=False"));
    std::map<std::string, Tensor> inputs = tensors_from_dict(data);
    exec::DatasetResult done = without_gil([&]() -> Result<exec::DatasetResult> {
      exec::set_threads(threads);
      exec::DatasetOptions options;
      options.batch_size = batch_size;
      return exec::run_dataset(*executor_, model_->graph(), inputs, options);
    });
    py::list outputs;
    for (const Tensor& t : done.outputs) outputs.append(tensor_to_numpy(t));
    return py::make_tuple(outputs, done.per_sample);
  }

  // Seconds of each of `repeats` runs timed inside C++ (make bench: the overhead of run() over this).
  std::vector<double> timed_runs(const py::dict& feed, int repeats, int threads) const {
    std::map<std::string, Tensor> inputs = checked_feed(feed);
    std::vector<double> seconds;
    Status failed = Status::ok();
    {
      py::gil_scoped_release nogil;
      exec::set_threads(threads);
      for (int i = 0; i < repeats && failed.is_ok(); ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto result = guarded([&]() -> Result<exec::RunResult> { return executor_->run(inputs); });
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (!result.is_ok()) failed = result.status();
      }
    }
    if (!failed.is_ok()) raise_status(failed);
    return seconds;
  }

  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }

 private:
  py::list describe(const std::vector<ir::Value*>& values, const std::map<std::string, std::vector<int64_t>>& inferred) const {
    py::list list;
    for (const ir::Value* v : values) {
      auto it = inferred.find(v->name());
      list.append(describe_value(model_->graph(), v, it == inferred.end() ? nullptr : &it->second));
    }
    return list;
  }

  // The feed as tensors, with onnxruntime's errors for unknown and missing names.
  std::map<std::string, Tensor> checked_feed(const py::dict& feed) const {
    std::map<std::string, Tensor> inputs = tensors_from_dict(feed);
    for (const auto& [name, t] : inputs)
      if (std::find(input_names_.begin(), input_names_.end(), name) == input_names_.end())
        raise_status(Status(Code::kUsage, fmt::format("invalid input name '{}' (the model's inputs: {})", name,
                                                      fmt::join(input_names_, ", "))));
    std::vector<std::string> missing;
    for (const std::string& name : input_names_)
      if (!inputs.count(name)) missing.push_back(name);
    if (!missing.empty())
      raise_status(Status(Code::kUsage, fmt::format("required inputs ({}) are missing from the input feed",
                                                    fmt::join(missing, ", "))));
    return inputs;
  }

  // Runs without the GIL; the caller keeps `inputs` (and so the numpy arrays they borrow) alive.
  exec::RunResult execute(const std::map<std::string, Tensor>& inputs, int threads) const {
    return without_gil([&]() -> Result<exec::RunResult> {
      exec::set_threads(threads);
      return executor_->run(inputs);
    });
  }

  std::shared_ptr<ir::Model> model_;
  std::optional<exec::Executor> executor_;
  bool checks_input_shapes_ = true;
  std::vector<std::string> input_names_, output_names_;
};

py::tuple run_in_context(const Model& model, const py::dict& given, size_t begin, size_t end, bool sanitize,
                         double error_threshold) {
  std::map<std::string, Tensor> tensors = tensors_from_dict(given);
  exec::ContextRunResult done = without_gil([&]() -> Result<exec::ContextRunResult> {
    return exec::run_in_context(*model.model, tensors, {begin, end, sanitize, error_threshold});
  });
  py::dict context;
  for (const auto& [name, t] : done.context) context[py::str(name)] = tensor_to_numpy(t);
  return py::make_tuple(context, done.rounded);
}

}  // namespace
}  // namespace qonnx::python

PYBIND11_MODULE(_core, m) {
  using namespace qonnx;
  using namespace qonnx::python;
  m.doc() = "qonnx-cc's C++ core; use the qonnx_cc package, not this module.";
  register_all();
  m.attr("__version__") = QONNX_CC_VERSION;

  m.def("exit_code", [](int code) { return cli::exit_code(static_cast<Code>(code)); },
        "The CLI's exit code for a status code.");
  m.def("code_name", [](int code) { return std::string(code_name(static_cast<Code>(code))); });
  m.def("set_threads", [](int n) { exec::set_threads(n); }, "Threads for the kernels (0: every core).");
  m.def("threads", [] { return exec::threads(); });
  m.def("set_memory_limit", [](uint64_t bytes) { set_memory_limit(bytes); },
        "Cap on the bytes live tensors hold (the CLI's --max-memory; 0: none).");
  m.def("memory_limit", [] { return memory_limit(); });
  m.def("memory_in_use", [] { return memory_in_use(); }, "Bytes live tensors hold now.");
  m.def("set_log_level", [](const std::string& level) {
    log::set_level(level == "debug" ? log::Level::kDebug : level == "error" ? log::Level::kError
                   : level == "warn"  ? log::Level::kWarn : log::Level::kInfo);
  });

  py::class_<Model>(m, "Model")
      .def_static("from_path", &load_from_path, py::arg("path"))
      .def_static("from_bytes", &load_from_bytes, py::arg("data"), py::arg("base_dir") = "")
      .def("serialize",
           [](const Model& self) {
             std::string bytes = value_or_raise(io::serialize_model(*self.model));
             return py::bytes(bytes);
           })
      .def("save",
           [](const Model& self, const std::string& path, const std::string& external_data) {
             io::SaveOptions options;
             if (external_data == "always") options.external_data = io::ExternalData::kAlways;
             else if (external_data == "never") options.external_data = io::ExternalData::kNever;
             else if (external_data != "auto")
               raise_status(Status(Code::kUsage, fmt::format("external_data '{}': auto, always or never", external_data)));
             if (Status st = io::save_model(*self.model, path, options); !st.is_ok()) raise_status(st);
           },
           py::arg("path"), py::arg("external_data") = "auto")
      .def("node_count", [](const Model& self) { return self.model->graph().node_count(); })
      .def("node_index",
           [](const Model& self, const std::string& name) -> py::object {
             size_t i = 0;
             for (const auto& node : self.model->graph().nodes()) {
               if (node->name() == name) return py::int_(i);
               ++i;
             }
             return py::none();
           })
      .def("plannable",
           [](const Model& self) -> py::object {
             Status st = guarded([&] { return exec::check_plannable(*self.model); });
             return st.is_ok() ? py::object(py::none()) : py::object(py::str(st.to_string()));
           },
           "None when the executor can run every node, else why not.")
      .def("has_datatype_annotations", [](const Model& self) { return exec::has_datatype_annotations(self.model->graph()); })
      .def("metadata",
           [](const Model& self) {
             py::dict props;
             for (const auto& p : self.model->header().metadata_props()) props[py::str(p.key())] = p.value();
             return props;
           },
           "The model's metadata_props.")
      .def("graph_metadata", &graph_metadata,
           "The main graph's metadata_props (GraphProto field 16, newer than the ONNX library qonnx-cc builds "
           "with: read from the fields it keeps unparsed).")
      .def("header",
           [](const Model& self) {
             const auto& h = self.model->header();
             py::dict d;
             d["producer_name"] = h.producer_name();
             d["producer_version"] = h.producer_version();
             d["domain"] = h.domain();
             d["model_version"] = h.model_version();
             d["doc_string"] = h.doc_string();
             d["graph_name"] = self.model->graph().rest().name();
             d["graph_doc_string"] = self.model->graph().rest().doc_string();
             return d;
           })
      .def("info_json", [](const Model& self) { return analysis::format_json(analysis::summarize(*self.model)); })
      .def("validate", [](const Model& self) {
        Status st = guarded([&] { return analysis::validate_model(*self.model); });
        if (!st.is_ok()) raise_status(st);
      });

  py::class_<Session>(m, "Session")
      .def(py::init<const Model&, bool, bool, const std::string&>(), py::arg("model"), py::arg("expose_all") = false,
           py::arg("check_input_shapes") = true, py::arg("arith") = "int")
      .def("path_notes", [](const Session& s) { return s.path_notes(); })
      .def("streaming_note", &Session::streaming_note)
      .def("inputs", &Session::inputs)
      .def("outputs", &Session::outputs)
      .def_property_readonly("input_names", &Session::input_names)
      .def_property_readonly("output_names", &Session::output_names)
      .def("run", &Session::run, py::arg("output_names"), py::arg("feed"), py::arg("threads") = 1)
      .def("run_all", &Session::run_all, py::arg("feed"), py::arg("threads") = 1)
      .def("timed_runs", &Session::timed_runs, py::arg("feed"), py::arg("repeats"), py::arg("threads") = 1)
      .def("run_dataset", &Session::run_dataset, py::arg("data"), py::arg("batch_size"), py::arg("threads") = 1);

  m.def("run_in_context", &run_in_context, py::arg("model"), py::arg("given"), py::arg("begin"), py::arg("end"),
        py::arg("sanitize"), py::arg("error_threshold"));

  add_commands(m);

  m.def("top1_accuracy", [](const py::object& scores, const py::object& labels) {
    Tensor s = tensor_from_python(scores, "scores"), l = tensor_from_python(labels, "labels");
    exec::Accuracy a = value_or_raise(exec::top1_accuracy(s, l));
    return py::make_tuple(a.correct, a.total);
  });

  m.def("trans_quant_param",
        [](const std::vector<float>& scale, const std::optional<std::vector<float>>& offset, int round_mode) {
          std::vector<uint64_t> words = value_or_raise(kernels::ascend::encode_trans_quant_params(scale, offset, round_mode));
          py::array_t<uint64_t> out(static_cast<py::ssize_t>(words.size()));
          std::copy(words.begin(), words.end(), out.mutable_data());
          return out;
        },
        py::arg("scale"), py::arg("offset"), py::arg("round_mode"));
  m.def("decode_trans_quant_param", [](uint64_t word) {
    auto p = kernels::ascend::decode_trans_quant_param(word);
    return py::make_tuple(p.scale, p.offset, p.is_signed);
  });
}
