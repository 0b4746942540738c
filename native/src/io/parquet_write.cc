#include "io/parquet_write.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "ops/hash.h"

#if BASIN_WITH_ZSTD
#include <zstd.h>
#endif

namespace basin {

namespace {

constexpr int64_t kPageRows = 1 << 17;

// Thrift compact protocol, writing only (Parquet's page headers and footer).
class ThriftOut {
 public:
  std::string out;
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out += char(uint8_t(v) | 0x80);
      v >>= 7;
    }
    out += char(v);
  }
  static uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
  void field(int16_t id, uint8_t type) {
    int d = id - last_;
    if (d > 0 && d <= 15) {
      out += char((d << 4) | type);
    } else {
      out += char(type);
      varint(zigzag(id));
    }
    last_ = id;
  }
  void i32(int16_t id, int32_t v) {
    field(id, 5);
    varint(zigzag(v));
  }
  void i64(int16_t id, int64_t v) {
    field(id, 6);
    varint(zigzag(v));
  }
  void binary(int16_t id, std::string_view s) {
    field(id, 8);
    varint(s.size());
    out.append(s);
  }
  void boolean(int16_t id, bool v) { field(id, v ? 1 : 2); }
  void beginStruct(int16_t id) {
    field(id, 12);
    enter();
  }
  // A struct as a list element (no field header).
  void enter() {
    stack_.push_back(last_);
    last_ = 0;
  }
  void end() {
    out += char(0);
    last_ = stack_.back();
    stack_.pop_back();
  }
  void list(int16_t id, uint8_t elem, size_t n) {
    field(id, 9);
    if (n < 15) {
      out += char((n << 4) | elem);
    } else {
      out += char(0xF0 | elem);
      varint(n);
    }
  }
  void listI32(int32_t v) { varint(zigzag(v)); }
  void listBinary(std::string_view s) {
    varint(s.size());
    out.append(s);
  }
  void stop() { out += char(0); }

 private:
  int16_t last_ = 0;
  std::vector<int16_t> stack_;
};

constexpr uint8_t kI32 = 5, kBinary = 8, kStruct = 12;

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void SnappyLiteral(std::string& out, const uint8_t* p, size_t n) {
  if (n == 0) return;
  size_t m = n - 1;
  if (m < 60) {
    out += char(m << 2);
  } else if (m < 256) {
    out += char(60 << 2);
    out += char(m);
  } else if (m < 65536) {
    out += char(61 << 2);
    out += char(m & 0xff);
    out += char(m >> 8);
  } else {
    out += char(62 << 2);
    out += char(m & 0xff);
    out += char((m >> 8) & 0xff);
    out += char(m >> 16);
  }
  out.append(reinterpret_cast<const char*>(p), n);
}

void SnappyCopy(std::string& out, size_t offset, size_t len) {
  while (len > 0) {
    size_t l = std::min<size_t>(len, 64);
    out += char(((l - 1) << 2) | 2);
    out += char(offset & 0xff);
    out += char(offset >> 8);
    len -= l;
  }
}

std::string Compress(ParquetCodec codec, const std::string& body) {
  switch (codec) {
    case ParquetCodec::Uncompressed:
      return body;
    case ParquetCodec::Snappy:
      return SnappyCompress(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    case ParquetCodec::Zstd: {
#if BASIN_WITH_ZSTD
      std::string out(ZSTD_compressBound(body.size()), '\0');
      size_t n = ZSTD_compress(out.data(), out.size(), body.data(), body.size(), 1);
      if (ZSTD_isError(n)) throw BasinError("BASIN_IO", std::string("zstd: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return out;
#else
      throw BasinError("BASIN_PLAN", "this build of Basin has no zstd: write Parquet with compression \"snappy\"");
#endif
    }
  }
  return body;
}

template <typename T> void Put(std::string& out, T v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

// Physical type numbers.
int32_t PhysicalType(DType t) {
  switch (t) {
    case DType::Bool: return 0;
    case DType::Date: return 1;
    case DType::Int64:
    case DType::Timestamp: return 2;
    case DType::Float64: return 5;
    case DType::String: return 6;
  }
  return 2;
}

// Parquet's Encoding numbers.
constexpr int32_t kPlain = 0, kRle = 3, kRleDictionary = 8;

// A dictionary is checked every kDictCheckRows rows it has seen: it is dropped (the
// chunk written PLAIN, as Arrow and DuckDB fall back) once its entries are over 90% of
// the PLAIN bytes of those rows (nearly unique values: it cannot pay) or over
// kMaxDictBytes (the dictionary page, which a reader holds whole).
constexpr int64_t kDictCheckRows = 1 << 16;
constexpr size_t kMaxDictBytes = size_t(8) << 20;

// The dictionary of one column chunk: its distinct values in first-seen order as the
// PLAIN body of the dictionary page, and each present row's index into it. One per
// encoder, reused from chunk to chunk.
class ChunkDictionary {
 public:
  // Builds the dictionary of rows [r0, r1) of `c`; false when it does not pay (then
  // the chunk is written PLAIN). Booleans are never dictionary-encoded.
  bool build(const Column& c, int64_t r0, int64_t r1) {
    plain_.clear();
    hashes_.clear();
    keys_.clear();
    strings_.clear();
    codes_.clear();
    codes_.reserve(size_t(r1 - r0));
    slots_.assign(1 << 12, 0);
    int64_t plainBytes = 0;
    switch (c.type) {
      case DType::Bool:
        return false;
      case DType::String:
        return scan(c, r0, r1, plainBytes, [&](int64_t r) {
          std::string_view v = c.str(r);
          plainBytes += 4 + int64_t(v.size());
          return stringCode(v);
        });
      case DType::Date:
        return scan(c, r0, r1, plainBytes, [&](int64_t r) {
          plainBytes += 4;
          return fixedCode(uint64_t(int64_t(c.values<int32_t>()[r])), &c.values<int32_t>()[r], 4);
        });
      case DType::Int64:
      case DType::Timestamp:
      case DType::Float64:
        return scan(c, r0, r1, plainBytes, [&](int64_t r) {
          const uint8_t* p = c.data->data() + size_t(r) * 8;
          uint64_t key;
          std::memcpy(&key, p, 8);  // the bits: -0 and each NaN stay as they are
          plainBytes += 8;
          return fixedCode(key, p, 8);
        });
    }
    return false;
  }

  const std::string& plain() const { return plain_; }
  int64_t entries() const { return int64_t(hashes_.size()); }
  const std::vector<uint32_t>& codes() const { return codes_; }
  // Bits per index (at least 1: some readers take no 0-bit indices).
  int bitWidth() const {
    int w = 1;
    while (w < 32 && (uint64_t(1) << w) < uint64_t(entries())) w++;
    return w;
  }
  // The integer keys (dates sign-extended), for an integer column's min/max.
  const std::vector<uint64_t>& keys() const { return keys_; }

 private:
  template <typename CodeOf> bool scan(const Column& c, int64_t r0, int64_t r1, int64_t& plainBytes, CodeOf code) {
    int64_t check = r0 + kDictCheckRows;
    for (int64_t r = r0; r < r1; r++) {
      if (c.valid(r)) codes_.push_back(code(r));
      if (r == check) {
        if (!pays(plainBytes, 9, 10)) return false;
        check += kDictCheckRows;
      }
    }
    // The indices as at most bitWidth() bits each, against the values themselves.
    const int64_t indexBytes = (int64_t(codes_.size()) * bitWidth() + 7) / 8;
    return !codes_.empty() && int64_t(plain_.size()) + indexBytes < plainBytes && plain_.size() <= kMaxDictBytes;
  }
  bool pays(int64_t plainBytes, int64_t num, int64_t den) const {
    return plain_.size() <= kMaxDictBytes && int64_t(plain_.size()) * den <= plainBytes * num;
  }

  uint32_t fixedCode(uint64_t key, const void* bytes, size_t width) {
    const uint64_t h = hash::Mix64(key);
    for (size_t s = h & (slots_.size() - 1);; s = (s + 1) & (slots_.size() - 1)) {
      const uint32_t e = slots_[s];
      if (e == 0) {
        keys_.push_back(key);
        plain_.append(static_cast<const char*>(bytes), width);
        return insert(s, h);
      }
      if (keys_[e - 1] == key) return e - 1;
    }
  }
  uint32_t stringCode(std::string_view v) {
    const uint64_t h = hash::HashBytes(reinterpret_cast<const uint8_t*>(v.data()), v.size());
    for (size_t s = h & (slots_.size() - 1);; s = (s + 1) & (slots_.size() - 1)) {
      const uint32_t e = slots_[s];
      if (e == 0) {
        strings_.push_back(v);
        Put<uint32_t>(plain_, uint32_t(v.size()));
        plain_.append(v);
        return insert(s, h);
      }
      if (hashes_[e - 1] == h && strings_[e - 1] == v) return e - 1;
    }
  }
  // Enters the new entry's hash at free slot `s`, growing the table past half full.
  uint32_t insert(size_t s, uint64_t h) {
    hashes_.push_back(h);
    const uint32_t code = uint32_t(hashes_.size() - 1);
    slots_[s] = code + 1;
    if (hashes_.size() * 2 > slots_.size()) {
      slots_.assign(slots_.size() * 2, 0);
      const size_t mask = slots_.size() - 1;
      for (uint32_t e = 0; e < hashes_.size(); e++) {
        size_t t = hashes_[e] & mask;
        while (slots_[t] != 0) t = (t + 1) & mask;
        slots_[t] = e + 1;
      }
    }
    return code;
  }

  std::string plain_;
  std::vector<uint64_t> hashes_;            // per entry
  std::vector<uint64_t> keys_;              // per entry, fixed-width values
  std::vector<std::string_view> strings_;   // per entry, strings (views into the column)
  std::vector<uint32_t> codes_;             // per present row
  std::vector<uint32_t> slots_;             // open addressing: entry + 1, 0 = free
};

// `n` values of `bw` bits as Parquet's RLE/bit-packed hybrid (no length prefix): runs
// of 8 or more equal values as RLE runs, the rest bit-packed in groups of 8 (the last
// group padded with zeros, which readers ignore past the page's value count).
void RleHybrid(const uint32_t* v, size_t n, int bw, std::string& out) {
  auto varint = [&](uint64_t x) {
    while (x >= 0x80) {
      out += char(uint8_t(x) | 0x80);
      x >>= 7;
    }
    out += char(x);
  };
  auto packed = [&](size_t from, size_t to) {
    if (from == to) return;
    const size_t groups = (to - from + 7) / 8;
    varint((uint64_t(groups) << 1) | 1);
    size_t at = out.size();
    out.resize(at + groups * size_t(bw));
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = from; i < from + groups * 8; i++) {
      acc |= uint64_t(i < to ? v[i] : 0) << bits;
      bits += bw;
      while (bits >= 8) {
        out[at++] = char(acc);
        acc >>= 8;
        bits -= 8;
      }
    }
  };
  const size_t valueBytes = size_t(bw + 7) / 8;
  size_t i = 0, pending = 0;  // v[pending, i) waits to be bit-packed
  while (i < n) {
    size_t j = i + 1;
    while (j < n && v[j] == v[i]) j++;
    // A run long enough once the values waiting are made a whole number of groups.
    const size_t fill = (8 - (i - pending) % 8) % 8;
    if (j - i >= fill + 8) {
      packed(pending, i + fill);
      varint(uint64_t(j - i - fill) << 1);
      const uint32_t x = v[i];
      out.append(reinterpret_cast<const char*>(&x), valueBytes);
      pending = j;
    }
    i = j;
  }
  packed(pending, n);
}

struct ChunkMeta {
  int64_t start, uncompressed, compressed, nulls;
  // Where its data pages begin (after the dictionary page, when it has one).
  int64_t dataStart = 0;
  bool dictionary = false;
  bool hasMinMax = false;
  int64_t min = 0, max = 0;
  void range(int64_t v) {
    if (!hasMinMax) {
      min = max = v;
      hasMinMax = true;
    } else {
      min = std::min(min, v);
      max = std::max(max, v);
    }
  }
};

// A page (its header, then its body compressed) appended to `file`; counts its sizes.
void AppendPage(std::string& file, ChunkMeta& m, ThriftOut& header, const std::string& body, const std::string& comp) {
  file += header.out;
  file += comp;
  m.uncompressed += int64_t(header.out.size() + body.size());
  m.compressed += int64_t(header.out.size() + comp.size());
}

// One column's rows [r0, r1) as data pages appended to `file`: dictionary-encoded
// (a PLAIN dictionary page, then RLE_DICTIONARY pages) where `dict` finds that it
// pays, else PLAIN.
ChunkMeta WriteChunk(std::string& file, const Column& c, int64_t r0, int64_t r1, ParquetCodec codec,
                     ChunkDictionary& dict) {
  ChunkMeta m{int64_t(file.size()), 0, 0, 0};
  const bool intLike = c.type == DType::Int64 || c.type == DType::Timestamp || c.type == DType::Date;
  m.dictionary = dict.build(c, r0, r1);
  if (m.dictionary) {
    std::string comp = Compress(codec, dict.plain());
    ThriftOut h;
    h.i32(1, 2);  // DICTIONARY_PAGE
    h.i32(2, int32_t(dict.plain().size()));
    h.i32(3, int32_t(comp.size()));
    h.beginStruct(7);  // DictionaryPageHeader
    h.i32(1, int32_t(dict.entries()));
    h.i32(2, kPlain);
    h.end();
    h.stop();
    AppendPage(file, m, h, dict.plain(), comp);
    if (intLike)
      for (uint64_t k : dict.keys()) m.range(int64_t(k));
  } else if (intLike) {
    for (int64_t r = r0; r < r1; r++)
      if (c.valid(r)) m.range(c.type == DType::Date ? c.values<int32_t>()[r] : c.values<int64_t>()[r]);
  }
  m.dataStart = int64_t(file.size());
  const int bw = m.dictionary ? dict.bitWidth() : 0;
  size_t code = 0;  // the dictionary index of the next present row
  std::string body;
  for (int64_t p0 = r0; p0 < r1; p0 += kPageRows) {
    const int64_t p1 = std::min(r1, p0 + kPageRows), n = p1 - p0;
    body.clear();
    // Definition levels (1 = present), 4-byte length first.
    int64_t nulls = 0;
    if (c.validity)
      for (int64_t r = p0; r < p1; r++) nulls += c.valid(r) ? 0 : 1;
    m.nulls += nulls;
    std::string levels;
    if (nulls == 0) {
      ThriftOut v;
      v.varint(uint64_t(n) << 1);
      levels = v.out;
      levels += char(1);
    } else {
      ThriftOut v;
      const int64_t groups = (n + 7) / 8;
      v.varint((uint64_t(groups) << 1) | 1);
      levels = v.out;
      size_t at = levels.size();
      levels.resize(at + size_t(groups), '\0');
      for (int64_t r = p0; r < p1; r++)
        if (c.valid(r)) levels[at + size_t((r - p0) >> 3)] |= char(1 << ((r - p0) & 7));
    }
    Put<uint32_t>(body, uint32_t(levels.size()));
    body += levels;
    if (m.dictionary) {
      // The bit width, then the present rows' indices.
      const size_t present = size_t(n - nulls);
      body += char(bw);
      RleHybrid(dict.codes().data() + code, present, bw, body);
      code += present;
    } else {
      // PLAIN values of the rows present.
      switch (c.type) {
        case DType::Int64:
        case DType::Timestamp:
        case DType::Date:
        case DType::Float64: {
          const size_t w = c.type == DType::Date ? 4 : 8;
          const char* d = reinterpret_cast<const char*>(c.data->data());
          if (nulls == 0) {
            body.append(d + size_t(p0) * w, size_t(n) * w);
          } else {
            for (int64_t r = p0; r < p1; r++)
              if (c.valid(r)) body.append(d + size_t(r) * w, w);
          }
          break;
        }
        case DType::Bool: {
          size_t at = body.size();
          int64_t k = 0;
          body.resize(at + size_t((n - nulls + 7) / 8), '\0');
          for (int64_t r = p0; r < p1; r++) {
            if (!c.valid(r)) continue;
            if (c.values<uint8_t>()[r]) body[at + size_t(k >> 3)] |= char(1 << (k & 7));
            k++;
          }
          break;
        }
        case DType::String:
          for (int64_t r = p0; r < p1; r++) {
            if (!c.valid(r)) continue;
            std::string_view s = c.str(r);
            Put<uint32_t>(body, uint32_t(s.size()));
            body.append(s);
          }
          break;
      }
    }
    std::string comp = Compress(codec, body);
    ThriftOut h;
    h.i32(1, 0);  // DATA_PAGE
    h.i32(2, int32_t(body.size()));
    h.i32(3, int32_t(comp.size()));
    h.beginStruct(5);  // DataPageHeader
    h.i32(1, int32_t(n));
    h.i32(2, m.dictionary ? kRleDictionary : kPlain);
    h.i32(3, kRle);  // definition levels
    h.i32(4, kRle);  // repetition levels
    h.end();
    h.stop();
    AppendPage(file, m, h, body, comp);
  }
  return m;
}

std::string StatBytes(DType t, int64_t v) {
  std::string s;
  if (t == DType::Date)
    Put<int32_t>(s, int32_t(v));
  else
    Put<int64_t>(s, v);
  return s;
}

void SchemaElement(ThriftOut& f, const std::string& name, DType t) {
  f.enter();
  f.i32(1, PhysicalType(t));
  f.i32(3, 1);  // OPTIONAL
  f.binary(4, name);
  if (t == DType::String || t == DType::Date) {
    // Converted type UTF8 / DATE; logical type StringType (field 1) / DateType (field 6).
    f.i32(6, t == DType::String ? 0 : 6);
    f.beginStruct(10);
    f.beginStruct(t == DType::String ? 1 : 6);
    f.end();
    f.end();
  } else if (t == DType::Timestamp) {
    f.beginStruct(10);
    f.beginStruct(8);  // TimestampType
    f.boolean(1, false);
    f.beginStruct(2);  // TimeUnit
    f.beginStruct(2);  // MICROS
    f.end();
    f.end();
    f.end();
    f.end();
  }
  f.end();
}

}  // namespace

std::string SnappyCompress(const uint8_t* src, size_t n) {
  std::string out;
  {
    ThriftOut v;
    v.varint(n);
    out = v.out;
  }
  out.reserve(out.size() + n + n / 6 + 32);
  std::vector<uint16_t> table(1 << 14);
  for (size_t b = 0; b < n; b += 65536) {
    const size_t e = std::min(n, b + 65536);
    std::fill(table.begin(), table.end(), 0);
    size_t i = b, lit = b;
    while (i + 4 <= e) {
      const uint32_t v = Load32(src + i);
      const uint32_t h = (v * 0x1e35a7bdu) >> 18;
      const size_t cand = b + table[h];
      table[h] = uint16_t(i - b);
      if (cand < i && Load32(src + cand) == v) {
        SnappyLiteral(out, src + lit, i - lit);
        size_t len = 4;
        while (i + len < e && src[cand + len] == src[i + len]) len++;
        SnappyCopy(out, i - cand, len);
        i += len;
        lit = i;
      } else {
        i += 1 + ((i - lit) >> 5);  // skip faster through data that does not compress
      }
    }
    SnappyLiteral(out, src + lit, e - lit);
  }
  return out;
}

bool ParquetZstdAvailable() {
#if BASIN_WITH_ZSTD
  return true;
#else
  return false;
#endif
}

ParquetCodec ParquetCodecFromName(const std::string& name) {
  if (name == "snappy") return ParquetCodec::Snappy;
  if (name == "uncompressed") return ParquetCodec::Uncompressed;
  if (name == "zstd") {
    if (!ParquetZstdAvailable())
      throw BasinError("BASIN_PLAN", "this build of Basin has no zstd: write Parquet with compression \"snappy\"");
    return ParquetCodec::Zstd;
  }
  throw BasinError("BASIN_PLAN", "unknown Parquet compression \"" + name + "\"");
}

std::string EncodeParquetFile(const Table& t, ParquetCodec codec, int64_t rowGroupSize) {
  std::string file = "PAR1";
  struct Group {
    int64_t rows;
    std::vector<ChunkMeta> chunks;
  };
  std::vector<Group> groups;
  if (rowGroupSize < 1) rowGroupSize = 1;
  ChunkDictionary dict;
  for (int64_t r0 = 0; r0 < t.rows; r0 += rowGroupSize) {
    const int64_t r1 = std::min(t.rows, r0 + rowGroupSize);
    Group g{r1 - r0, {}};
    for (const Column& c : t.columns) g.chunks.push_back(WriteChunk(file, c, r0, r1, codec, dict));
    groups.push_back(std::move(g));
  }
  ThriftOut f;
  f.i32(1, 1);
  f.list(2, kStruct, t.columns.size() + 1);
  f.enter();
  f.binary(4, "schema");
  f.i32(5, int32_t(t.columns.size()));
  f.end();
  for (size_t c = 0; c < t.columns.size(); c++) SchemaElement(f, t.names[c], t.columns[c].type);
  f.i64(3, t.rows);
  f.list(4, kStruct, groups.size());
  for (const Group& g : groups) {
    f.enter();
    f.list(1, kStruct, g.chunks.size());
    int64_t total = 0, compressed = 0;
    for (size_t c = 0; c < g.chunks.size(); c++) {
      const ChunkMeta& m = g.chunks[c];
      const DType type = t.columns[c].type;
      total += m.uncompressed;
      compressed += m.compressed;
      f.enter();
      f.i64(2, m.start);
      f.beginStruct(3);  // ColumnMetaData
      f.i32(1, PhysicalType(type));
      f.list(2, kI32, m.dictionary ? 3 : 2);
      f.listI32(kPlain);  // values, or the dictionary page
      f.listI32(kRle);    // definition levels
      if (m.dictionary) f.listI32(kRleDictionary);
      f.list(3, kBinary, 1);
      f.listBinary(t.names[c]);
      f.i32(4, int32_t(codec));
      f.i64(5, g.rows);
      f.i64(6, m.uncompressed);
      f.i64(7, m.compressed);
      f.i64(9, m.dataStart);
      if (m.dictionary) f.i64(11, m.start);
      f.beginStruct(12);  // Statistics
      f.i64(3, m.nulls);
      if (m.hasMinMax) {
        f.binary(5, StatBytes(type, m.max));
        f.binary(6, StatBytes(type, m.min));
      }
      f.end();
      f.end();
      f.end();
    }
    f.i64(2, total);
    f.i64(3, g.rows);
    if (!g.chunks.empty()) f.i64(5, g.chunks[0].start);
    f.i64(6, compressed);
    f.end();
  }
  f.binary(6, "basin");
  f.stop();
  file += f.out;
  Put<uint32_t>(file, uint32_t(f.out.size()));
  file += "PAR1";
  return file;
}

}  // namespace basin
