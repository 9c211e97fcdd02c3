// Transposes: any permutation of a tensor, and the blocked transpose of the two inner axes of a 3-D
// array behind it and the channels-last kernels ((N, spatial, C) <-> (N, C, spatial)). Pure copies, so
// every thread count gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "qonnx/kernels/transpose.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// Reads src as (outer, rows, cols) elements of `elem_size` bytes and writes dst as (outer, cols, rows).
// src and dst must not overlap. Large arrays are split between exec::threads() by blocks of rows.
void transpose_inner(const void* src, void* dst, int64_t outer, int64_t rows, int64_t cols, size_t elem_size);

// transposed(x, perm) is declared in qonnx/kernels/transpose.h: a permutation that swaps two blocks of
// adjacent axes, (outer..., a..., b...) -> (outer..., b..., a...), is one transpose_inner; any other
// goes element by element. transpose_into does the same into `out`, which has transposed_dims(x, perm)
// and x's dtype (its contents are overwritten).
Dims transposed_dims(const Tensor& x, const std::vector<int64_t>& perm);
void transpose_into(const Tensor& x, const std::vector<int64_t>& perm, Tensor* out);

// Rows [r0, r1) of one byte (rows x cols) matrix into dst (cols x rows), on the calling thread.
void transpose_byte_rows(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t cols, int64_t r0, int64_t r1);

// One float (rows x cols) matrix, src with row stride src_ld, on the calling thread: dst (cols x rows).
void transpose_inner_serial(const float* src, float* dst, int64_t rows, int64_t src_ld, int64_t cols);

// A block of `count` positions' `channels` floats (rows, row stride `channels`, in cache) into channels-first
// planes on the calling thread: planes[c * plane_stride + p] = rows[p * channels + c], in 8 x 8 tiles (a whole
// channel at a time would write one float per cache line). `output_bytes`: the size of the whole tensor the
// planes belong to; from kStreamingBytes on the aligned tiles are written past the caches.
void rows_to_planes(const float* rows, int64_t count, int64_t channels, float* planes, int64_t plane_stride,
                    int64_t output_bytes = 0);

// Outputs this large do not stay in cache with the data around them: non-temporal stores then skip reading
// each line before writing it (mobilenet at batch 16, 6.4 MB of output: 5.26 to 4.9 ms). A 0.8 MB output
// that the next run finds in cache was 25% slower written that way.
constexpr int64_t kStreamingBytes = int64_t{4} << 20;

}  // namespace qonnx::kernels
