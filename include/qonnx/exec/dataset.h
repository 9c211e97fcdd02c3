// Dataset mode of `exec`: N samples stacked along axis 0 of every input run through one planned model
// in batches, the outputs stacked again, and top-1 accuracy against integer labels.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "qonnx/exec/executor.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::exec {

// Rows [begin, end) of axis 0 (a copy).
Tensor slice_rows(const Tensor& t, int64_t begin, int64_t end);
// The tensors stacked along axis 0; all must agree in dtype and in every other dim.
Result<Tensor> concat_rows(const std::vector<Tensor>& parts);

struct DatasetOptions {
  int64_t batch_size = 1;
  // Called after every batch with the samples done so far and the total.
  std::function<void(int64_t done, int64_t total)> progress;
  // Called with every batch's output k (its rows of the stacked output, in order).
  std::function<void(size_t k, const Tensor& rows)> on_rows;
  // false: the outputs are not stacked (DatasetResult::outputs stays empty; on_rows sees them), so the memory
  // held does not grow with the data set.
  bool keep_outputs = true;
};

struct DatasetResult {
  std::vector<Tensor> outputs;  // graph-output order, N along axis 0 (none without keep_outputs)
  int64_t samples = 0;
  // The model fixes its batch dim at 1 and the first batch run whole did not give the bytes of running
  // its samples one by one (or produced no batch axis): every batch then runs sample by sample.
  bool per_sample = false;
};

// Runs every runtime input's N samples (axis 0 of each tensor in `data`, one per runtime input) through
// `executor`, which must not check input shapes (the batch dim changes). The model's batch dim must be
// 1 or symbolic; the other dims are checked against the declared ones. Errors: inputs missing or
// disagreeing on N, or N = 0 (no output shape to write): kUsage; data not fitting the model: kInvalidModel.
Result<DatasetResult> run_dataset(const Executor& executor, const ir::Graph& graph,
                                  const std::map<std::string, Tensor>& data, const DatasetOptions& options);

struct Accuracy {
  int64_t correct = 0;
  int64_t total = 0;
};
// Top-1 accuracy of `scores` (N rows; the argmax of each row's flattened elements, first maximum
// wins) against `labels` (integer, shape [N] or [N, 1]). Errors (kUsage) name the mismatch.
Result<Accuracy> top1_accuracy(const Tensor& scores, const Tensor& labels);

}  // namespace qonnx::exec
