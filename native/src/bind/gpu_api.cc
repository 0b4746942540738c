// JS entry points for the GPU (engine/native/addon.ts): build info, devices, settings,
// which steps of a task a GPU can run, running them, statistics and fault hooks.
#include <napi.h>

#include "bind/napi_util.h"
#include "bind/off_thread.h"
#include "bind/plan_args.h"
#include "gpu/gpu.h"
#include "io/spill_file.h"
#include "store/store.h"

namespace basin {
namespace {

// A task's steps as engine/lower/tasks.ts writes them; parsing stops at the first step
// the GPU runner has no kind for (the rest run on the CPU).
std::vector<gpu::Step> ParseSteps(const Napi::Array& arr) {
  std::vector<gpu::Step> out;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    auto o = arr.Get(i).As<Napi::Object>();
    std::string kind = o.Get("kind").As<Napi::String>().Utf8Value();
    gpu::Step s;
    if (kind == "filter") {
      s.kind = gpu::Step::Kind::Filter;
      s.predicate = ParseExpr(o.Get("predicate").As<Napi::Object>());
    } else if (kind == "project") {
      s.kind = gpu::Step::Kind::Project;
      auto exprs = o.Get("exprs").As<Napi::Array>();
      for (uint32_t k = 0; k < exprs.Length(); k++) s.exprs.push_back(ParseExpr(exprs.Get(k).As<Napi::Object>()));
      s.names = StringList(o.Get("names"));
    } else if (kind == "aggregate") {
      s.kind = gpu::Step::Kind::Aggregate;
      s.keys = IntList(o.Get("keys"));
      s.aggs = ParseAggs(o.Get("aggs").As<Napi::Array>());
      s.mode = AggModeFromName(o.Get("mode").As<Napi::String>().Utf8Value());
    } else if (kind == "topK") {
      s.kind = gpu::Step::Kind::TopK;
      s.keys = IntList(o.Get("keys"));
      s.column = o.Get("column").As<Napi::Number>().Int32Value();
      s.k = o.Get("k").As<Napi::Number>().Int64Value();
      s.descending = o.Get("descending").ToBoolean().Value();
    } else {
      break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Column types after a step (Project changes them; Filter keeps them).
Table Shape(const Table& in, const gpu::Step& s) {
  Table t;
  t.rows = in.rows;
  if (s.kind != gpu::Step::Kind::Project) {
    t.columns = in.columns;
    return t;
  }
  for (const Expr& e : s.exprs) {
    Column c;
    c.type = e.type;
    t.columns.push_back(c);
  }
  return t;
}

// Table h as GPU `device`'s checks read it: its shape when its only copy is on that
// GPU (nothing comes down for a check), else the table itself.
TablePtr ShapeArg(int device, const Napi::Value& v) {
  if (TablePtr shape = Store::Instance().onDevice(HandleArg(v), device)) return shape;
  return TableArg(v);
}

// A GPU operation's output as a handle: one it kept on the device, or its host table stored.
Napi::Value OutputValue(Napi::Env env, const gpu::Output& out) {
  if (out.host) return PutTable(env, out.host);
  try {
    return HandleValue(env, out.handle);
  } catch (...) {
    Store::Instance().release(out.handle);  // the thread is terminating: nobody will ever own it
    throw;
  }
}

Napi::Object DeviceObject(Napi::Env env, const gpu::DeviceInfo& d) {
  auto o = Napi::Object::New(env);
  o.Set("index", d.index);
  o.Set("name", d.name);
  o.Set("totalMemory", double(d.totalMemory));
  o.Set("computeCapability", std::to_string(d.major) + "." + std::to_string(d.minor));
  o.Set("multiprocessors", d.multiprocessors);
  o.Set("bandwidthGBs", d.bandwidthGBs);
  o.Set("pciBusId", d.pciBusId);
  return o;
}

}  // namespace

void RegisterGpu(Napi::Env env, Napi::Object exports) {
  exports.Set("buildInfo", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    gpu::RuntimeInfo r = gpu::Runtime();
    auto o = Napi::Object::New(info.Env());
    o.Set("cuda", r.compiled);
    o.Set("gpus", int(r.devices.size()));
    o.Set("napiVersion", NAPI_VERSION);
    // The spill compressions this build has, best first ("none" always).
    auto codecs = Napi::Array::New(info.Env());
    for (SpillCodec c : {SpillCodec::Lz4, SpillCodec::Zstd, SpillCodec::None})
      if (SpillCodecAvailable(c)) codecs.Set(codecs.Length(), SpillCodecName(c));
    o.Set("spillCompression", codecs);
    return o;
  }));
  // gpuInfo() -> { compiled, driverVersion, runtimeVersion, note, devices }
  exports.Set("gpuInfo", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    gpu::RuntimeInfo r = gpu::Runtime();
    auto o = Napi::Object::New(info.Env());
    o.Set("compiled", r.compiled);
    o.Set("driverVersion", r.driverVersion);
    o.Set("runtimeVersion", r.runtimeVersion);
    o.Set("note", r.note);
    auto devs = Napi::Array::New(info.Env(), r.devices.size());
    for (size_t i = 0; i < r.devices.size(); i++) devs.Set(uint32_t(i), DeviceObject(info.Env(), r.devices[i]));
    o.Set("devices", devs);
    return o;
  }));
  // gpuConfigure(device, { memoryLimit, poolSize, asyncAllocator, stagedCopies, keepResults })
  exports.Set("gpuConfigure", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto o = info[1].As<Napi::Object>();
      gpu::DeviceConfig c;
      if (o.Get("memoryLimit").IsNumber()) c.memoryLimit = o.Get("memoryLimit").As<Napi::Number>().Int64Value();
      if (o.Get("poolSize").IsNumber()) c.poolSize = o.Get("poolSize").As<Napi::Number>().Int64Value();
      if (o.Get("asyncAllocator").IsBoolean()) c.asyncAllocator = o.Get("asyncAllocator").As<Napi::Boolean>().Value();
      if (o.Get("stagedCopies").IsBoolean()) c.stagedCopies = o.Get("stagedCopies").As<Napi::Boolean>().Value();
      if (o.Get("keepResults").IsBoolean()) c.keepResults = o.Get("keepResults").As<Napi::Boolean>().Value();
      gpu::Configure(info[0].As<Napi::Number>().Int32Value(), c);
      return info.Env().Undefined();
    });
  }));
  // gpuWarm(device): context, stream and memory pool made now
  exports.Set("gpuWarm", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      gpu::Warm(info[0].As<Napi::Number>().Int32Value());
      return info.Env().Undefined();
    });
  }));
  // gpuPrefix(device, h, steps) -> how many leading steps GPU `device` can run over table h
  exports.Set("gpuPrefix", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int device = info[0].As<Napi::Number>().Int32Value();
      if (!gpu::Broken(device).empty()) return Napi::Number::New(info.Env(), 0);
      TablePtr t = ShapeArg(device, info[1]);
      std::vector<gpu::Step> steps = ParseSteps(info[2].As<Napi::Array>());
      Table shape = *t;
      uint32_t n = 0;
      for (const gpu::Step& s : steps) {
        if (!gpu::Unsupported(s, shape).empty()) break;
        n++;
        if (s.kind == gpu::Step::Kind::Aggregate) break;  // its result is on the host
        shape = Shape(shape, s);
      }
      return Napi::Number::New(info.Env(), n);
    });
  }));
  // gpuRun(device, h, steps) -> handle
  exports.Set("gpuRun", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int device = info[0].As<Napi::Number>().Int32Value();
      return OutputValue(info.Env(), gpu::Run(device, HandleArg(info[1]), ParseSteps(info[2].As<Napi::Array>())));
    });
  }));
  // gpuKeep(device, h) -> Promise: every column of table h uploaded to the GPU's cache, off the JS thread
  exports.Set("gpuKeep", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int device = info[0].As<Napi::Number>().Int32Value();
      const uint64_t h = HandleArg(info[1]);
      TablePtr t = TableArg(info[1]);
      return OffThread::Start(
          info.Env(), "keeping a table on GPU " + std::to_string(device), [device, h, t] { gpu::Keep(device, h, t); },
          [](Napi::Env env) { return env.Undefined(); });
    });
  }));
  // gpuJoinable(device, left, right, spec) -> whether GPU `device` matches this join's rows
  exports.Set("gpuJoinable", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int device = info[0].As<Napi::Number>().Int32Value();
      if (!gpu::Broken(device).empty()) return Napi::Boolean::New(info.Env(), false);
      TablePtr l = ShapeArg(device, info[1]), r = ShapeArg(device, info[2]);
      return Napi::Boolean::New(info.Env(), gpu::JoinUnsupported(*l, *r, ParseJoinSpec(info[3].As<Napi::Object>())).empty());
    });
  }));
  // gpuJoin(device, left, right, spec) -> handle
  exports.Set("gpuJoin", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int device = info[0].As<Napi::Number>().Int32Value();
      return OutputValue(info.Env(), gpu::Join(device, HandleArg(info[1]), HandleArg(info[2]), ParseJoinSpec(info[3].As<Napi::Object>())));
    });
  }));
  // gpuSortable(device, h, keys) -> whether GPU `device` orders this sort's rows
  exports.Set("gpuSortable", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int device = info[0].As<Napi::Number>().Int32Value();
      if (!gpu::Broken(device).empty()) return Napi::Boolean::New(info.Env(), false);
      return Napi::Boolean::New(info.Env(), gpu::SortUnsupported(*ShapeArg(device, info[1]), SortKeysArg(info[2])).empty());
    });
  }));
  // gpuSort(device, h, keys) -> handle
  exports.Set("gpuSort", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return OutputValue(info.Env(), gpu::Sort(info[0].As<Napi::Number>().Int32Value(), HandleArg(info[1]), SortKeysArg(info[2])));
    });
  }));
  exports.Set("gpuStats", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    std::vector<gpu::MemoryStats> s = gpu::Stats();
    auto arr = Napi::Array::New(info.Env(), s.size());
    for (size_t i = 0; i < s.size(); i++) {
      auto o = Napi::Object::New(info.Env());
      const gpu::MemoryStats& m = s[i];
      o.Set("device", m.device);
      for (auto [k, v] : {std::pair<const char*, int64_t>{"used", m.used}, {"limit", m.limit}, {"poolSize", m.poolSize},
                          {"cachedBytes", m.cachedBytes}, {"cachedColumns", m.cachedColumns}, {"evictions", m.evictions},
                          {"evictedBytes", m.evictedBytes}, {"uploads", m.uploads}, {"uploadBytes", m.uploadBytes},
                          {"downloads", m.downloads}, {"downloadBytes", m.downloadBytes}, {"cacheHits", m.cacheHits},
                          {"chains", m.chains}, {"failures", m.failures}, {"chainMicros", m.chainMicros},
                          {"uploadMicros", m.uploadMicros}, {"downloadMicros", m.downloadMicros},
                          {"resultTables", m.resultTables}, {"resultBytes", m.resultBytes}, {"resultSpills", m.resultSpills},
                          {"resultSpilledBytes", m.resultSpilledBytes}})
        o.Set(k, double(v));
      auto phases = Napi::Object::New(info.Env());
      for (auto& [phase, micros] : m.phases) phases.Set(phase, double(micros));
      o.Set("phases", phases);
      if (m.broken.empty()) o.Set("broken", info.Env().Null());
      else o.Set("broken", m.broken);
      arr.Set(uint32_t(i), o);
    }
    return arr;
  }));
  exports.Set("gpuFault", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      gpu::Fault(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::String>().Utf8Value());
      return info.Env().Undefined();
    });
  }));
}

}  // namespace basin
