// String results on the GPU (lower, upper, slice, literal replace, concatStr, string
// literals): a two-pass builder, one thread per row. Pass 1 sizes each row's string, an
// exclusive scan turns sizes into offsets, pass 2 writes the bytes; both run one device
// function, so sizes and bytes agree. Nested string functions are built first, into
// columns of their own.
#pragma once
#include <string>
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/expr.h"

namespace basin {
namespace gpu {

// Why the string expression `e` cannot be built on the GPU over columns of these types, or "".
std::string StringUnsupported(const Expr& e, const std::vector<DType>& types);

// Builds the string column e over t's rows (StringUnsupported(e) is "").
DColumn BuildStrings(DTable& t, const Expr& e);

}  // namespace gpu
}  // namespace basin
