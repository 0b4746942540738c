// JS entry points for the writers (engine/native/addon.ts): CSV formatting into an
// ordered part sink (a result's partitions formatted by the workers that hold them)
// or into a whole file per part (a folder of parts).
#include <napi.h>

#include "bind/napi_util.h"
#include "io/csv_write.h"

namespace basin {
namespace {

int64_t IntArg(const Napi::Value& v) { return v.As<Napi::Number>().Int64Value(); }

Napi::Value StatusValue(Napi::Env env, const PartSink::Status& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("parts", Napi::Number::New(env, double(s.partsWritten)));
  o.Set("bytes", Napi::Number::New(env, double(s.bytes)));
  o.Set("pendingBytes", Napi::Number::New(env, double(s.pendingBytes)));
  o.Set("error", s.error.empty() ? env.Null() : Napi::String::New(env, s.error));
  return o;
}

}  // namespace

void RegisterWrite(Napi::Env env, Napi::Object exports) {
  // sinkOpen(fd, offset) -> sink id; the sink owns the fd from now on (closed once the sink is closed and idle)
  exports.Set("sinkOpen", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Number::New(info.Env(), double(OpenSink(int(IntArg(info[0])), IntArg(info[1]))));
    });
  }));
  // sinkStatus(id) -> { parts, bytes, pendingBytes, error }
  exports.Set("sinkStatus", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value { return StatusValue(info.Env(), GetSink(IntArg(info[0]))->status()); });
  }));
  // sinkClose(id) -> { parts, bytes, pendingBytes, error }: later parts sent to it fail
  exports.Set("sinkClose", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value { return StatusValue(info.Env(), CloseSink(IntArg(info[0]))); });
  }));
  // csvWritePart(sink, h, part): the table's rows as CSV lines, as part `part` of the sink
  exports.Set("csvWritePart", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      std::shared_ptr<PartSink> sink = GetSink(IntArg(info[0]));
      TablePtr t = TableArg(info[1]);
      WriteCsvPart(*sink, IntArg(info[2]), *t);
      return info.Env().Undefined();
    });
  }));
  // csvWriteFile(h, path, header) -> bytes written (a new file)
  exports.Set("csvWriteFile", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      int64_t n = WriteCsvFile(info[1].As<Napi::String>().Utf8Value(), *t, info[2].ToBoolean().Value());
      return Napi::Number::New(info.Env(), double(n));
    });
  }));
  // csvFormat(h) -> Buffer: the table's rows as CSV lines (no header)
  exports.Set("csvFormat", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      std::string out;
      FormatCsvRows(*t, 0, t->rows, out);
      return Napi::Buffer<char>::Copy(info.Env(), out.data(), out.size());
    });
  }));
}

}  // namespace basin
