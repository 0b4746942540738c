#include "io/arrow_write.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "io/flatbuf.h"

namespace basin {

namespace {

constexpr uint64_t kMetadataV5 = 4;
constexpr uint8_t kHeaderRecordBatch = 3;
constexpr uint32_t kContinuation = 0xFFFFFFFFu;

// The body being built: each buffer padded to 8 bytes, with its offset and length.
struct Body {
  std::string bytes;
  std::vector<std::vector<int64_t>> buffers;
  void add(const void* p, size_t n) {
    buffers.push_back({int64_t(bytes.size()), int64_t(n)});
    bytes.append(static_cast<const char*>(p), n);
    bytes.append((8 - bytes.size() % 8) % 8, '\0');
  }
  // One bit per row of bytes [r0, r1) (validity, or bool values), Arrow's LSB order.
  void bitmap(const uint8_t* v, int64_t r0, int64_t r1) {
    std::string bits(size_t((r1 - r0 + 7) / 8), '\0');
    for (int64_t r = r0; r < r1; r++)
      if (v[r]) bits[size_t((r - r0) >> 3)] |= char(1 << ((r - r0) & 7));
    add(bits.data(), bits.size());
  }
};

// One record batch message of rows [r0, r1): continuation, metadata size, metadata, body.
std::string Batch(const Table& t, int64_t r0, int64_t r1, int64_t* metaLength, int64_t* bodyLength) {
  const int64_t n = r1 - r0;
  Body body;
  std::vector<std::vector<int64_t>> nodes;
  for (const Column& c : t.columns) {
    int64_t nulls = 0;
    if (c.validity)
      for (int64_t r = r0; r < r1; r++) nulls += c.valid(r) ? 0 : 1;
    nodes.push_back({n, nulls});
    if (nulls > 0)
      body.bitmap(c.validity->data(), r0, r1);
    else
      body.add(nullptr, 0);
    switch (c.type) {
      case DType::Int64:
      case DType::Float64:
      case DType::Timestamp:
        body.add(c.data->data() + size_t(r0) * 8, size_t(n) * 8);
        break;
      case DType::Date:
        body.add(c.data->data() + size_t(r0) * 4, size_t(n) * 4);
        break;
      case DType::Bool:
        body.bitmap(c.data->data(), r0, r1);
        break;
      case DType::String: {
        const int64_t* off = c.data->as<int64_t>();
        const int64_t base = off[r0], chars = off[r1] - base;
        if (chars > INT32_MAX)
          throw BasinError("BASIN_IO", "a record batch's strings exceed 2 GiB: write fewer rows per batch");
        std::vector<int32_t> offsets(size_t(n) + 1);
        for (int64_t r = 0; r <= n; r++) offsets[size_t(r)] = int32_t(off[r0 + r] - base);
        body.add(offsets.data(), offsets.size() * 4);
        body.add(c.chars->data() + base, size_t(chars));
        break;
      }
    }
  }
  fb::Builder b;
  auto [msg, ms] = b.table({fb::Scalar(0, 2, kMetadataV5), fb::Scalar(1, 1, kHeaderRecordBatch), fb::Offset(2),
                            fb::Scalar(3, 8, uint64_t(body.bytes.size()))});
  b.root(msg);
  auto [batch, bs] = b.table({fb::Scalar(0, 8, uint64_t(n)), fb::Offset(1), fb::Offset(2)});
  b.point(ms[2], batch);
  b.point(bs[1], b.structs(nodes));
  b.point(bs[2], b.structs(body.buffers));
  b.align(8);
  std::string out;
  out.reserve(8 + b.size() + body.bytes.size());
  out.append(reinterpret_cast<const char*>(&kContinuation), 4);
  const int32_t size = int32_t(b.size());
  out.append(reinterpret_cast<const char*>(&size), 4);
  out.append(reinterpret_cast<const char*>(b.bytes().data()), b.size());
  *metaLength = int64_t(8 + b.size());
  *bodyLength = int64_t(body.bytes.size());
  out += body.bytes;
  return out;
}

}  // namespace

void WriteArrowPart(PartSink& sink, int64_t part, const Table& t, int64_t rowsPerBatch) {
  std::vector<int64_t> blocks;
  int64_t at = 0;
  for (int64_t r0 = 0; r0 == 0 || r0 < t.rows; r0 += rowsPerBatch) {
    const int64_t r1 = std::min(t.rows, r0 + rowsPerBatch);
    int64_t meta = 0, body = 0;
    std::string message = Batch(t, r0, r1, &meta, &body);
    blocks.insert(blocks.end(), {at, meta, body});
    at += int64_t(message.size());
    sink.appendPart(part, std::move(message), false);
  }
  sink.setTrailer(part, std::string(reinterpret_cast<const char*>(blocks.data()), blocks.size() * 8));
  sink.appendPart(part, std::string(), true);
}

}  // namespace basin
