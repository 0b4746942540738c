// JS entry points for memory limits and spilling: configureMemory, memoryStats,
// pin/unpin, memorySpill, and spillPolicyRun (replays the pure policy for tests).
#include <napi.h>

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "bind/napi_util.h"
#include "bind/off_thread.h"
#include "io/spill_file.h"
#include "store/block_pool.h"
#include "store/spill_policy.h"
#include "store/store.h"

namespace basin {

namespace {

int64_t LimitArg(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Int64Value() : SpillPolicy::kUnlimited;
}

Napi::Object PlanToJs(Napi::Env env, const SpillPlan& p) {
  auto o = Napi::Object::New(env);
  auto moves = Napi::Array::New(env, p.moves.size());
  for (size_t i = 0; i < p.moves.size(); i++) {
    auto m = Napi::Object::New(env);
    m.Set("id", double(p.moves[i].id));
    m.Set("from", TierName(p.moves[i].from));
    m.Set("to", TierName(p.moves[i].to));
    m.Set("bytes", double(p.moves[i].bytes));
    if (p.moves[i].reuse) m.Set("reuse", true);
    moves.Set(uint32_t(i), m);
  }
  o.Set("moves", moves);
  o.Set("nextTierFull", p.nextTierFull);
  o.Set("stillOver", p.stillOver);
  return o;
}

// spillPolicyRun({ limits, target }, events) -> { steps, tiers, where }: a script of
// events through a fresh SpillPolicy, carrying out every planned move.
Napi::Value PolicyRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto cfg = info[0].As<Napi::Object>();
  SpillPolicy p;
  if (cfg.Get("limits").IsObject()) {
    auto lim = cfg.Get("limits").As<Napi::Object>();
    for (int t = 0; t < kTierCount; t++) p.setLimit(Tier(t), LimitArg(lim, TierName(Tier(t))));
  }
  if (cfg.Get("target").IsNumber()) p.setTarget(cfg.Get("target").As<Napi::Number>().DoubleValue());
  auto events = info[1].As<Napi::Array>();
  auto steps = Napi::Array::New(env, events.Length());
  std::set<uint64_t> ids;
  for (uint32_t i = 0; i < events.Length(); i++) {
    auto e = events.Get(i).As<Napi::Object>();
    std::string op = e.Get("op").As<Napi::String>().Utf8Value();
    uint64_t id = e.Get("id").IsNumber() ? uint64_t(e.Get("id").As<Napi::Number>().Int64Value()) : 0;
    Tier tier = e.Get("tier").IsString() ? TierFromName(e.Get("tier").As<Napi::String>().Utf8Value().c_str()) : Tier::Host;
    Napi::Value out = env.Null();
    if (op == "add") {
      p.add(id, e.Get("bytes").As<Napi::Number>().Int64Value(), tier);
      ids.insert(id);
    } else if (op == "remove") {
      p.remove(id);
      ids.erase(id);
    } else if (op == "touch") {
      p.touch(id);
    } else if (op == "pin") {
      p.pin(id);
    } else if (op == "unpin") {
      p.unpin(id);
    } else if (op == "unspill") {  // read back from disk; `keep`: its file stays
      p.moved(id, tier, e.Get("keep").ToBoolean().Value());
    } else if (op == "dropCopy") {
      p.dropCopy(id);
    } else if (op == "pressure" || op == "allocFailed") {
      std::set<uint64_t> busy;
      if (e.Get("busy").IsArray()) {
        auto b = e.Get("busy").As<Napi::Array>();
        for (uint32_t j = 0; j < b.Length(); j++) busy.insert(uint64_t(b.Get(j).As<Napi::Number>().Int64Value()));
      }
      auto isBusy = [&](uint64_t x) { return busy.count(x) > 0; };
      int64_t need = e.Get("need").IsNumber() ? e.Get("need").As<Napi::Number>().Int64Value() : 0;
      int64_t used = e.Get("used").IsNumber() ? e.Get("used").As<Napi::Number>().Int64Value() : p.bytes(tier);
      SpillPlan plan = op == "pressure" ? p.plan(tier, used, need, isBusy) : p.planToFree(tier, need, isBusy);
      for (auto& m : plan.moves) p.moved(m.id, m.to);
      out = PlanToJs(env, plan);
    } else {
      throw BasinError("BASIN_INTERNAL", "spillPolicyRun: unknown op '" + op + "'");
    }
    steps.Set(i, out);
  }
  auto tiers = Napi::Object::New(env);
  for (int t = 0; t < kTierCount; t++) tiers.Set(TierName(Tier(t)), double(p.bytes(Tier(t))));
  auto where = Napi::Object::New(env);
  for (uint64_t id : ids) where.Set(std::to_string(id), TierName(p.tier(id)));
  auto o = Napi::Object::New(env);
  o.Set("steps", steps);
  o.Set("tiers", tiers);
  o.Set("where", where);
  return o;
}


}  // namespace

void RegisterSpill(Napi::Env env, Napi::Object exports) {
  // configureMemory({ hostLimit, diskLimit, target, directory, compression }); limits -1 = none.
  exports.Set("configureMemory", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto o = info[0].As<Napi::Object>();
      MemoryConfig c;
      c.hostLimit = LimitArg(o, "hostLimit");
      c.diskLimit = LimitArg(o, "diskLimit");
      if (o.Get("target").IsNumber()) c.target = o.Get("target").As<Napi::Number>().DoubleValue();
      if (o.Get("directory").IsString()) c.directory = o.Get("directory").As<Napi::String>().Utf8Value();
      if (o.Get("compression").IsString()) c.codec = SpillCodecFromName(o.Get("compression").As<Napi::String>().Utf8Value());
      Store::Instance().configure(c);
      return info.Env().Undefined();
    });
  }));
  exports.Set("memoryStats", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      MemoryStats s = Store::Instance().memoryStats();
      MemoryConfig c = Store::Instance().config();
      auto o = Napi::Object::New(info.Env());
      o.Set("hostBytes", double(s.hostBytes));
      o.Set("hostLimit", double(s.hostLimit));
      o.Set("hostTables", double(s.hostTables));
      o.Set("diskBytes", double(s.diskBytes));
      o.Set("diskTables", double(s.diskTables));
      o.Set("diskLimit", double(c.diskLimit));
      o.Set("deviceBytes", double(s.deviceBytes));
      o.Set("spilledCount", double(s.spilledCount));
      o.Set("spilledBytes", double(s.spilledBytes));
      o.Set("unspilledCount", double(s.unspilledCount));
      o.Set("unspilledBytes", double(s.unspilledBytes));
      o.Set("writtenBytes", double(s.writtenBytes));
      o.Set("reusedCount", double(s.reusedCount));
      o.Set("pooledBytes", double(BlockPool::Instance().heldBytes()));
      o.Set("compression", SpillCodecName(c.codec));
      o.Set("spillSeconds", s.spillSeconds);
      o.Set("unspillSeconds", s.unspillSeconds);
      o.Set("overLimit", s.overLimit);
      o.Set("directory", c.directory);
      return o;
    });
  }));
  exports.Set("pin", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Store::Instance().pin(HandleArg(info[0]));
      return info.Env().Undefined();
    });
  }));
  exports.Set("unpin", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Store::Instance().unpin(HandleArg(info[0]));
      return info.Env().Undefined();
    });
  }));
  exports.Set("tableExists", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Boolean::New(info.Env(), Store::Instance().has(HandleArg(info[0])));
    });
  }));
  exports.Set("isSpilled", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Boolean::New(info.Env(), Store::Instance().isSpilled(HandleArg(info[0])));
    });
  }));
  // readBack(handle) -> Promise: a spilled table read back into memory off the JS thread
  // (pin it first, or it may be evicted again before it is used).
  exports.Set("readBack", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      uint64_t h = HandleArg(info[0]);
      return OffThread::Start(
          info.Env(), "reading a spilled table back", [h] { Store::Instance().get(h); },
          [](Napi::Env env) { return env.Undefined(); });
    });
  }));
  exports.Set("tableRows", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Number::New(info.Env(), double(Store::Instance().rows(HandleArg(info[0]))));
    });
  }));
  // tableBytes(h): the table's bytes in memory when it was stored (spilled or not)
  exports.Set("tableBytes", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Number::New(info.Env(), double(Store::Instance().bytes(HandleArg(info[0]))));
    });
  }));
  // memorySpill(bytes): spills least recently used tables until `bytes` are freed, now, on this thread.
  exports.Set("memorySpill", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Store::Instance().maybeSpill(info[0].As<Napi::Number>().Int64Value(), true);
      return info.Env().Undefined();
    });
  }));
  // tableSave(handle, path) -> Promise<bytes>: the table as an uncompressed spill file,
  // written off the JS thread: the way tables travel between Basin's processes. The
  // caller holds the handle until it resolves; the table is read (back from disk or
  // down from a GPU) off the JS thread too.
  exports.Set("tableSave", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const uint64_t h = HandleArg(info[0]);
      std::string path = info[1].As<Napi::String>();
      auto bytes = std::make_shared<int64_t>(0);
      return OffThread::Start(
          info.Env(), "writing a table to " + path,
          [h, path, bytes] { *bytes = WriteSpillFile(path, *Store::Instance().get(h), SpillCodec::None); },
          [bytes](Napi::Env env) { return Napi::Number::New(env, double(*bytes)); });
    });
  }));
  // tablesToHost(handles) -> Promise: tables whose only copy is on a GPU (the device
  // tier) copied to the host, off the JS thread; the caller holds the handles until it
  // resolves. Others are left where they are.
  exports.Set("tablesToHost", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto arr = info[0].As<Napi::Array>();
      std::vector<uint64_t> handles;
      for (uint32_t i = 0; i < arr.Length(); i++) {
        const uint64_t h = HandleArg(arr.Get(i));
        if (Store::Instance().deviceOf(h) >= 0) handles.push_back(h);
      }
      return OffThread::Start(
          info.Env(), "copying results from the GPU to the host",
          [handles] {
            for (uint64_t h : handles) Store::Instance().get(h);
          },
          [](Napi::Env env) { return env.Undefined(); });
    });
  }));
  // tableDevice(handle) -> the GPU holding the table's only copy (the device tier), or -1.
  exports.Set("tableDevice", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value { return Napi::Number::New(info.Env(), Store::Instance().deviceOf(HandleArg(info[0]))); });
  }));
  // tableLoad(path) -> Promise<handle>: a file tableSave wrote, read off the JS thread
  // into this process's store.
  exports.Set("tableLoad", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      std::string path = info[0].As<Napi::String>();
      auto table = std::make_shared<TablePtr>();
      return OffThread::Start(
          info.Env(), "reading a table from " + path, [path, table] { *table = ReadSpillFile(path); },
          [table](Napi::Env env) { return PutTable(env, std::move(*table)); });
    });
  }));
  exports.Set("spillPolicyRun", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value { return PolicyRun(info); });
  }));
}

}  // namespace basin
