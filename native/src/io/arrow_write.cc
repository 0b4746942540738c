#include "io/arrow_write.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "io/flatbuf.h"

namespace basin {

namespace {

using namespace fb::arrow;

constexpr uint8_t kZeros[8] = {};

// The body being laid out: each buffer padded to 8 bytes, with its offset and length.
struct Body {
  explicit Body(Gather& g) : out(g) {}
  Gather& out;
  int64_t at = 0;
  std::vector<std::vector<int64_t>> buffers;
  // A buffer of `n` bytes: a view of the table's bytes at `p`, or (own) a copy.
  void add(const void* p, size_t n, bool own) {
    buffers.push_back({at, int64_t(n)});
    if (own)
      out.addOwn(p, n);
    else
      out.addView(p, n);
    const size_t pad = (8 - n % 8) % 8;
    if (pad > 0) out.addOwn(kZeros, pad);
    at += int64_t(n + pad);
  }
  // One bit per row of bytes [r0, r1) (validity, or bool values), Arrow's LSB order.
  void bitmap(const uint8_t* v, int64_t r0, int64_t r1) {
    std::string bits(size_t((r1 - r0 + 7) / 8), '\0');
    for (int64_t r = r0; r < r1; r++)
      if (v[r]) bits[size_t((r - r0) >> 3)] |= char(1 << ((r - r0) & 7));
    add(bits.data(), bits.size(), true);
  }
};

// One record batch message of rows [r0, r1): continuation, metadata size, metadata,
// body; the values and string bytes are views of `t`'s buffers.
Gather Batch(const TablePtr& t, int64_t r0, int64_t r1, int64_t* metaLength, int64_t* bodyLength) {
  const int64_t n = r1 - r0;
  Gather g;
  g.keep = t;
  Body body(g);
  std::vector<std::vector<int64_t>> nodes;
  for (const Column& c : t->columns) {
    int64_t nulls = 0;
    if (c.validity)
      for (int64_t r = r0; r < r1; r++) nulls += c.valid(r) ? 0 : 1;
    nodes.push_back({n, nulls});
    if (nulls > 0)
      body.bitmap(c.validity->data(), r0, r1);
    else
      body.add(nullptr, 0, true);
    switch (c.type) {
      case DType::Int64:
      case DType::Float64:
      case DType::Timestamp:
        body.add(c.data->data() + size_t(r0) * 8, size_t(n) * 8, false);
        break;
      case DType::Date:
        body.add(c.data->data() + size_t(r0) * 4, size_t(n) * 4, false);
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
        body.add(offsets.data(), offsets.size() * 4, true);
        body.add(c.chars->data() + base, size_t(chars), false);
        break;
      }
    }
  }
  fb::Builder b;
  auto [msg, ms] = b.table({fb::Scalar(0, 2, kMetadataV5), fb::Scalar(1, 1, kHeaderRecordBatch), fb::Offset(2),
                            fb::Scalar(3, 8, uint64_t(body.at))});
  b.root(msg);
  auto [batch, bs] = b.table({fb::Scalar(0, 8, uint64_t(n)), fb::Offset(1), fb::Offset(2)});
  b.point(ms[2], batch);
  b.point(bs[1], b.structs(nodes));
  b.point(bs[2], b.structs(body.buffers));
  b.align(8);
  // The metadata goes first: appended to the own bytes, its segment put at the front.
  const size_t at = g.own.size();
  const int32_t size = int32_t(b.size());
  g.own.append(reinterpret_cast<const char*>(&fb::kContinuation), 4);
  g.own.append(reinterpret_cast<const char*>(&size), 4);
  g.own.append(reinterpret_cast<const char*>(b.bytes().data()), b.size());
  g.segments.insert(g.segments.begin(), Gather::Segment{nullptr, at, 8 + b.size()});
  g.size += 8 + b.size();
  *metaLength = int64_t(8 + b.size());
  *bodyLength = body.at;
  return g;
}

// Calls `put` with each record batch of `t` (rowsPerBatch rows at most; one empty batch
// for a table without rows) and its metadata and body lengths.
template <typename Put> void EachBatch(const TablePtr& t, int64_t rowsPerBatch, Put put) {
  for (int64_t r0 = 0; r0 == 0 || r0 < t->rows; r0 += rowsPerBatch) {
    int64_t meta = 0, body = 0;
    Gather g = Batch(t, r0, std::min(t->rows, r0 + rowsPerBatch), &meta, &body);
    put(g, meta, body);
  }
}

// A file opened for writing that is removed unless kept.
class NewFile {
 public:
  explicit NewFile(const std::string& path) : path_(path), fd_(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) {
    if (fd_ < 0) fail(errno);
  }
  ~NewFile() {
    if (fd_ >= 0) {
      close(fd_);
      unlink(path_.c_str());
    }
  }
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  void put(const Gather& g) {
    if (int err = WriteGatherAt(fd_, g, at_); err != 0) fail(err);
    at_ += int64_t(g.size);
  }
  int64_t at() const { return at_; }
  // Closes the file, keeping it; returns its size.
  int64_t keep() {
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) {
      const int err = errno;
      unlink(path_.c_str());
      fail(err);
    }
    return at_;
  }

 private:
  [[noreturn]] void fail(int err) const { throw BasinError("BASIN_IO", "cannot write " + path_ + ": " + IoWhy(err)); }
  std::string path_;
  int fd_;
  int64_t at_ = 0;
};

}  // namespace

void WriteArrowPart(PartSink& sink, int64_t part, const TablePtr& t, int64_t rowsPerBatch) {
  std::vector<int64_t> blocks;
  int64_t at = 0;
  EachBatch(t, rowsPerBatch, [&](Gather& g, int64_t meta, int64_t body) {
    blocks.insert(blocks.end(), {at, meta, body});
    at += int64_t(g.size);
    sink.appendPart(part, std::move(g), false);
  });
  sink.setTrailer(part, std::string(reinterpret_cast<const char*>(blocks.data()), blocks.size() * 8));
  sink.appendPart(part, std::string(), true);
}

int64_t WriteArrowFile(const std::string& path, const TablePtr& t, int64_t rowsPerBatch) {
  NewFile f(path);
  {
    Gather head;
    head.addOwn(fb::kMagic, sizeof fb::kMagic);
    head.addOwn(kZeros, 2);
    fb::Builder b;
    auto [msg, ms] = b.table({fb::Scalar(0, 2, kMetadataV5), fb::Scalar(1, 1, kHeaderSchema), fb::Offset(2), fb::Scalar(3, 8, 0)});
    b.root(msg);
    b.point(ms[2], fb::arrow::PutSchema(b, *t, false));
    b.align(8);
    const int32_t size = int32_t(b.size());
    head.addOwn(&fb::kContinuation, 4);
    head.addOwn(&size, 4);
    head.addOwn(b.bytes().data(), b.size());
    f.put(head);
  }
  std::vector<std::vector<int64_t>> blocks;
  EachBatch(t, rowsPerBatch, [&](Gather& g, int64_t meta, int64_t body) {
    blocks.push_back({f.at(), meta, body});
    f.put(g);
  });
  Gather tail;
  const int32_t eos[2] = {-1, 0};  // end of stream: continuation, then size 0
  tail.addOwn(eos, sizeof eos);
  fb::Builder footer;
  auto [root, fs] = footer.table({fb::Scalar(0, 2, kMetadataV5), fb::Offset(1), fb::Offset(2), fb::Offset(3)});
  footer.root(root);
  footer.point(fs[1], fb::arrow::PutSchema(footer, *t, false));
  footer.point(fs[2], footer.structs({}));
  footer.point(fs[3], footer.structs(blocks));
  const int32_t footerSize = int32_t(footer.size());
  tail.addOwn(footer.bytes().data(), footer.size());
  tail.addOwn(&footerSize, 4);
  tail.addOwn(fb::kMagic, sizeof fb::kMagic);
  f.put(tail);
  return f.keep();
}

}  // namespace basin
