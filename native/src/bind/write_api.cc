// JS entry points for the writers (engine/native/addon.ts): CSV formatting into an
// ordered part sink (a result's partitions formatted by the workers that hold them)
// or into a whole file per part (a folder of parts).
#include <napi.h>

#include "bind/napi_util.h"
#include "io/arrow_write.h"
#include "io/csv_write.h"
#include "io/parquet_write.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

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
  // parquetWritePart(sink, h, part, codec, rowGroupSize): the table as Parquet row
  // groups, part `part` of the sink; its footer kept as the part's trailer
  exports.Set("parquetWritePart", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      std::shared_ptr<PartSink> sink = GetSink(IntArg(info[0]));
      TablePtr t = TableArg(info[1]);
      ParquetCodec codec = ParquetCodecFromName(info[3].As<Napi::String>().Utf8Value());
      std::string file = EncodeParquetFile(*t, codec, IntArg(info[4]));
      uint32_t footer;
      std::memcpy(&footer, file.data() + file.size() - 8, 4);
      const size_t end = file.size() - 8 - footer;
      sink->setTrailer(IntArg(info[2]), file.substr(end, footer));
      file.resize(end);
      file.erase(0, 4);  // "PAR1": the whole file has one, written first
      sink->appendPart(IntArg(info[2]), std::move(file), true);
      return info.Env().Undefined();
    });
  }));
  // sinkTrailers(sink) -> [{ start, trailer }] of every part written, in order
  exports.Set("sinkTrailers", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto parts = GetSink(IntArg(info[0]))->trailers();
      Napi::Array out = Napi::Array::New(info.Env(), parts.size());
      for (size_t i = 0; i < parts.size(); i++) {
        Napi::Object o = Napi::Object::New(info.Env());
        o.Set("start", Napi::Number::New(info.Env(), double(parts[i].first)));
        o.Set("trailer", Napi::Buffer<char>::Copy(info.Env(), parts[i].second.data(), parts[i].second.size()));
        out.Set(uint32_t(i), o);
      }
      return out;
    });
  }));
  // parquetWriteFile(h, path, codec, rowGroupSize) -> bytes: the table as a new Parquet file (O_EXCL)
  exports.Set("parquetWriteFile", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      std::string path = info[1].As<Napi::String>().Utf8Value();
      std::string file = EncodeParquetFile(*t, ParquetCodecFromName(info[2].As<Napi::String>().Utf8Value()), IntArg(info[3]));
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0) throw BasinError("BASIN_IO", "cannot write " + path + ": " + std::strerror(errno));
      size_t at = 0;
      int err = 0;
      while (at < file.size()) {
        ssize_t w = write(fd, file.data() + at, file.size() - at);
        if (w < 0) {
          if (errno == EINTR) continue;
          err = errno;
          break;
        }
        at += size_t(w);
      }
      if (close(fd) != 0 && err == 0) err = errno;
      if (err != 0) {
        unlink(path.c_str());
        throw BasinError("BASIN_IO", "cannot write " + path + ": " +
                                         (err == ENOSPC ? std::string("no space left on the device") : std::strerror(err)));
      }
      return Napi::Number::New(info.Env(), double(file.size()));
    });
  }));
  // sinkAppend(sink, part, bytes): `bytes` as the whole of part `part`
  exports.Set("sinkAppend", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      std::shared_ptr<PartSink> sink = GetSink(IntArg(info[0]));
      Napi::Uint8Array b = info[2].As<Napi::Uint8Array>();
      sink->appendPart(IntArg(info[1]), std::string(reinterpret_cast<const char*>(b.Data()), b.ByteLength()), true);
      return info.Env().Undefined();
    });
  }));
  // arrowWritePart(sink, h, part, rowsPerBatch): the table as Arrow IPC record batches, part `part` of the sink
  exports.Set("arrowWritePart", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      std::shared_ptr<PartSink> sink = GetSink(IntArg(info[0]));
      TablePtr t = TableArg(info[1]);
      WriteArrowPart(*sink, IntArg(info[2]), t, std::max<int64_t>(1, IntArg(info[3])));
      return info.Env().Undefined();
    });
  }));
  // arrowWriteFile(h, path, rowsPerBatch) -> bytes: the table as a new Arrow IPC file (O_EXCL)
  exports.Set("arrowWriteFile", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      int64_t n = WriteArrowFile(info[1].As<Napi::String>().Utf8Value(), t, std::max<int64_t>(1, IntArg(info[2])));
      return Napi::Number::New(info.Env(), double(n));
    });
  }));
  // parquetZstd() -> whether Parquet can be written with zstd
  exports.Set("parquetZstd", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), ParquetZstdAvailable());
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
