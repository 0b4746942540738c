// Test hooks for the store's device tier on any machine: a stand-in tier whose
// "device" (numbered kStandInDevice) is host memory held apart from the store. Like
// spillPolicyRun, it exercises the store's own logic (a table only on a device, read
// back once, released there, spilled or lost meanwhile); the GPU suite tests the CUDA
// tier itself. Tables the stand-in does not hold go to the tier it replaced.
#include <napi.h>

#include <map>
#include <mutex>
#include <string>

#include "bind/napi_util.h"
#include "io/spill_file.h"
#include "store/store.h"

namespace basin {

namespace {

constexpr int kStandInDevice = 90;

class StandInTier : public DeviceTier {
 public:
  // What a table's download does: give it back; hand it to the store as spilled to the
  // host meanwhile (then null); null with nothing spilled (the GPU was reset); throw
  // BASIN_CUDA once, then give it back.
  enum class Mode { Ok, Spilled, Lost, FailOnce };

  void hold(uint64_t handle, TablePtr table, Mode mode) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_[handle] = Held{std::move(table), mode};
  }

  TablePtr download(int device, uint64_t handle) override {
    Held held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = tables_.find(handle);
      if (device != kStandInDevice || it == tables_.end()) return next ? next->download(device, handle) : nullptr;
      downloads_++;
      if (it->second.mode == Mode::FailOnce) {
        it->second.mode = Mode::Ok;
        throw BasinError("BASIN_CUDA", "GPU " + std::to_string(device) + ": copy to host failed (a test failure)");
      }
      held = it->second;
      if (held.mode == Mode::Lost) return nullptr;  // and so every time
      tables_.erase(it);
    }
    if (held.mode == Mode::Spilled) {
      Store::Instance().deviceSpilled(handle, held.table);
      return nullptr;
    }
    return held.table;
  }

  void drop(int device, uint64_t handle) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (device != kStandInDevice) {
      if (next) next->drop(device, handle);
      return;
    }
    tables_.erase(handle);
    drops_++;
  }

  // Downloads and drops of its own tables so far.
  std::pair<int64_t, int64_t> counts() {
    std::lock_guard<std::mutex> lock(mu_);
    return {downloads_, drops_};
  }

  DeviceTier* next = nullptr;  // the tier it replaced

 private:
  int64_t downloads_ = 0, drops_ = 0;
  struct Held {
    TablePtr table;
    Mode mode = Mode::Ok;
  };
  std::mutex mu_;
  std::map<uint64_t, Held> tables_;
};

StandInTier& StandIn() {
  static StandInTier* tier = new StandInTier();  // lives as long as the store may call it
  return *tier;
}

StandInTier::Mode ModeArg(const std::string& m) {
  if (m == "ok") return StandInTier::Mode::Ok;
  if (m == "spilled") return StandInTier::Mode::Spilled;
  if (m == "lost") return StandInTier::Mode::Lost;
  if (m == "fail-once") return StandInTier::Mode::FailOnce;
  throw BasinError("BASIN_INTERNAL", "unknown stand-in tier mode '" + m + "'");
}

}  // namespace

void RegisterDeviceTier(Napi::Env env, Napi::Object exports) {
  // deviceTierStandIn(on): installs the stand-in tier (true) or puts back the one it replaced (false).
  exports.Set("deviceTierStandIn", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      StandInTier& tier = StandIn();
      const bool on = info[0].As<Napi::Boolean>().Value();
      Store& store = Store::Instance();
      if (on) {
        DeviceTier* before = store.setDeviceTier(&tier);
        if (before != &tier) tier.next = before;
      } else {
        DeviceTier* before = store.setDeviceTier(tier.next);
        if (before != &tier) store.setDeviceTier(before);  // it was not installed
      }
      return info.Env().Undefined();
    });
  }));
  // deviceTierStandInPut(h, mode, deviceBytes?) -> handle: a new table of the device tier on the
  // stand-in's device holding table h's data (counted as deviceBytes there, default its
  // host bytes); `mode` ("ok", "spilled", "lost", "fail-once") says what reading it back does.
  exports.Set("deviceTierStandInPut", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      const StandInTier::Mode mode = ModeArg(info[1].As<Napi::String>().Utf8Value());
      std::vector<DType> types;
      for (const Column& c : t->columns) types.push_back(c.type);
      TablePtr shape = ShapeTable(t->names, types, t->rows);
      const int64_t bytes = info[2].IsNumber() ? info[2].As<Napi::Number>().Int64Value() : TableBytes(*t);
      const uint64_t h = Store::Instance().putOnDevice(kStandInDevice, shape, bytes);
      StandIn().hold(h, t, mode);
      return HandleValue(info.Env(), h);
    });
  }));
  // deviceTierStandInCounts() -> { downloads, drops } of the stand-in's tables so far.
  exports.Set("deviceTierStandInCounts", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    auto [downloads, drops] = StandIn().counts();
    auto o = Napi::Object::New(info.Env());
    o.Set("downloads", double(downloads));
    o.Set("drops", double(drops));
    return o;
  }));
}

}  // namespace basin
