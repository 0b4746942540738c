// Expressions on the GPU: a resolved expression tree compiled to a short postfix
// program, run by one fused kernel per expression (one thread per row, values on a
// small per-thread stack), so an expression of any depth reads its columns once and
// writes one output column — no intermediate columns.
#pragma once
#include <string>

#include "cuda/device_table.cuh"
#include "ops/expr.h"

namespace basin {
namespace gpu {

// Why `e` cannot be evaluated on the GPU over a table of these column types, or "".
std::string ExprUnsupported(const Expr& e, const std::vector<DType>& types);

// Evaluates e over t into a new computed column (length t.rows, no selection).
DColumn EvalColumn(DTable& t, const Expr& e);

// The rows where `predicate` is true (nulls are false), as int32 logical row numbers
// of t; `count` gets how many.
DBuf SelectRows(DTable& t, const Expr& predicate, int64_t& count);

}  // namespace gpu
}  // namespace basin
