// The load -> run pipeline -> --check -> save steps that `cleanup`, `channels-last` and `convert`
// share: one overwrite rule, one error context, one exact check, one way to write the result.
#pragma once

#include <string>
#include <vector>

#include "qonnx/analysis/equivalence.h"
#include "qonnx/io/model_io.h"
#include "qonnx/ir/model.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/status.h"

namespace qonnx::cli {

// The default output: `input`'s folder and stem followed by `suffix` (".channels_last.onnx").
std::string output_next_to_input(const std::string& input, const std::string& suffix);

// A usage error (exit 2) when `output` is the input file under any name (hard links too:
// fs::equivalent), unless `in_place`.
Status refuse_to_overwrite_input(const std::string& input, const std::string& output, bool in_place);

// Runs `pipeline` on `model` (loaded from `input`, which a pass error names).
Status run_on_input(ir::Model& model, const std::string& input, const std::vector<pass::PipelineItem>& pipeline,
                    pass::PassContext& ctx, const std::vector<pass::Instrumentation*>& hooks = {});

// `input` loaded and run through `pipeline` (a pass error names the input).
Result<ir::Model> load_and_run(const std::string& input, const std::vector<pass::PipelineItem>& pipeline,
                               pass::PassContext& ctx);

// `result` against the model in `input`, loaded again (the passes changed the first copy).
Result<std::vector<analysis::OutputCheck>> check_against_input(const std::string& input, const ir::Model& result,
                                                               const analysis::CheckOptions& options);

// --check N with zero tolerance: one line per output ("check NAME: bit-identical over N runs" or
// MISMATCH with the largest error). 0 when every output matched, 7 (nothing may be written) or the
// error's exit code otherwise.
int exact_check(const std::string& input, const ir::Model& result, int runs, uint64_t seed);

// --stats: every pass's counters on stderr.
void print_pass_counters(const pass::PassContext& ctx);

// Writes `model` to `output` atomically and logs it.
Status save_result(const ir::Model& model, const std::string& output, const io::SaveOptions& options = {});

}  // namespace qonnx::cli
