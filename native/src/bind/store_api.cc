// JS entry points for the store: handles, stats, copies in and out of JS memory.
#include <napi.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "bind/napi_util.h"
#include "io/utf8.h"
#include "store/block_pool.h"
#include "store/store.h"

namespace basin {
namespace {

// Whether this runtime lets an ArrayBuffer wrap native memory (Electron's V8 sandbox
// does not): off after the first refusal, and every column is copied from then on.
std::atomic<bool> g_wrapAllowed{true};

// How a buffer crosses to JS. Move: nobody else holds it, so it leaves the store's
// accounting and is freed when JS collects the array. Share: JS reads it, never writes
// it (a result Table's arrays are internal), so the array keeps a reference to a buffer
// other tables still hold. Copy: JS gets bytes of its own.
enum class Handover { Copy, Move, Share };

// `count` elements of `width` bytes at the start of buffer `b` as a typed array.
template <typename Arr>
Napi::Value ToJs(Napi::Env env, const BufferPtr& b, size_t count, size_t width, Handover how) {
  const size_t bytes = count * width;
  if (how != Handover::Copy && bytes > 0 && g_wrapAllowed.load()) {
    auto hint = std::make_unique<BufferPtr>(b);
    try {
      // V8 is told of the bytes it now keeps alive, or it would not collect soon
      // enough: its heap sees a small object over a large native buffer.
      auto buf = Napi::ArrayBuffer::New(
          env, b->data(), bytes,
          [](Napi::Env e, void*, BufferPtr* held) {
            std::unique_ptr<BufferPtr> drop(held);
            Napi::MemoryManagement::AdjustExternalMemory(e, -int64_t((*held)->size()));
          },
          hint.get());
      hint.release();  // the finalizer owns it now
      if (how == Handover::Move) b->uncount();
      Napi::MemoryManagement::AdjustExternalMemory(env, int64_t(b->size()));
      return Arr::New(env, count, buf, 0);
    } catch (const Napi::Error&) {
      g_wrapAllowed.store(false);
    }
  }
  auto buf = Napi::ArrayBuffer::New(env, bytes);
  if (bytes) std::memcpy(buf.Data(), b->data(), bytes);
  return Arr::New(env, count, buf, 0);
}

// Whether every byte is below 0x80, a block at a time: an OR the compiler vectorizes
// (a byte-at-a-time loop with an early exit scanned ~1 byte a cycle).
bool AllAscii(const uint8_t* p, size_t n) {
  constexpr size_t kBlock = 4096;
  for (size_t at = 0; at < n; at += kBlock) {
    uint8_t any = 0;
    const size_t end = std::min(n, at + kBlock);
    for (size_t i = at; i < end; i++) any |= p[i];
    if (any & 0x80) return false;
  }
  return true;
}

// A column as JS arrays, its buffers handed over as `table` says, except that a Move
// shares the buffers other tables still hold.
Napi::Value ColumnToJs(Napi::Env env, const Column& c, Handover table) {
  auto o = Napi::Object::New(env);
  o.Set("type", DTypeName(c.type));
  size_t n = size_t(c.length);
  auto how = [&](const BufferPtr& b) { return table == Handover::Move && b.use_count() > 1 ? Handover::Share : table; };
  switch (c.type) {
    case DType::Int64:
    case DType::Timestamp:
      o.Set("values", ToJs<Napi::BigInt64Array>(env, c.data, n, 8, how(c.data)));
      break;
    case DType::Float64:
      o.Set("values", ToJs<Napi::Float64Array>(env, c.data, n, 8, how(c.data)));
      break;
    case DType::Bool:
      o.Set("values", ToJs<Napi::Uint8Array>(env, c.data, n, 1, how(c.data)));
      break;
    case DType::Date:
      o.Set("values", ToJs<Napi::Int32Array>(env, c.data, n, 4, how(c.data)));
      break;
    case DType::String: {
      // Bytes and offsets in bulk (one string object per value is 50x slower);
      // engine/native/addon.ts turns them into JS strings. Offsets JS does not copy cross
      // as the store's int64 (`offsets64`), made doubles when first read
      // (engine/native/take_table.ts); copies are doubles at once.
      const int64_t* off = c.data->as<int64_t>();
      const size_t bytes = size_t(off[n]);
      const Handover oh = how(c.data);
      auto raw = Napi::Object::New(env);
      if (oh != Handover::Copy) {
        raw.Set("offsets64", ToJs<Napi::BigInt64Array>(env, c.data, n + 1, 8, oh));
      } else {
        auto copy = Napi::Float64Array::New(env, n + 1);
        for (size_t i = 0; i <= n; i++) copy[i] = double(off[i]);
        raw.Set("offsets", copy);
      }
      const bool ascii = AllAscii(c.chars->data(), bytes);
      raw.Set("chars", ToJs<Napi::Uint8Array>(env, c.chars, bytes, 1, how(c.chars)));
      raw.Set("ascii", ascii);
      o.Set("values", raw);
      break;
    }
  }
  o.Set("validity", c.validity ? ToJs<Napi::Uint8Array>(env, c.validity, n, 1, how(c.validity)) : env.Null());
  return o;
}

Napi::Value TableToJs(Napi::Env env, const Table& t, Handover how) {
  auto o = Napi::Object::New(env);
  auto names = Napi::Array::New(env), cols = Napi::Array::New(env);
  for (size_t i = 0; i < t.columns.size(); i++) {
    names.Set(uint32_t(i), t.names[i]);
    cols.Set(uint32_t(i), ColumnToJs(env, t.columns[i], how));
  }
  o.Set("rows", double(t.rows));
  o.Set("names", names);
  o.Set("columns", cols);
  return o;
}

// Readers hand over columns built from file bytes (Arrow, Parquet): every length and
// offset is checked before it is read, so a corrupt file is an error, never a read
// outside the arrays (a crash, or values from elsewhere in memory).
[[noreturn]] void Corrupt(const std::string& name, const std::string& what) {
  throw BasinError("BASIN_IO", "column \"" + name + "\": " + what + "; the file is corrupt or was written wrongly");
}

// Offsets as JS hands them over: doubles (JsStrings) or the store's own int64s (a
// result taken by takeTableToJs, given back). Every one is checked before it is read.
template <class Off>
void CheckStrings(const std::string& name, const Off* off, size_t offsets, size_t chars, const uint8_t* bytes,
                  const uint8_t* valid, int64_t rows, bool ascii) {
  if (offsets < size_t(rows) + 1)
    Corrupt(name, std::to_string(offsets) + " string offsets for " + std::to_string(rows) + " rows");
  Off prev = off[0];
  if (!(prev == 0)) Corrupt(name, "the string offsets do not start at 0");
  for (int64_t i = 1; i <= rows; i++) {
    const Off o = off[size_t(i)];
    if (!(o >= prev && o <= Off(chars) && o == Off(int64_t(o))))
      Corrupt(name, "string offset " + std::to_string(i) + " (" + std::to_string(o) + ") is out of order or past the " +
                        std::to_string(chars) + " bytes of text");
    prev = o;
  }
  if (ascii) return;
  for (int64_t i = 0; i < rows; i++) {
    if (valid && !valid[i]) continue;
    const size_t at = size_t(off[size_t(i)]), len = size_t(off[size_t(i) + 1]) - at;
    const size_t bad = FirstInvalidUtf8(bytes + at, len);
    if (bad < len)
      throw BasinError("BASIN_IO", "column \"" + name + "\", row " + std::to_string(i + 1) +
                                       " of the part read: the text is not valid UTF-8 (byte " + std::to_string(bad + 1) +
                                       " of the value); rewrite the file with UTF-8 strings");
  }
}

// A validity array with no zero is no validity (the store's "no nulls").
bool AnyNull(const uint8_t* valid, int64_t rows) {
  return valid && std::memchr(valid, 0, size_t(rows)) != nullptr;
}

// A string column from checked offsets and bytes, copied whole (no nulls: a null's
// bytes would otherwise have to be dropped, which the row-by-row builder does).
template <class Off>
Column StringsInBulk(const Off* off, const uint8_t* chars, int64_t rows) {
  Column c;
  c.type = DType::String;
  c.length = rows;
  c.data = MakeBufferNoInit(size_t(rows + 1) * 8);
  int64_t* o = c.data->as<int64_t>();
  for (int64_t i = 0; i <= rows; i++) o[i] = int64_t(off[size_t(i)]);
  c.chars = MakeBufferNoInit(size_t(o[rows]));
  if (o[rows] > 0) std::memcpy(c.chars->data(), chars, size_t(o[rows]));
  return c;
}

// A fixed-width column copied whole: null slots zeroed and bools made 0/1, as the
// builder leaves them (hashes and sums read values without looking at validity).
Column FixedInBulk(DType t, const uint8_t* raw, const uint8_t* valid, int64_t rows) {
  Column c;
  c.type = t;
  c.length = rows;
  const size_t w = ElementSize(t);
  c.data = MakeBufferNoInit(size_t(rows) * w);
  uint8_t* d = c.data->data();
  if (rows > 0) std::memcpy(d, raw, size_t(rows) * w);
  if (t == DType::Bool)
    for (int64_t i = 0; i < rows; i++) d[i] = d[i] != 0;
  if (AnyNull(valid, rows)) {
    c.validity = MakeBufferNoInit(size_t(rows));
    uint8_t* v = c.validity->data();
    for (int64_t i = 0; i < rows; i++) {
      v[i] = valid[i] != 0;
      if (!v[i]) std::memset(d + size_t(i) * w, 0, w);
    }
  }
  return c;
}

Column ColumnFromJs(const Napi::Object& o, int64_t rows, const std::string& name) {
  DType t = DTypeFromName(o.Get("type").As<Napi::String>().Utf8Value());
  Napi::Value values = o.Get("values");
  Napi::Value validity = o.Get("validity");
  const uint8_t* valid = nullptr;
  if (validity.IsTypedArray()) {
    auto v = validity.As<Napi::Uint8Array>();
    if (v.ElementLength() < size_t(rows)) Corrupt(name, "its validity has fewer entries than the table has rows");
    valid = v.Data();
  }
  if (t == DType::String && !values.IsArray()) {
    // Bulk strings { offsets: Float64Array, chars: Uint8Array, ascii }, as readers of
    // Arrow data hand them over (no JS string per value), or a taken result's
    // { offsets64: BigInt64Array, chars, ascii } given back.
    auto raw = values.As<Napi::Object>();
    Napi::Value charsValue = raw.Get("chars");
    if (!charsValue.IsTypedArray() || charsValue.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      Corrupt(name, "its string bytes are not a Uint8Array");
    auto chars = charsValue.As<Napi::Uint8Array>();
    // Text must be UTF-8 (kernels decode it); `binary` bytes (serialized values) are not text.
    const bool unchecked = raw.Get("ascii").ToBoolean().Value() || raw.Get("binary").ToBoolean().Value();
    auto build = [&](const auto* off, size_t offsets) {
      CheckStrings(name, off, offsets, chars.ElementLength(), chars.Data(), valid, rows, unchecked);
      if (!AnyNull(valid, rows)) return StringsInBulk(off, chars.Data(), rows);
      ColumnBuilder b(t, rows);
      const char* ch = reinterpret_cast<const char*>(chars.Data());
      for (int64_t i = 0; i < rows; i++) {
        if (!valid[i]) b.appendNull();
        else b.appendString(std::string_view(ch + size_t(off[size_t(i)]), size_t(off[size_t(i) + 1] - off[size_t(i)])));
      }
      return b.finish();
    };
    Napi::Value off64 = raw.Get("offsets64");
    if (off64.IsTypedArray() && off64.As<Napi::TypedArray>().TypedArrayType() == napi_bigint64_array) {
      auto o = off64.As<Napi::BigInt64Array>();
      return build(o.Data(), o.ElementLength());
    }
    Napi::Value off = raw.Get("offsets");
    if (!off.IsTypedArray() || off.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
      Corrupt(name, "its string offsets are not a Float64Array");
    auto o = off.As<Napi::Float64Array>();
    return build(o.Data(), o.ElementLength());
  }
  if (t == DType::String) {
    auto a = values.As<Napi::Array>();
    if (a.Length() < size_t(rows)) Corrupt(name, "it has fewer values than the table has rows");
    ColumnBuilder b(t, rows);
    for (int64_t i = 0; i < rows; i++) {
      Napi::Value v = a.Get(uint32_t(i));
      if ((valid && !valid[i]) || !v.IsString()) b.appendNull();
      else b.appendString(v.As<Napi::String>().Utf8Value());
    }
    return b.finish();
  }
  if (!values.IsTypedArray()) Corrupt(name, "its values are not a typed array");
  auto ta = values.As<Napi::TypedArray>();
  if (ta.ByteLength() / ElementSize(t) < size_t(rows)) Corrupt(name, "it has fewer values than the table has rows");
  const uint8_t* raw = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
  return FixedInBulk(t, raw, valid, rows);
}

}  // namespace

void RegisterStore(Napi::Env env, Napi::Object exports) {
  // releaseFreeMemory() -> whether freed memory went back to the system: the blocks
  // the BlockPool keeps for reuse, and what glibc keeps in worker threads' arenas (a
  // process that dropped gigabytes of tables would keep them resident); called when
  // large data is let go and when the engine goes idle.
  exports.Set("releaseFreeMemory", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    bool released = BlockPool::Instance().release() > 0;
#if defined(__GLIBC__)
    released = malloc_trim(0) != 0 || released;
#endif
    return Napi::Boolean::New(info.Env(), released);
  }));
  exports.Set("storeStats", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      StoreStats s = Store::Instance().stats();
      auto o = Napi::Object::New(info.Env());
      o.Set("handles", double(s.handles));
      o.Set("buffers", double(s.buffers));
      o.Set("bytes", double(s.bytes));
      o.Set("peakBytes", double(s.peakBytes));
      return o;
    });
  }));
  exports.Set("retain", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Store::Instance().retain(HandleArg(info[0]));
      return info.Env().Undefined();
    });
  }));
  exports.Set("release", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Store::Instance().release(HandleArg(info[0]));
      return info.Env().Undefined();
    });
  }));
  exports.Set("setThreadOwner", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    Store::SetThreadOwner(info[0].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  }));
  exports.Set("claim", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Store::Instance().claim(HandleArg(info[0]));
      return info.Env().Undefined();
    });
  }));
  exports.Set("releaseOwnedBy", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Number::New(info.Env(), double(Store::Instance().releaseOwnedBy(info[0].As<Napi::Number>().Uint32Value())));
    });
  }));
  // tableInfo(h) -> { rows, names, types, nullCounts }
  exports.Set("tableInfo", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      Napi::Env e = info.Env();
      auto o = Napi::Object::New(e);
      auto names = Napi::Array::New(e), types = Napi::Array::New(e), nulls = Napi::Array::New(e);
      for (size_t i = 0; i < t->columns.size(); i++) {
        names.Set(uint32_t(i), t->names[i]);
        types.Set(uint32_t(i), DTypeName(t->columns[i].type));
        nulls.Set(uint32_t(i), double(t->columns[i].nullCount()));
      }
      o.Set("rows", double(t->rows));
      o.Set("names", names);
      o.Set("types", types);
      o.Set("nullCounts", nulls);
      return o;
    });
  }));
  // tableToJs(h) -> { rows, names, columns: [{ type, values, validity }] }, a copy.
  exports.Set("tableToJs", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value { return TableToJs(info.Env(), *TableArg(info[0]), Handover::Copy); });
  }));
  // takeTableToJs(h): the table as JS arrays JS must only read, releasing the caller's
  // reference h. No buffer is copied (string offsets aside, unless they move): when h
  // was the last reference, buffers no other table holds move to JS, the rest are shared.
  exports.Set("takeTableToJs", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      Store::Instance().release(HandleArg(info[0]));
      return TableToJs(info.Env(), *t, t.use_count() == 1 ? Handover::Move : Handover::Share);
    });
  }));
  // tableFromJs({ rows, names, columns }) -> handle
  exports.Set("tableFromJs", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto o = info[0].As<Napi::Object>();
      auto t = std::make_shared<Table>();
      t->rows = o.Get("rows").As<Napi::Number>().Int64Value();
      t->names = StringList(o.Get("names"));
      auto cols = o.Get("columns").As<Napi::Array>();
      if (t->rows < 0) throw BasinError("BASIN_IO", "a table with " + std::to_string(t->rows) + " rows; the file is corrupt");
      if (cols.Length() != t->names.size()) throw BasinError("BASIN_INTERNAL", "tableFromJs: names and columns differ in number");
      for (uint32_t i = 0; i < cols.Length(); i++)
        t->columns.push_back(ColumnFromJs(cols.Get(i).As<Napi::Object>(), t->rows, t->names[i]));
      return PutTable(info.Env(), t);
    });
  }));
  exports.Set("concat", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto a = info[0].As<Napi::Array>();
      std::vector<TablePtr> parts;
      for (uint32_t i = 0; i < a.Length(); i++) parts.push_back(TableArg(a.Get(i)));
      return PutTable(info.Env(), ConcatTables(parts));
    });
  }));
  // The columns of tables of equal row counts side by side, in order (shared, not copied).
  exports.Set("beside", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto a = info[0].As<Napi::Array>();
      auto out = std::make_shared<Table>();
      for (uint32_t i = 0; i < a.Length(); i++) {
        TablePtr t = TableArg(a.Get(i));
        if (i == 0) out->rows = t->rows;
        else if (t->rows != out->rows)
          throw BasinError("BASIN_INTERNAL", "beside: tables of " + std::to_string(out->rows) + " and " +
                                                 std::to_string(t->rows) + " rows");
        out->names.insert(out->names.end(), t->names.begin(), t->names.end());
        out->columns.insert(out->columns.end(), t->columns.begin(), t->columns.end());
      }
      return PutTable(info.Env(), out);
    });
  }));
  exports.Set("slice", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      return PutTable(info.Env(), SliceTable(*t, info[1].As<Napi::Number>().Int64Value(), info[2].As<Napi::Number>().Int64Value()));
    });
  }));
}

}  // namespace basin
