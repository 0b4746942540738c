// Plan pieces as they arrive from JS (engine/native/addon.ts), parsed once for every
// entry point that takes them (the CPU kernels' and the GPU runner's).
#pragma once
#include <napi.h>

#include <vector>

#include "ops/expr.h"
#include "ops/groupby.h"
#include "ops/join.h"
#include "ops/sort.h"

namespace basin {

Expr ParseExpr(const Napi::Object& o);
std::vector<AggSpec> ParseAggs(const Napi::Array& arr);
JoinSpec ParseJoinSpec(const Napi::Object& o);
std::vector<SortKey> SortKeysArg(const Napi::Value& v);

}  // namespace basin
