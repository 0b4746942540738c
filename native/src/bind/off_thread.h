// Work for a promise, run off the JS thread: a table written or read, a column upload.
#pragma once
#include <napi.h>

#include <functional>
#include <new>
#include <string>

#include "store/column.h"

namespace basin {

// Runs `work` on a libuv pool thread, so the JS thread never waits on the disk or a
// copy, then settles a promise with `done`'s value (made on the JS thread), or rejects
// it with the BasinError's code. `what` names the work for an out-of-memory error.
class OffThread : public Napi::AsyncWorker {
 public:
  OffThread(Napi::Env env, std::string what, std::function<void()> work, std::function<Napi::Value(Napi::Env)> done)
      : Napi::AsyncWorker(env),
        what_(std::move(what)),
        work_(std::move(work)),
        done_(std::move(done)),
        deferred_(Napi::Promise::Deferred::New(env)) {}
  // Queues the work; returns its promise.
  static Napi::Promise Start(Napi::Env env, std::string what, std::function<void()> work, std::function<Napi::Value(Napi::Env)> done) {
    auto* w = new OffThread(env, std::move(what), std::move(work), std::move(done));  // napi deletes it when settled
    Napi::Promise p = w->deferred_.Promise();
    w->Queue();
    return p;
  }

 protected:
  void Execute() override {
    try {
      work_();
    } catch (const BasinError& e) {
      code_ = e.code;
      SetError(e.what());
    } catch (const std::bad_alloc&) {
      code_ = "BASIN_OOM";
      SetError("out of host memory " + what_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    try {
      deferred_.Resolve(done_(Env()));
    } catch (const BasinError& e) {
      code_ = e.code;
      OnError(Napi::Error::New(Env(), e.what()));
    }
  }
  void OnError(const Napi::Error& e) override {
    Napi::Error err = Napi::Error::New(Env(), e.Message());
    err.Set("code", Napi::String::New(Env(), code_));
    deferred_.Reject(err.Value());
  }

 private:
  std::string what_;
  std::function<void()> work_;
  std::function<Napi::Value(Napi::Env)> done_;
  std::string code_ = "BASIN_INTERNAL";
  Napi::Promise::Deferred deferred_;
};

}  // namespace basin
