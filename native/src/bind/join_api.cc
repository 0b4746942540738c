// JS entry point for hash joins (engine/native/addon.ts).
#include <napi.h>

#include "bind/napi_util.h"
#include "bind/plan_args.h"
#include "ops/join.h"

namespace basin {

JoinSpec ParseJoinSpec(const Napi::Object& o) {
  JoinSpec spec;
  spec.how = JoinHowFromName(o.Get("how").As<Napi::String>().Utf8Value());
  spec.leftKeys = IntList(o.Get("leftKeys"));
  spec.rightKeys = IntList(o.Get("rightKeys"));
  auto arr = o.Get("output").As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++) {
    auto e = arr.Get(i).As<Napi::Object>();
    JoinOutput out;
    std::string side = e.Get("side").As<Napi::String>().Utf8Value();
    if (side == "left") out.side = JoinOutput::Side::Left;
    else if (side == "right") out.side = JoinOutput::Side::Right;
    else if (side == "key") out.side = JoinOutput::Side::Key;
    else throw BasinError("BASIN_INTERNAL", "unknown join output side '" + side + "'");
    out.column = e.Get("column").As<Napi::Number>().Int32Value();
    out.name = e.Get("name").As<Napi::String>().Utf8Value();
    spec.output.push_back(std::move(out));
  }
  return spec;
}

void RegisterJoin(Napi::Env env, Napi::Object exports) {
  // hashJoin(left, right, { how, leftKeys, rightKeys, output: [{ side, column, name }] }) -> handle
  exports.Set("hashJoin", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr left = TableArg(info[0]);
      TablePtr right = TableArg(info[1]);
      return PutTable(info.Env(), HashJoin(*left, *right, ParseJoinSpec(info[2].As<Napi::Object>())));
    });
  }));
  // broadcastJoin(left, [right parts], spec) -> handle: the right side's hash table is reused
  exports.Set("broadcastJoin", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr left = TableArg(info[0]);
      auto a = info[1].As<Napi::Array>();
      std::vector<TablePtr> rights;
      for (uint32_t i = 0; i < a.Length(); i++) rights.push_back(TableArg(a.Get(i)));
      return PutTable(info.Env(), BroadcastJoin(*left, rights, ParseJoinSpec(info[2].As<Napi::Object>())));
    });
  }));
  exports.Set("purgeBroadcastBuilds", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Number::New(info.Env(), double(PurgeBroadcastBuilds()));
    });
  }));
}

}  // namespace basin
