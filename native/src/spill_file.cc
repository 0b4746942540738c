#include "spill_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <vector>

#include <lz4.h>
#include <zstd.h>

namespace basin {

namespace {

constexpr char kMagic[8] = {'B', 'A', 'S', 'I', 'N', 'S', 'P', '2'};
// Buffers are compressed in chunks of this many bytes, so the scratch stays small.
constexpr size_t kChunk = size_t(1) << 20;
// zstd's fastest regular level: spilling is on the critical path.
constexpr int kZstdLevel = 1;
enum : uint8_t { kHasData = 1, kHasChars = 2, kHasValidity = 4 };

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

[[noreturn]] void Fail(const std::string& what, const std::string& path, int err) {
  std::string why = err == ENOSPC ? "no space left on the device" : err == EDQUOT ? "disk quota exceeded" : std::strerror(err);
  throw BasinError("BASIN_SPILL", what + " spill file " + path + ": " + why +
                                      "; free space there, or point --local-directory (localDirectory) at a larger disk");
}

class Writer {
 public:
  Writer(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) Fail("cannot create", path, errno);
    std::setvbuf(f_.get(), nullptr, _IOFBF, 1 << 20);
  }
  void put(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_.get()) != n) Fail("cannot write", path_, errno);
    written_ += int64_t(n);
  }
  template <typename T> void put(T v) { put(&v, sizeof v); }
  // A buffer: its size, then chunks, each its stored size and bytes (stored as they
  // are when compressing does not shrink them).
  void buffer(const Buffer& b, SpillCodec codec) {
    put<int64_t>(int64_t(b.size()));
    for (size_t at = 0; at < b.size(); at += kChunk) {
      size_t n = std::min(kChunk, b.size() - at);
      const char* src = reinterpret_cast<const char*>(b.data()) + at;
      size_t stored = compress(src, n, codec);
      if (stored == 0 || stored >= n) {
        put<uint32_t>(uint32_t(n));
        put(src, n);
      } else {
        put<uint32_t>(uint32_t(stored));
        put(scratch_.data(), stored);
      }
    }
  }
  int64_t finish() {
    FILE* f = f_.release();
    int a = std::fflush(f) == 0 ? 0 : errno;
    int b = std::fclose(f) == 0 ? 0 : errno;
    if (a || b) Fail("cannot write", path_, a ? a : b);
    return written_;
  }

 private:
  // Compresses into scratch_; 0 = not compressed.
  size_t compress(const char* src, size_t n, SpillCodec codec) {
    if (codec == SpillCodec::Lz4) {
      scratch_.resize(size_t(LZ4_compressBound(int(kChunk))));
      return size_t(std::max(0, LZ4_compress_default(src, scratch_.data(), int(n), int(scratch_.size()))));
    }
    if (codec == SpillCodec::Zstd) {
      scratch_.resize(ZSTD_compressBound(kChunk));
      if (!zstd_) zstd_.reset(ZSTD_createCCtx());
      if (!zstd_) throw BasinError("BASIN_SPILL", "cannot start zstd to write spill file " + path_ + ": out of memory");
      size_t r = ZSTD_compressCCtx(zstd_.get(), scratch_.data(), scratch_.size(), src, n, kZstdLevel);
      return ZSTD_isError(r) ? 0 : r;
    }
    return 0;
  }
  struct CCtxFree {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  std::string path_;
  File f_;
  int64_t written_ = 0;
  std::vector<char> scratch_;
  std::unique_ptr<ZSTD_CCtx, CCtxFree> zstd_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) Fail("cannot open", path, errno);
  }
  void get(void* p, size_t n) {
    if (n && std::fread(p, 1, n, f_.get()) != n)
      throw BasinError("BASIN_SPILL", "spill file " + path_ + " is truncated or unreadable; was the spill directory cleaned while Basin ran?");
  }
  template <typename T> T get() {
    T v;
    get(&v, sizeof v);
    return v;
  }
  BufferPtr buffer(SpillCodec codec) {
    size_t n = size_t(get<int64_t>());
    BufferPtr b = MakeBuffer(n);
    for (size_t at = 0; at < n; at += kChunk) {
      size_t raw = std::min(kChunk, n - at);
      size_t stored = get<uint32_t>();
      char* dst = reinterpret_cast<char*>(b->data()) + at;
      if (stored == raw) {
        get(dst, raw);
        continue;
      }
      if (stored > raw || codec == SpillCodec::None) corrupt();
      scratch_.resize(stored);
      get(scratch_.data(), stored);
      bool ok = codec == SpillCodec::Lz4 ? LZ4_decompress_safe(scratch_.data(), dst, int(stored), int(raw)) == int(raw)
                                         : ZSTD_decompress(dst, raw, scratch_.data(), stored) == raw;
      if (!ok) corrupt();
    }
    return b;
  }
  [[noreturn]] void corrupt() const {
    throw BasinError("BASIN_SPILL", "spill file " + path_ + " is corrupt (a chunk does not decompress); was it changed while Basin ran?");
  }

 private:
  std::vector<char> scratch_;
  std::string path_;
  File f_;
};

}  // namespace

int64_t TableBytes(const Table& t) {
  std::unordered_set<const Buffer*> seen;
  int64_t n = 0;
  for (auto& c : t.columns)
    for (const Buffer* b : {c.data.get(), c.chars.get(), c.validity.get()})
      if (b && seen.insert(b).second) n += int64_t(b->size());
  return n;
}

const char* SpillCodecName(SpillCodec c) {
  switch (c) {
    case SpillCodec::None: return "none";
    case SpillCodec::Lz4: return "lz4";
    case SpillCodec::Zstd: return "zstd";
  }
  return "?";
}

SpillCodec SpillCodecFromName(const std::string& name) {
  for (SpillCodec c : {SpillCodec::None, SpillCodec::Lz4, SpillCodec::Zstd})
    if (name == SpillCodecName(c)) return c;
  throw BasinError("BASIN_PLAN", "unknown spill compression '" + name + "'; use lz4, zstd or none");
}

int64_t WriteSpillFile(const std::string& path, const Table& t, SpillCodec codec) {
  try {
    Writer w(path);
    w.put(kMagic, sizeof kMagic);
    w.put<uint8_t>(uint8_t(codec));
    w.put<int64_t>(t.rows);
    w.put<int32_t>(int32_t(t.columns.size()));
    for (size_t i = 0; i < t.columns.size(); i++) {
      const Column& c = t.columns[i];
      w.put<int32_t>(int32_t(t.names[i].size()));
      w.put(t.names[i].data(), t.names[i].size());
      w.put<uint8_t>(uint8_t(c.type));
      w.put<uint8_t>(uint8_t((c.data ? kHasData : 0) | (c.chars ? kHasChars : 0) | (c.validity ? kHasValidity : 0)));
      w.put<int64_t>(c.length);
      for (const Buffer* b : {c.data.get(), c.chars.get(), c.validity.get()})
        if (b) w.buffer(*b, codec);
    }
    return w.finish();
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
}

TablePtr ReadSpillFile(const std::string& path) {
  Reader r(path);
  char magic[sizeof kMagic];
  r.get(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) throw BasinError("BASIN_SPILL", "spill file " + path + " is not a Basin spill file");
  uint8_t codec = r.get<uint8_t>();
  if (codec > uint8_t(SpillCodec::Zstd)) throw BasinError("BASIN_SPILL", "spill file " + path + " names an unknown compression");
  auto t = std::make_shared<Table>();
  t->rows = r.get<int64_t>();
  int32_t ncols = r.get<int32_t>();
  for (int32_t i = 0; i < ncols; i++) {
    std::string name(size_t(r.get<int32_t>()), '\0');
    r.get(name.data(), name.size());
    Column c;
    c.type = DType(r.get<uint8_t>());
    uint8_t flags = r.get<uint8_t>();
    c.length = r.get<int64_t>();
    if (flags & kHasData) c.data = r.buffer(SpillCodec(codec));
    if (flags & kHasChars) c.chars = r.buffer(SpillCodec(codec));
    if (flags & kHasValidity) c.validity = r.buffer(SpillCodec(codec));
    t->names.push_back(std::move(name));
    t->columns.push_back(std::move(c));
  }
  return t;
}

}  // namespace basin
