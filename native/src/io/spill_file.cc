#include "io/spill_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <unordered_set>
#include <vector>

#if BASIN_WITH_LZ4
#include <lz4frame.h>
#endif
#if BASIN_WITH_ZSTD
#include <zstd.h>
#endif

#include "io/flatbuf.h"

namespace basin {

namespace {

// Arrow IPC file layout: magic, the schema message, one record batch message and its
// body, an end-of-stream marker, the footer, its size, the magic again.
using fb::kContinuation;
using fb::kMagic;
// Buffers are (de)compressed in pieces of this many bytes, so the scratch stays small.
constexpr size_t kChunk = size_t(1) << 20;
#if BASIN_WITH_LZ4
constexpr bool kHasLz4 = true;
#else
constexpr bool kHasLz4 = false;
#endif
#if BASIN_WITH_ZSTD
constexpr bool kHasZstd = true;
#else
constexpr bool kHasZstd = false;
#endif
// zstd's fastest regular level: spilling is on the critical path.
constexpr int kZstdLevel = 1;

using namespace fb::arrow;
enum : uint8_t { kLz4Frame = 0, kZstd = 1 };

// A 64-bit checksum of a spill file's body as stored (after compression), so that a
// changed byte anywhere fails the read back, with or without compression: four
// multiply-rotate lanes over 32-byte blocks (fast enough to ride along with the disk),
// streamed, so where the writes and reads split the bytes does not change it.
class BodyHash {
 public:
  void update(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    total_ += n;
    if (tailLen_) {
      const size_t take = std::min(n, sizeof tail_ - tailLen_);
      std::memcpy(tail_ + tailLen_, p, take);
      tailLen_ += take, p += take, n -= take;
      if (tailLen_ < sizeof tail_) return;
      block(tail_);
      tailLen_ = 0;
    }
    for (; n >= sizeof tail_; p += sizeof tail_, n -= sizeof tail_) block(p);
    std::memcpy(tail_, p, n);
    tailLen_ = n;
  }
  uint64_t digest() const {
    uint64_t h = Rotl(lane_[0], 1) + Rotl(lane_[1], 7) + Rotl(lane_[2], 12) + Rotl(lane_[3], 18) + total_;
    for (size_t i = 0; i < tailLen_; i++) h = Rotl(h ^ (tail_[i] * kP5), 11) * kP1;
    h ^= h >> 33, h *= kP2, h ^= h >> 29, h *= kP3, h ^= h >> 32;
    return h;
  }

 private:
  static constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                            kP5 = 0x27D4EB2F165667C5ull;
  static uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  void block(const uint8_t* p) {
    for (int k = 0; k < 4; k++) {
      uint64_t w;
      std::memcpy(&w, p + 8 * k, 8);
      lane_[k] = Rotl(lane_[k] + w * kP2, 31) * kP1;
    }
  }
  uint64_t lane_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  uint8_t tail_[32] = {};
  size_t tailLen_ = 0;
  uint64_t total_ = 0;
};

// The record batch message's custom metadata key holding the body's checksum (16 hex digits).
constexpr char kBodyHashKey[] = "basin.body_hash";

std::string Hex16(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

#if BASIN_WITH_LZ4
struct Lz4CFree {
  void operator()(LZ4F_cctx* c) const { LZ4F_freeCompressionContext(c); }
};
struct Lz4DFree {
  void operator()(LZ4F_dctx* d) const { LZ4F_freeDecompressionContext(d); }
};
#endif
#if BASIN_WITH_ZSTD
struct ZstdCFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
#endif

// Where this build lacks a codec: how to get it (SpillCodecFromName refuses it before any file is written).
[[noreturn]] void Unavailable(SpillCodec c) {
  std::string name = SpillCodecName(c);
  throw BasinError("BASIN_PLAN", "this Basin was built without " + name + " (install lib" + name + "-dev, e.g. apt-get install -y lib" + name +
                                     "-dev, then run npm install again); use spill compression " +
                                     (SpillCodecAvailable(SpillCodec::Lz4) ? "lz4 or none" : SpillCodecAvailable(SpillCodec::Zstd) ? "zstd or none" : "none"));
}

[[noreturn]] void Fail(const std::string& what, const std::string& path, int err) {
  std::string why = err == ENOSPC ? "no space left on the device" : err == EDQUOT ? "disk quota exceeded" : std::strerror(err);
  throw BasinError("BASIN_SPILL", what + " spill file " + path + ": " + why +
                                      "; free space there, or point --local-directory (localDirectory) at a larger disk");
}

// A buffer of the record batch body: bytes in memory, or a bitmap packed from a byte column.
struct BodyBuffer {
  const uint8_t* data;
  size_t size;
  std::vector<uint8_t> packed;  // owns `data` for bitmaps
};

BodyBuffer Bytes(const Buffer* b, size_t n) { return BodyBuffer{b ? b->data() : nullptr, b ? n : 0, {}}; }

// One bit per row from one byte per row (validity, or bool values), Arrow's LSB order.
BodyBuffer Bitmap(const Buffer& b, int64_t rows) {
  BodyBuffer out{nullptr, size_t((rows + 7) / 8), {}};
  out.packed.assign(out.size, 0);
  const uint8_t* v = b.data();
  for (int64_t i = 0; i < rows; i++)
    if (v[i]) out.packed[size_t(i >> 3)] |= uint8_t(1u << (i & 7));
  out.data = out.packed.data();
  return out;
}

int64_t Zeros(const Buffer& validity, int64_t rows) {
  return int64_t(std::count(validity.data(), validity.data() + rows, uint8_t(0)));
}

class Writer {
 public:
  Writer(const std::string& path, SpillCodec codec) : path_(path), f_(std::fopen(path.c_str(), "wb")), codec_(codec) {
    if (!f_) Fail("cannot create", path, errno);
    std::setvbuf(f_.get(), nullptr, _IOFBF, 1 << 20);
  }
  void put(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_.get()) != n) Fail("cannot write", path_, errno);
    if (hash_) hash_->update(p, n);
    at_ += int64_t(n);
  }
  // What put() writes from now on also goes into `h` (nullptr: stop).
  void hashInto(BodyHash* h) { hash_ = h; }
  template <typename T> void put(T v) { put(&v, sizeof v); }
  void pad8() {
    static const uint8_t zeros[8] = {};
    put(zeros, size_t((8 - at_ % 8) % 8));
  }
  int64_t tell() const { return at_; }
  // An encapsulated message: continuation, metadata size, the flatbuffer padded to 8; returns its length.
  int64_t message(fb::Builder& b) {
    b.align(8);
    put(kContinuation);
    put<int32_t>(int32_t(b.size()));
    put(b.bytes().data(), b.size());
    return 8 + int64_t(b.size());
  }
  // Rewrites bytes written before (the record batch metadata, once the body's sizes are known).
  void patch(int64_t where, fb::Builder& b) {
    b.align(8);
    if (std::fflush(f_.get()) != 0 || std::fseek(f_.get(), long(where + 8), SEEK_SET) != 0) Fail("cannot write", path_, errno);
    if (std::fwrite(b.bytes().data(), 1, b.size(), f_.get()) != b.size()) Fail("cannot write", path_, errno);
    if (std::fseek(f_.get(), 0, SEEK_END) != 0) Fail("cannot write", path_, errno);
  }
  // A body buffer: as it is, or Arrow-compressed (its uncompressed size, then one lz4
  // frame or zstd frame written in pieces). Returns the bytes written.
  int64_t body(const BodyBuffer& b) {
    int64_t start = at_;
    if (b.size == 0) return 0;
    if (codec_ == SpillCodec::None) {
      put(b.data, b.size);
    } else {
      put<int64_t>(int64_t(b.size));
      codec_ == SpillCodec::Lz4 ? lz4(b.data, b.size) : zstd(b.data, b.size);
    }
    return at_ - start;
  }
  int64_t finish() {
    FILE* f = f_.release();
    int a = std::fflush(f) == 0 ? 0 : errno;
    int b = std::fclose(f) == 0 ? 0 : errno;
    if (a || b) Fail("cannot write", path_, a ? a : b);
    return at_;
  }

 private:
  void lz4([[maybe_unused]] const uint8_t* src, [[maybe_unused]] size_t n) {
#if !BASIN_WITH_LZ4
    Unavailable(SpillCodec::Lz4);
#else
    LZ4F_preferences_t prefs;
    std::memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.contentSize = n;
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;  // a changed file fails to read back
    if (!lz4_) {
      LZ4F_cctx* c = nullptr;
      if (LZ4F_isError(LZ4F_createCompressionContext(&c, LZ4F_VERSION))) throw BasinError("BASIN_SPILL", "cannot start lz4 to write spill file " + path_);
      lz4_.reset(c);
    }
    scratch_.resize(std::max<size_t>(LZ4F_compressBound(kChunk, &prefs), LZ4F_HEADER_SIZE_MAX));
    auto check = [&](size_t r) {
      if (LZ4F_isError(r)) throw BasinError("BASIN_SPILL", std::string("lz4 failed writing spill file ") + path_ + ": " + LZ4F_getErrorName(r));
      return r;
    };
    put(scratch_.data(), check(LZ4F_compressBegin(lz4_.get(), scratch_.data(), scratch_.size(), &prefs)));
    for (size_t at = 0; at < n; at += kChunk)
      put(scratch_.data(), check(LZ4F_compressUpdate(lz4_.get(), scratch_.data(), scratch_.size(), src + at, std::min(kChunk, n - at), nullptr)));
    put(scratch_.data(), check(LZ4F_compressEnd(lz4_.get(), scratch_.data(), scratch_.size(), nullptr)));
#endif
  }
  void zstd([[maybe_unused]] const uint8_t* src, [[maybe_unused]] size_t n) {
#if !BASIN_WITH_ZSTD
    Unavailable(SpillCodec::Zstd);
#else
    if (!zstd_) zstd_.reset(ZSTD_createCCtx());
    if (!zstd_) throw BasinError("BASIN_SPILL", "cannot start zstd to write spill file " + path_ + ": out of memory");
    ZSTD_CCtx_reset(zstd_.get(), ZSTD_reset_session_only);
    ZSTD_CCtx_setParameter(zstd_.get(), ZSTD_c_compressionLevel, kZstdLevel);
    ZSTD_CCtx_setParameter(zstd_.get(), ZSTD_c_checksumFlag, 1);  // a changed file fails to read back
    ZSTD_CCtx_setPledgedSrcSize(zstd_.get(), n);
    scratch_.resize(ZSTD_CStreamOutSize());
    for (size_t at = 0; at < n; at += kChunk) {
      size_t len = std::min(kChunk, n - at);
      bool last = at + len == n;
      ZSTD_inBuffer in{src + at, len, 0};
      size_t left;
      do {
        ZSTD_outBuffer out{scratch_.data(), scratch_.size(), 0};
        left = ZSTD_compressStream2(zstd_.get(), &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left)) throw BasinError("BASIN_SPILL", std::string("zstd failed writing spill file ") + path_ + ": " + ZSTD_getErrorName(left));
        put(scratch_.data(), out.pos);
      } while (last ? left != 0 : in.pos < in.size);
    }
#endif
  }

  std::string path_;
  File f_;
  SpillCodec codec_;
  int64_t at_ = 0;
  BodyHash* hash_ = nullptr;
  std::vector<uint8_t> scratch_;
#if BASIN_WITH_LZ4
  std::unique_ptr<LZ4F_cctx, Lz4CFree> lz4_;
#endif
#if BASIN_WITH_ZSTD
  std::unique_ptr<ZSTD_CCtx, ZstdCFree> zstd_;
#endif
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) Fail("cannot open", path, errno);
  }
  const std::string& path() const { return path_; }
  void get(void* p, size_t n) {
    if (n && std::fread(p, 1, n, f_.get()) != n)
      throw BasinError("BASIN_SPILL", "spill file " + path_ + " is truncated or unreadable; was the spill directory cleaned while Basin ran?");
    if (hash_) hash_->update(p, n);
    at_ += int64_t(n);
  }
  // What get() reads from now on also goes into `h` (nullptr: stop).
  void hashInto(BodyHash* h) { hash_ = h; }
  // The next T, left unread (and unhashed).
  template <typename T> T peek() {
    BodyHash* h = hash_;
    hash_ = nullptr;
    T v = get<T>();
    hash_ = h;
    seek(at_ - int64_t(sizeof v));
    return v;
  }
  template <typename T> T get() {
    T v;
    get(&v, sizeof v);
    return v;
  }
  int64_t tell() const { return at_; }
  // Whether the file ends with the Arrow magic (a file cut short does not).
  bool endsWithMagic() {
    char tail[sizeof kMagic];
    if (std::fseek(f_.get(), -long(sizeof tail), SEEK_END) != 0 || std::fread(tail, 1, sizeof tail, f_.get()) != sizeof tail) return false;
    return std::memcmp(tail, kMagic, sizeof tail) == 0;
  }
  void seek(int64_t where) {
    if (std::fseek(f_.get(), long(where), SEEK_SET) != 0) Fail("cannot read", path_, errno);
    at_ = where;
  }
  // An encapsulated message's flatbuffer.
  std::vector<uint8_t> message() {
    if (get<uint32_t>() != kContinuation) corrupt("a message does not start where expected");
    int32_t n = get<int32_t>();
    if (n <= 0) corrupt("a message has no metadata");
    if (n > (64 << 20)) corrupt("a message claims " + std::to_string(n) + " bytes of metadata");
    std::vector<uint8_t> bytes(static_cast<size_t>(n));
    get(bytes.data(), bytes.size());
    return bytes;
  }
  // `stored` bytes of a body buffer into `dst` (`size` bytes), decompressing if `codec` says so.
  void body(int compression, int64_t stored, uint8_t* dst, size_t size) {
    if (stored == 0 && size == 0) return;
    if (compression < 0) {
      if (size_t(stored) != size) corrupt("a buffer has the wrong size");
      get(dst, size);
      return;
    }
    int64_t raw = get<int64_t>();
    stored -= 8;
    if (raw == -1) {  // stored uncompressed
      if (size_t(stored) != size) corrupt("a buffer has the wrong size");
      get(dst, size);
      return;
    }
    if (raw != int64_t(size)) corrupt("a buffer has the wrong size");
    size_t out = 0;
#if BASIN_WITH_LZ4
    if (compression == kLz4Frame && !lz4_) {
      LZ4F_dctx* d = nullptr;
      if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) corrupt("lz4 could not start");
      lz4_.reset(d);
    }
    if (compression == kLz4Frame) LZ4F_resetDecompressionContext(lz4_.get());
#endif
#if BASIN_WITH_ZSTD
    if (compression == kZstd && !zstd_) zstd_.reset(ZSTD_createDCtx());
    if (compression == kZstd && !zstd_) throw std::bad_alloc();
    if (compression == kZstd) ZSTD_DCtx_reset(zstd_.get(), ZSTD_reset_session_only);
#endif
    while (stored > 0) {
      size_t n = size_t(std::min<int64_t>(stored, int64_t(kChunk)));
      scratch_.resize(n);
      get(scratch_.data(), n);
      stored -= int64_t(n);
      size_t used = 0;
      while (used < n) {
        if (false) {
#if BASIN_WITH_LZ4
        } else if (compression == kLz4Frame) {
          size_t dstSize = size - out, srcSize = n - used;
          size_t r = LZ4F_decompress(lz4_.get(), dst + out, &dstSize, scratch_.data() + used, &srcSize, nullptr);
          if (LZ4F_isError(r) || (dstSize == 0 && srcSize == 0)) corrupt("an lz4 frame does not decompress");
          out += dstSize;
          used += srcSize;
#endif
#if BASIN_WITH_ZSTD
        } else if (compression == kZstd) {
          ZSTD_inBuffer in{scratch_.data() + used, n - used, 0};
          ZSTD_outBuffer o{dst, size, out};
          size_t r = ZSTD_decompressStream(zstd_.get(), &o, &in);
          if (ZSTD_isError(r) || (in.pos == 0 && o.pos == out)) corrupt("a zstd frame does not decompress");
          out = o.pos;
          used += in.pos;
#endif
        } else {
          corrupt("it names a compression this build cannot read");
        }
      }
    }
    if (out != size) corrupt("a buffer decompresses to the wrong size");
  }
  [[noreturn]] void corrupt(const std::string& why) const {
    throw BasinError("BASIN_SPILL", "spill file " + path_ + " is corrupt (" + why + "); was it changed while Basin ran?");
  }

 private:
  std::string path_;
  File f_;
  int64_t at_ = 0;
  BodyHash* hash_ = nullptr;
  std::vector<uint8_t> scratch_;
#if BASIN_WITH_LZ4
  std::unique_ptr<LZ4F_dctx, Lz4DFree> lz4_;
#endif
#if BASIN_WITH_ZSTD
  std::unique_ptr<ZSTD_DCtx, ZstdDFree> zstd_;
#endif
};

// The record batch's message, with the body's buffer offsets and sizes.
fb::Builder RecordBatchMessage(const Table& t, const std::vector<std::vector<int64_t>>& nodes, const std::vector<std::vector<int64_t>>& buffers,
                               int64_t bodyLength, SpillCodec codec, uint64_t bodyHash) {
  fb::Builder b;
  auto [msg, ms] = b.table({fb::Scalar(0, 2, kMetadataV5), fb::Scalar(1, 1, kHeaderRecordBatch), fb::Offset(2), fb::Scalar(3, 8, uint64_t(bodyLength)), fb::Offset(4)});
  b.root(msg);
  size_t kvs = b.offsets(1);
  b.point(ms[4], kvs);
  auto [kv, ks] = b.table({fb::Offset(0), fb::Offset(1)});
  b.point(kvs + 4, kv);
  b.point(ks[0], b.string(kBodyHashKey));
  b.point(ks[1], b.string(Hex16(bodyHash)));
  std::vector<fb::Slot> rb = {fb::Scalar(0, 8, uint64_t(t.rows)), fb::Offset(1), fb::Offset(2)};
  if (codec != SpillCodec::None) rb.push_back(fb::Offset(3));
  auto [batch, bs] = b.table(rb);
  b.point(ms[2], batch);
  b.point(bs[1], b.structs(nodes));
  b.point(bs[2], b.structs(buffers));
  if (codec != SpillCodec::None) b.point(bs[3], b.table({fb::Scalar(0, 1, codec == SpillCodec::Lz4 ? kLz4Frame : kZstd), fb::Scalar(1, 1, 0)}).first);
  b.align(8);
  return b;
}

DType TypeFromArrow(const fb::Table& field, Reader& r) {
  uint8_t id = field.scalar<uint8_t>(2, 0);
  fb::Table type = field.table(3);
  switch (id) {
    case kTypeInt:
      if (type.scalar<int32_t>(0, 0) != 64) break;
      return DType::Int64;
    case kTypeFloat: return DType::Float64;
    case kTypeBool: return DType::Bool;
    case kTypeLargeUtf8: return DType::String;
    case kTypeDate: return DType::Date;
    case kTypeTimestamp: return DType::Timestamp;
    default: break;
  }
  r.corrupt("a column has a type Basin does not spill");
}

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

bool SpillCodecAvailable(SpillCodec c) {
  switch (c) {
    case SpillCodec::None: return true;
    case SpillCodec::Lz4: return kHasLz4;
    case SpillCodec::Zstd: return kHasZstd;
  }
  return false;
}

SpillCodec DefaultSpillCodec() {
  return kHasLz4 ? SpillCodec::Lz4 : kHasZstd ? SpillCodec::Zstd : SpillCodec::None;
}

SpillCodec SpillCodecFromName(const std::string& name) {
  for (SpillCodec c : {SpillCodec::None, SpillCodec::Lz4, SpillCodec::Zstd}) {
    if (name != SpillCodecName(c)) continue;
    if (!SpillCodecAvailable(c)) Unavailable(c);
    return c;
  }
  throw BasinError("BASIN_PLAN", "unknown spill compression '" + name + "'; use lz4, zstd or none");
}

int64_t WriteSpillFile(const std::string& path, const Table& t, SpillCodec codec) {
  try {
    Writer w(path, codec);
    w.put(kMagic, sizeof kMagic);
    w.pad8();
    // The checksum covers the schema (a changed type would read the same bytes as
    // other values) and the body as stored.
    BodyHash hash;
    {
      fb::Builder b;
      auto [msg, ms] = b.table({fb::Scalar(0, 2, kMetadataV5), fb::Scalar(1, 1, kHeaderSchema), fb::Offset(2), fb::Scalar(3, 8, 0)});
      b.root(msg);
      b.point(ms[2], PutSchema(b, t, true));
      w.hashInto(&hash);
      w.message(b);
      w.hashInto(nullptr);
    }
    // Per column: validity (a bitmap, or nothing when there are no nulls), then the
    // values (bools as a bitmap), or a string's int64 offsets and its UTF-8 bytes.
    std::vector<std::vector<int64_t>> nodes;
    std::vector<BodyBuffer> body;
    for (const Column& c : t.columns) {
      nodes.push_back({c.length, c.validity ? Zeros(*c.validity, c.length) : 0});
      body.push_back(c.validity ? Bitmap(*c.validity, c.length) : BodyBuffer{nullptr, 0, {}});
      if (c.type == DType::Bool) {
        body.push_back(Bitmap(*c.data, c.length));
      } else if (c.type == DType::String) {
        body.push_back(Bytes(c.data.get(), c.data ? c.data->size() : 0));
        body.push_back(Bytes(c.chars.get(), c.chars ? c.chars->size() : 0));
      } else {
        body.push_back(Bytes(c.data.get(), c.data ? c.data->size() : 0));
      }
    }
    std::vector<std::vector<int64_t>> buffers(body.size(), std::vector<int64_t>{0, 0});
    int64_t batchAt = w.tell();
    fb::Builder placeholder = RecordBatchMessage(t, nodes, buffers, 0, codec, 0);
    int64_t metaLength = w.message(placeholder);
    int64_t bodyAt = w.tell();
    for (size_t i = 0; i < body.size(); i++) {
      buffers[i][0] = w.tell() - bodyAt;
      w.hashInto(&hash);  // the buffer as stored, not its padding
      buffers[i][1] = w.body(body[i]);
      w.hashInto(nullptr);
      w.pad8();
      body[i] = BodyBuffer{nullptr, 0, {}};  // a packed bitmap goes as soon as it is written
    }
    int64_t bodyLength = w.tell() - bodyAt;
    fb::Builder real = RecordBatchMessage(t, nodes, buffers, bodyLength, codec, hash.digest());
    if (real.size() != placeholder.size()) throw BasinError("BASIN_INTERNAL", "spill file " + path + ": record batch metadata changed size");
    w.patch(batchAt, real);
    w.put(kContinuation);
    w.put<int32_t>(0);  // end of stream
    fb::Builder footer;
    auto [f, fs] = footer.table({fb::Scalar(0, 2, kMetadataV5), fb::Offset(1), fb::Offset(2), fb::Offset(3)});
    footer.root(f);
    footer.point(fs[1], PutSchema(footer, t, true));
    footer.point(fs[2], footer.structs({}));
    footer.point(fs[3], footer.structs({{batchAt, metaLength, bodyLength}}));
    w.put(footer.bytes().data(), footer.size());
    w.put<int32_t>(int32_t(footer.size()));
    w.put(kMagic, sizeof kMagic);
    return w.finish();
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
}

TablePtr ReadSpillFile(const std::string& path) {
  Reader r(path);
  char magic[8];
  r.get(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) throw BasinError("BASIN_SPILL", "spill file " + path + " is not an Arrow IPC file");
  if (!r.endsWithMagic()) r.corrupt("it was cut short");
  r.seek(sizeof magic);
  BodyHash hash;  // over the schema message and the body, as the writer made it
  r.hashInto(&hash);
  std::vector<uint8_t> schemaBytes = r.message();
  r.hashInto(nullptr);
  fb::Table schemaMsg = fb::Table::Root(schemaBytes, path);
  if (schemaMsg.scalar<uint8_t>(1, 0) != kHeaderSchema) r.corrupt("it does not start with a schema");
  fb::Table schema = schemaMsg.table(2);
  auto [fieldsAt, nFields] = schema.vector(1);
  auto t = std::make_shared<Table>();
  for (size_t i = 0; i < nFields; i++) {
    fb::Table field = schema.element(fieldsAt, i);
    t->names.push_back(field.string(0));
    Column c;
    c.type = TypeFromArrow(field, r);
    t->columns.push_back(std::move(c));
  }
  std::vector<uint8_t> batchBytes = r.message();
  fb::Table batchMsg = fb::Table::Root(batchBytes, path);
  if (batchMsg.scalar<uint8_t>(1, 0) != kHeaderRecordBatch) r.corrupt("its second message is not a record batch");
  fb::Table batch = batchMsg.table(2);
  t->rows = batch.scalar<int64_t>(0, 0);
  int compression = batch.has(3) ? batch.table(3).scalar<int8_t>(0, 0) : -1;
  auto [nodesAt, nNodes] = batch.vector(1);
  auto [buffersAt, nBuffers] = batch.vector(2);
  if (nNodes != nFields) r.corrupt("its batch and schema disagree");
  int64_t bodyAt = r.tell();
  size_t next = 0;
  // The next body buffer: `size` bytes in memory, or as many as were written (kAsStored).
  constexpr size_t kAsStored = ~size_t(0);
  auto read = [&](size_t size) {
    if (next >= nBuffers) r.corrupt("a column has too few buffers");
    int64_t offset = batch.read<int64_t>(buffersAt + 16 * next), length = batch.read<int64_t>(buffersAt + 16 * next + 8);
    next++;
    if (offset < 0 || length < 0) r.corrupt("a buffer has a negative offset or size");
    r.seek(bodyAt + offset);
    if (size == kAsStored) {
      int64_t raw = compression < 0 || length == 0 ? length : r.peek<int64_t>();
      size = size_t(raw == -1 ? length - 8 : raw);
    }
    // A size read from the file is not trusted with zeroed memory: a corrupt one fails
    // to allocate, or to decompress into the (untouched) pages, and is reported as such.
    BufferPtr b;
    try {
      b = MakeBufferNoInit(size);
    } catch (const std::bad_alloc&) {
      r.corrupt("a buffer claims " + std::to_string(size) + " bytes");
    }
    r.body(compression, length, b->data(), size);
    return std::make_pair(b, length);
  };
  // A bitmap as one byte per row (null when the buffer is empty: no nulls).
  auto bitmap = [&](int64_t rows, bool optional) -> BufferPtr {
    int64_t length = batch.read<int64_t>(buffersAt + 16 * next + 8);
    if (optional && length == 0) {
      next++;
      return nullptr;
    }
    auto [bits, stored] = read(size_t((rows + 7) / 8));
    BufferPtr bytes = MakeBuffer(size_t(rows));
    for (int64_t i = 0; i < rows; i++) bytes->data()[i] = (bits->data()[i >> 3] >> (i & 7)) & 1;
    return bytes;
  };
  if (t->rows < 0) r.corrupt("it claims " + std::to_string(t->rows) + " rows");
  std::string wantHash;
  auto [kvAt, nKv] = batchMsg.vector(4);
  for (size_t i = 0; i < nKv; i++) {
    fb::Table kv = batchMsg.element(kvAt, i);
    if (kv.string(0) == kBodyHashKey) wantHash = kv.string(1);
  }
  if (wantHash.empty()) r.corrupt("it has no body checksum");
  r.hashInto(&hash);
  for (size_t i = 0; i < nFields; i++) {
    Column& c = t->columns[i];
    c.length = batch.read<int64_t>(nodesAt + 16 * i);
    if (c.length != t->rows) r.corrupt("a column's length differs from the batch's rows");
    if (next + 1 >= nBuffers) r.corrupt("a column has too few buffers");
    c.validity = bitmap(c.length, true);
    if (c.type == DType::Bool) {
      c.data = bitmap(c.length, false);
      continue;
    }
    // Every length and offset is checked before a kernel reads by it.
    const size_t need = size_t(c.length + (c.type == DType::String ? 1 : 0)) * ElementSize(c.type);
    c.data = read(kAsStored).first;
    if (c.data->size() < need) r.corrupt("a column has fewer values than rows");
    if (c.type != DType::String) continue;
    c.chars = read(kAsStored).first;
    const int64_t* off = c.data->as<int64_t>();
    if (off[0] != 0) r.corrupt("string offsets do not start at 0");
    for (int64_t k = 1; k <= c.length; k++)
      if (off[k] < off[k - 1] || off[k] > int64_t(c.chars->size())) r.corrupt("string offsets are out of order or out of range");
  }
  r.hashInto(nullptr);
  if (Hex16(hash.digest()) != wantHash) r.corrupt("its body does not match its checksum");
  return t;
}

}  // namespace basin
