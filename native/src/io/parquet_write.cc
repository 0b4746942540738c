#include "io/parquet_write.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

struct ChunkMeta {
  int64_t start, uncompressed, compressed, nulls;
  bool hasMinMax = false;
  int64_t min = 0, max = 0;
};

// One column's rows [r0, r1) as data pages appended to `file`.
ChunkMeta WriteChunk(std::string& file, const Column& c, int64_t r0, int64_t r1, ParquetCodec codec) {
  ChunkMeta m{int64_t(file.size()), 0, 0, 0};
  const bool intLike = c.type == DType::Int64 || c.type == DType::Timestamp || c.type == DType::Date;
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
        if (intLike)
          for (int64_t r = p0; r < p1; r++) {
            if (!c.valid(r)) continue;
            int64_t v = c.type == DType::Date ? c.values<int32_t>()[r] : c.values<int64_t>()[r];
            if (!m.hasMinMax) {
              m.min = m.max = v;
              m.hasMinMax = true;
            } else {
              m.min = std::min(m.min, v);
              m.max = std::max(m.max, v);
            }
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
    std::string comp = Compress(codec, body);
    ThriftOut h;
    h.i32(1, 0);  // DATA_PAGE
    h.i32(2, int32_t(body.size()));
    h.i32(3, int32_t(comp.size()));
    h.beginStruct(5);  // DataPageHeader
    h.i32(1, int32_t(n));
    h.i32(2, 0);  // PLAIN
    h.i32(3, 3);  // RLE definition levels
    h.i32(4, 3);  // RLE repetition levels
    h.end();
    h.stop();
    file += h.out;
    file += comp;
    m.uncompressed += int64_t(h.out.size() + body.size());
    m.compressed += int64_t(h.out.size() + comp.size());
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
  for (int64_t r0 = 0; r0 < t.rows; r0 += rowGroupSize) {
    const int64_t r1 = std::min(t.rows, r0 + rowGroupSize);
    Group g{r1 - r0, {}};
    for (const Column& c : t.columns) g.chunks.push_back(WriteChunk(file, c, r0, r1, codec));
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
      f.list(2, kI32, 2);
      f.listI32(0);  // PLAIN
      f.listI32(3);  // RLE
      f.list(3, kBinary, 1);
      f.listBinary(t.names[c]);
      f.i32(4, int32_t(codec));
      f.i64(5, g.rows);
      f.i64(6, m.uncompressed);
      f.i64(7, m.compressed);
      f.i64(9, m.start);
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
