// JS entry points for sorting and range partitioning (engine/native/addon.ts).
#include <napi.h>

#include <cstring>

#include "bind/napi_util.h"
#include "bind/plan_args.h"
#include "ops/sort.h"

namespace basin {

// [{ column, descending, nullsFirst }] -> SortKey list
std::vector<SortKey> SortKeysArg(const Napi::Value& v) {
  auto arr = v.As<Napi::Array>();
  std::vector<SortKey> keys;
  keys.reserve(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); i++) {
    auto o = arr.Get(i).As<Napi::Object>();
    SortKey k;
    k.column = o.Get("column").As<Napi::Number>().Int32Value();
    k.descending = o.Get("descending").ToBoolean().Value();
    k.nullsFirst = o.Get("nullsFirst").ToBoolean().Value();
    keys.push_back(k);
  }
  return keys;
}

void RegisterSort(Napi::Env env, Napi::Object exports) {
  // sortTable(h, keys) -> handle
  exports.Set("sortTable", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      return PutTable(info.Env(), SortTable(*t, SortKeysArg(info[1])));
    });
  }));
  // sortIndices(h, keys) -> BigInt64Array: the sorting permutation alone (row numbers
  // in sorted order), for a reader that wants a few rows of the order, not the table.
  exports.Set("sortIndices", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      std::vector<int64_t> idx = SortIndices(*t, SortKeysArg(info[1]));
      auto out = Napi::BigInt64Array::New(info.Env(), idx.size());
      if (!idx.empty()) std::memcpy(out.Data(), idx.data(), idx.size() * sizeof(int64_t));
      return out;
    });
  }));
  // sortBoundaries(h, keys, parts) -> handle (key columns only)
  exports.Set("sortBoundaries", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      int parts = info[2].As<Napi::Number>().Int32Value();
      return PutTable(info.Env(), SortBoundaries(*t, SortKeysArg(info[1]), parts));
    });
  }));
  // rangePartition(h, keys, bounds) -> handle[] (bounds.rows + 1 of them)
  exports.Set("rangePartition", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      std::vector<SortKey> keys = SortKeysArg(info[1]);
      TablePtr bounds = TableArg(info[2]);
      std::vector<TablePtr> ps = RangePartition(*t, keys, *bounds);
      auto out = Napi::Array::New(info.Env(), ps.size());
      for (size_t i = 0; i < ps.size(); i++) out.Set(uint32_t(i), PutTable(info.Env(), ps[i]));
      return out;
    });
  }));
}

}  // namespace basin
