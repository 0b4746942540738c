// JS entry points for CSV: csvSplit, csvInfer, csvScan (see engine/native/addon.ts).
#include <napi.h>

#include "bind/napi_util.h"
#include "io/csv.h"

namespace basin {
namespace {

void ReadOptions(const Napi::Object& o, CsvOptions* out) {
  if (o.Has("delimiter")) {
    std::string d = o.Get("delimiter").As<Napi::String>().Utf8Value();
    if (d.size() != 1 || d[0] == '"' || d[0] == '\n' || d[0] == '\r')
      throw BasinError("BASIN_INTERNAL", "csv: the delimiter must be one byte other than a quote or newline, got \"" +
                                             d + "\"");
    out->delimiter = d[0];
  }
  if (o.Has("header")) out->header = o.Get("header").ToBoolean().Value();
  if (o.Has("nullValues")) out->nullValues = StringList(o.Get("nullValues"));
  if (o.Has("encoding")) {
    std::string e = o.Get("encoding").As<Napi::String>().Utf8Value();
    if (e == "utf8") out->encoding = CsvEncoding::Utf8;
    else if (e == "latin1") out->encoding = CsvEncoding::Latin1;
    else if (e == "replace") out->encoding = CsvEncoding::Replace;
    else throw BasinError("BASIN_INTERNAL", "csv: unknown encoding \"" + e + "\"");
  }
}

int64_t IntArg(const Napi::Value& v) { return v.As<Napi::Number>().Int64Value(); }

Napi::Value Split(const Napi::CallbackInfo& info) {
  return Guard(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    std::string path = info[0].As<Napi::String>().Utf8Value();
    int64_t blocksize = IntArg(info[1]);
    CsvOptions opts;
    if (info.Length() > 2 && info[2].IsObject()) ReadOptions(info[2].As<Napi::Object>(), &opts);
    std::vector<CsvBlock> blocks = CsvSplit(path, blocksize, opts);
    auto arr = Napi::Array::New(env, blocks.size());
    for (size_t i = 0; i < blocks.size(); i++) {
      auto o = Napi::Object::New(env);
      o.Set("start", Napi::Number::New(env, double(blocks[i].start)));
      o.Set("end", Napi::Number::New(env, double(blocks[i].end)));
      o.Set("line", Napi::Number::New(env, double(blocks[i].line)));
      arr.Set(uint32_t(i), o);
    }
    return arr;
  });
}

Napi::Value Infer(const Napi::CallbackInfo& info) {
  return Guard(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    std::string path = info[0].As<Napi::String>().Utf8Value();
    CsvOptions opts;
    int64_t sampleBytes = 1 << 20;
    if (info.Length() > 1 && info[1].IsObject()) {
      auto o = info[1].As<Napi::Object>();
      ReadOptions(o, &opts);
      if (o.Has("sampleBytes")) sampleBytes = IntArg(o.Get("sampleBytes"));
    }
    CsvSchema s = CsvInfer(path, opts, sampleBytes);
    auto names = Napi::Array::New(env, s.names.size());
    auto types = Napi::Array::New(env, s.types.size());
    auto seen = Napi::Array::New(env, s.types.size());
    for (size_t i = 0; i < s.names.size(); i++) {
      names.Set(uint32_t(i), Napi::String::New(env, s.names[i]));
      types.Set(uint32_t(i), Napi::String::New(env, DTypeName(s.types[i])));
      seen.Set(uint32_t(i), Napi::Boolean::New(env, i < s.seen.size() && s.seen[i]));
    }
    auto out = Napi::Object::New(env);
    out.Set("names", names);
    out.Set("types", types);
    out.Set("seen", seen);
    return out;
  });
}

Napi::Value Scan(const Napi::CallbackInfo& info) {
  return Guard(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    std::string path = info[0].As<Napi::String>().Utf8Value();
    int64_t start = IntArg(info[1]);
    int64_t end = IntArg(info[2]);
    auto o = info[3].As<Napi::Object>();
    CsvScanOptions opts;
    ReadOptions(o, &opts);
    opts.names = StringList(o.Get("names"));
    for (const auto& t : StringList(o.Get("types"))) opts.types.push_back(DTypeFromName(t));
    opts.columns = IntList(o.Get("columns"));
    if (o.Has("line")) opts.line = IntArg(o.Get("line"));
    if (o.Has("onBadLines")) opts.skipBadLines = o.Get("onBadLines").As<Napi::String>().Utf8Value() == "skip";
    CsvScanResult r = CsvScan(path, start, end, opts);
    auto out = Napi::Object::New(env);
    out.Set("handle", PutTable(env, std::move(r.table)));
    out.Set("rows", Napi::Number::New(env, double(r.rows)));
    out.Set("skipped", Napi::Number::New(env, double(r.skipped)));
    return out;
  });
}

}  // namespace

void RegisterCsv(Napi::Env env, Napi::Object exports) {
  exports.Set("csvSplit", Napi::Function::New(env, Split, "csvSplit"));
  exports.Set("csvInfer", Napi::Function::New(env, Infer, "csvInfer"));
  exports.Set("csvScan", Napi::Function::New(env, Scan, "csvScan"));
}

}  // namespace basin
