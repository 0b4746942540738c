// JS entry points for hash group-by and hash partitioning (engine/native/addon.ts).
#include <napi.h>

#include "bind/napi_util.h"
#include "bind/plan_args.h"
#include "ops/filter_aggregate.h"
#include "ops/groupby.h"

namespace basin {

std::vector<AggSpec> ParseAggs(const Napi::Array& arr) {
  std::vector<AggSpec> aggs;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    auto o = arr.Get(i).As<Napi::Object>();
    AggSpec a;
    a.op = AggOpFromName(o.Get("op").As<Napi::String>().Utf8Value());
    a.column = o.Get("column").As<Napi::Number>().Int32Value();
    a.name = o.Get("name").As<Napi::String>().Utf8Value();
    if (o.Get("q").IsNumber()) a.param = o.Get("q").As<Napi::Number>().DoubleValue();
    if (o.Get("column2").IsNumber()) a.column2 = o.Get("column2").As<Napi::Number>().Int32Value();
    aggs.push_back(std::move(a));
  }
  return aggs;
}

void RegisterGroupBy(Napi::Env env, Napi::Object exports) {
  // groupByAgg(h, keys, aggs: [{ op, column, name }], mode) -> handle
  exports.Set("groupByAgg", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      std::vector<int> keys = IntList(info[1]);
      std::vector<AggSpec> aggs = ParseAggs(info[2].As<Napi::Array>());
      AggMode mode = AggModeFromName(info[3].As<Napi::String>().Utf8Value());
      return PutTable(info.Env(), GroupByAgg(*t, keys, aggs, mode));
    });
  }));
  // filterAggregate(h, predicate, projections: { exprs, names }[], keys, aggs, mode) -> handle:
  // groupByAgg of the rows the predicate keeps, projected in turn (ops/filter_aggregate.h).
  exports.Set("filterAggregate", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      Expr predicate = ParseExpr(info[1].As<Napi::Object>());
      std::vector<Projection> projections;
      auto list = info[2].As<Napi::Array>();
      for (uint32_t j = 0; j < list.Length(); j++) {
        auto o = list.Get(j).As<Napi::Object>();
        auto arr = o.Get("exprs").As<Napi::Array>();
        Projection& p = projections.emplace_back();
        for (uint32_t i = 0; i < arr.Length(); i++) p.exprs.push_back(ParseExpr(arr.Get(i).As<Napi::Object>()));
        p.names = StringList(o.Get("names"));
      }
      std::vector<int> keys = IntList(info[3]);
      std::vector<AggSpec> aggs = ParseAggs(info[4].As<Napi::Array>());
      AggMode mode = AggModeFromName(info[5].As<Napi::String>().Utf8Value());
      return PutTable(info.Env(), FilterAggregate(*t, predicate, projections, keys, aggs, mode));
    });
  }));
  // hashPartition(h, keys, parts) -> handle[]
  exports.Set("hashPartition", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      std::vector<int> keys = IntList(info[1]);
      int parts = info[2].As<Napi::Number>().Int32Value();
      std::vector<TablePtr> ps = HashPartition(*t, keys, parts);
      auto out = Napi::Array::New(info.Env(), ps.size());
      for (size_t i = 0; i < ps.size(); i++) out.Set(uint32_t(i), PutTable(info.Env(), ps[i]));
      return out;
    });
  }));
}

}  // namespace basin
