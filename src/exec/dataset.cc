#include "qonnx/exec/dataset.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "qonnx/exec/compare.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::exec {

namespace {

int64_t row_elements(const Tensor& t) {
  int64_t n = 1;
  for (size_t d = 1; d < t.rank(); ++d) n *= t.dim(d);
  return n;
}

}  // namespace

Tensor slice_rows(const Tensor& t, int64_t begin, int64_t end) {
  Dims dims = t.dims();
  dims[0] = end - begin;
  Tensor out = Tensor::uninitialized(t.dtype(), dims);
  const int64_t row = row_elements(t);
  if (t.dtype() == DType::kString) {
    std::copy(t.strings().begin() + begin * row, t.strings().begin() + end * row, out.strings().begin());
  } else if (out.nbytes() > 0) {
    const size_t row_bytes = static_cast<size_t>(row) * dtype_size(t.dtype());
    std::memcpy(out.raw(), static_cast<const uint8_t*>(t.raw()) + static_cast<size_t>(begin) * row_bytes, out.nbytes());
  }
  return out;
}

namespace {

// An error unless `part` has a batch axis.
Status has_rows(const Tensor& part) {
  if (part.rank() == 0) return Status(Code::kFailed, "a scalar output has no batch axis to concatenate along");
  return Status::ok();
}

// An error unless `part` has rows like `like`'s: a batch axis, the same dtype and every other dim.
Status same_rows(const Tensor& like, const Tensor& part) {
  QONNX_RETURN_IF_ERROR(has_rows(part));
  const bool same = part.dtype() == like.dtype() && part.rank() == like.rank() &&
                    std::equal(part.dims().begin() + 1, part.dims().end(), like.dims().begin() + 1);
  if (!same)
    return Status(Code::kFailed, fmt::format("batch outputs differ beyond axis 0: {} {} vs {} {}", dtype_name(like.dtype()),
                                             dims_to_string(like.dims()), dtype_name(part.dtype()), dims_to_string(part.dims())));
  return Status::ok();
}

// `part` as rows [row0, row0 + part.dim(0)) of `into`, which the first part allocates with `rows` rows (its
// other dims the part's); every part must agree with it in dtype and in every other dim.
Status place_rows(const Tensor& part, int64_t row0, int64_t rows, Tensor& into) {
  QONNX_RETURN_IF_ERROR(has_rows(part));
  if (!into.defined()) {
    Dims dims = part.dims();
    dims[0] = rows;
    into = Tensor::uninitialized(part.dtype(), dims);
  }
  QONNX_RETURN_IF_ERROR(same_rows(into, part));
  const int64_t row = row_elements(part);
  if (part.dtype() == DType::kString) {
    std::copy(part.strings().begin(), part.strings().end(), into.strings().begin() + row0 * row);
  } else if (part.nbytes() > 0) {
    const size_t row_bytes = static_cast<size_t>(row) * dtype_size(part.dtype());
    std::memcpy(static_cast<uint8_t*>(into.raw()) + static_cast<size_t>(row0) * row_bytes, part.raw(), part.nbytes());
  }
  return Status::ok();
}

}  // namespace

Result<Tensor> concat_rows(const std::vector<Tensor>& parts) {
  if (parts.empty()) return Status(Code::kFailed, "nothing to concatenate");
  int64_t rows = 0;
  for (const Tensor& p : parts) rows += p.rank() > 0 ? p.dim(0) : 0;
  Tensor out;
  int64_t row0 = 0;
  for (const Tensor& p : parts) {
    QONNX_RETURN_IF_ERROR(place_rows(p, row0, rows, out));
    row0 += p.dim(0);
  }
  return out;
}

namespace {

// The samples [begin, end) of every input.
std::map<std::string, Tensor> batch_feeds(const std::map<std::string, Tensor>& data, int64_t begin, int64_t end) {
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, t] : data) feeds[name] = slice_rows(t, begin, end);
  return feeds;
}

Result<std::vector<Tensor>> run_per_sample(const Executor& executor, const std::map<std::string, Tensor>& data,
                                           int64_t begin, int64_t end) {
  std::vector<std::vector<Tensor>> rows;
  for (int64_t i = begin; i < end; ++i) {
    QONNX_ASSIGN_OR_RETURN(RunResult r, executor.run(batch_feeds(data, i, i + 1)));
    rows.push_back(std::move(r.outputs));
  }
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < rows.front().size(); ++k) {
    std::vector<Tensor> column;
    for (auto& row : rows) column.push_back(std::move(row[k]));
    QONNX_ASSIGN_OR_RETURN(Tensor t, concat_rows(column));
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace

Result<DatasetResult> run_dataset(const Executor& executor, const ir::Graph& graph,
                                  const std::map<std::string, Tensor>& data, const DatasetOptions& options) {
  if (options.batch_size < 1) return Status(Code::kUsage, "the batch size must be at least 1");
  int64_t n = -1;
  bool fixed_batch_one = false;
  for (const ir::Value* v : graph.runtime_inputs()) {
    auto it = data.find(v->name());
    if (it == data.end()) return Status(Code::kUsage, fmt::format("dataset mode needs data for graph input '{}'", v->name()));
    const Tensor& t = it->second;
    if (t.rank() == 0)
      return Status(Code::kInvalidModel, fmt::format("data for '{}' is a scalar; samples go along axis 0", v->name()));
    if (n >= 0 && t.dim(0) != n)
      return Status(Code::kUsage, fmt::format("data for '{}' holds {} samples, other inputs hold {}", v->name(), t.dim(0), n));
    n = t.dim(0);
    auto type = graph.type_of(v);
    if (type && type->has_shape && !type->dims.empty()) {
      if (type->dims[0] > 1)
        return Status(Code::kInvalidModel, fmt::format("graph input '{}' fixes its batch dim at {}; dataset mode needs 1 "
                                                       "or a symbolic batch dim", v->name(), type->dims[0]));
      fixed_batch_one = fixed_batch_one || type->dims[0] == 1;
    }
    // One sample must fit the declaration (every dim but the batch dim when that is symbolic).
    if (n > 0) QONNX_RETURN_IF_ERROR(check_input_against_declared(graph, v, slice_rows(t, 0, 1)).with_context("dataset"));
  }
  if (n == 0) return Status(Code::kUsage, "the data holds no samples (axis 0 is 0)");

  DatasetResult result;
  result.samples = n;
  // Each batch's outputs go to their rows at once (or only to on_rows), so that the executor reuses the
  // batch's buffers for the next one: kept batches would each take fresh memory, whose page faults can cost
  // more than the runs.
  std::vector<Tensor> stacked;
  std::vector<Tensor> first;  // without keep_outputs: the first batch's outputs, which the others must match
  for (int64_t begin = 0; begin < n; begin += options.batch_size) {
    const int64_t end = std::min(n, begin + options.batch_size);
    std::vector<Tensor> outs;
    if (result.per_sample || end - begin == 1) {
      QONNX_ASSIGN_OR_RETURN(outs, run_per_sample(executor, data, begin, end));
    } else {
      auto batched = executor.run(batch_feeds(data, begin, end));
      if (begin == 0 && fixed_batch_one) {
        // The graph was exported for batch 1 (a Reshape to [1, -1] fails or silently mixes samples):
        // batch only when the first batch runs and reproduces the per-sample bytes.
        QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> reference, run_per_sample(executor, data, begin, end));
        bool same = batched.is_ok() && batched->outputs.size() == reference.size();
        for (size_t k = 0; same && k < reference.size(); ++k) same = batched->outputs[k].identical(reference[k]);
        result.per_sample = !same;
        outs = same ? std::move(batched->outputs) : std::move(reference);
      } else {
        if (!batched.is_ok()) return std::move(batched).status();
        outs = std::move(batched->outputs);
        for (const Tensor& t : outs)
          if (t.rank() == 0 || t.dim(0) != end - begin)
            return Status(Code::kInvalidModel, fmt::format("a batch of {} samples gave an output of shape {}", end - begin,
                                                           dims_to_string(t.dims())));
      }
    }
    stacked.resize(outs.size());
    if (first.empty() && !options.keep_outputs) first = outs;
    for (size_t k = 0; k < outs.size(); ++k) {
      Status placed = options.keep_outputs ? place_rows(outs[k], begin, n, stacked[k]) : same_rows(first[k], outs[k]);
      if (!placed.is_ok()) return std::move(placed).with_context(fmt::format("output #{}", k));
      if (options.on_rows) options.on_rows(k, outs[k]);
    }
    if (options.progress) options.progress(end, n);
  }
  if (options.keep_outputs) result.outputs = std::move(stacked);
  return result;
}

Result<Accuracy> top1_accuracy(const Tensor& scores, const Tensor& labels) {
  if (scores.rank() == 0 || scores.dtype() == DType::kString)
    return Status(Code::kUsage, fmt::format("--labels: the output {} {} has no rows of scores", dtype_name(scores.dtype()),
                                            dims_to_string(scores.dims())));
  const int64_t n = scores.dim(0);
  bool column = labels.rank() == 2 && labels.dim(1) == 1;
  if (!dtype_is_integer(labels.dtype()) || !(labels.rank() == 1 || column))
    return Status(Code::kUsage, fmt::format("--labels must be integer class indices of shape [N] or [N, 1], got {} {}",
                                            dtype_name(labels.dtype()), dims_to_string(labels.dims())));
  if (labels.dim(0) != n)
    return Status(Code::kUsage, fmt::format("--labels holds {} labels for {} samples", labels.dim(0), n));
  const int64_t classes = row_elements(scores);
  Accuracy acc;
  acc.total = n;
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    double best_value = classes > 0 ? element_as_double(scores, i * classes) : 0;
    for (int64_t c = 1; c < classes; ++c) {
      double v = element_as_double(scores, i * classes + c);
      if (v > best_value) best = c, best_value = v;
    }
    if (classes > 0 && static_cast<int64_t>(element_as_double(labels, i)) == best) ++acc.correct;
  }
  return acc;
}

}  // namespace qonnx::exec
