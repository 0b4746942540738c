// Just enough FlatBuffers to write and read Arrow IPC metadata (Message, Schema,
// RecordBatch, Footer) without the flatbuffers library. The builder writes front to
// back: a table's vtable comes before it and its children after it, so every offset
// points forward; the reader checks every access against the buffer's bounds.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "store/column.h"

namespace basin {
namespace fb {

// A scalar or an offset (to a table, vector or string written later) of one table.
struct Slot {
  int id;
  int size;            // 1, 2, 4 or 8 bytes; offsets are 4
  uint64_t value = 0;  // scalars only
  bool offset = false;
};

inline Slot Scalar(int id, int size, uint64_t v) { return Slot{id, size, v, false}; }
inline Slot Offset(int id) { return Slot{id, 4, 0, true}; }

class Builder {
 public:
  Builder() { put<uint32_t>(0); }  // the root offset, set by root()
  size_t size() const { return buf_.size(); }
  std::vector<uint8_t>& bytes() { return buf_; }

  void root(size_t table) { point(0, table); }

  // Writes a table (its vtable first); returns where it starts and where each offset slot is, by id.
  std::pair<size_t, std::vector<size_t>> table(std::vector<Slot> slots) {
    int fields = 0;
    for (auto& s : slots) fields = std::max(fields, s.id + 1);
    align(2);
    size_t vt = buf_.size();
    for (int i = 0; i < 2 + fields; i++) put<uint16_t>(0);
    while (buf_.size() % 8 != 4) buf_.push_back(0);  // fields after the 4-byte vtable offset are 8-aligned
    size_t start = buf_.size();
    put<int32_t>(int32_t(start - vt));
    std::stable_sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.size > b.size; });
    std::vector<size_t> where(size_t(fields), 0);
    for (auto& s : slots) {
      align(size_t(s.size));
      size_t at = buf_.size();
      set16(vt + 4 + 2 * size_t(s.id), uint16_t(at - start));
      where[size_t(s.id)] = at;
      uint64_t v = s.offset ? 0 : s.value;
      buf_.insert(buf_.end(), reinterpret_cast<const uint8_t*>(&v), reinterpret_cast<const uint8_t*>(&v) + s.size);
    }
    set16(vt, uint16_t(4 + 2 * fields));
    set16(vt + 2, uint16_t(buf_.size() - start));
    return {start, where};
  }

  // Points the offset slot at `slot` to `target` (written after it).
  void point(size_t slot, size_t target) {
    uint32_t rel = uint32_t(target - slot);
    std::memcpy(&buf_[slot], &rel, 4);
  }

  size_t string(const std::string& s) {
    align(4);
    size_t at = buf_.size();
    put<uint32_t>(uint32_t(s.size()));
    buf_.insert(buf_.end(), s.begin(), s.end());
    buf_.push_back(0);
    return at;
  }

  // A vector of `n` offsets; returns where it starts and the slot of element i at start + 4 + 4i.
  size_t offsets(size_t n) {
    align(4);
    size_t at = buf_.size();
    put<uint32_t>(uint32_t(n));
    for (size_t i = 0; i < n; i++) put<uint32_t>(0);
    return at;
  }

  // A vector of structs made of int64 words (Arrow's FieldNode, Buffer and Block).
  size_t structs(const std::vector<std::vector<int64_t>>& items) {
    while (buf_.size() % 8 != 4) buf_.push_back(0);
    size_t at = buf_.size();
    put<uint32_t>(uint32_t(items.size()));
    for (auto& words : items)
      for (int64_t w : words) put<int64_t>(w);
    return at;
  }

  void align(size_t a) {
    while (buf_.size() % a) buf_.push_back(0);
  }

 private:
  template <typename T> void put(T v) {
    align(sizeof(T));
    buf_.insert(buf_.end(), reinterpret_cast<const uint8_t*>(&v), reinterpret_cast<const uint8_t*>(&v) + sizeof v);
  }
  void set16(size_t at, uint16_t v) { std::memcpy(&buf_[at], &v, 2); }
  std::vector<uint8_t> buf_;
};

// A table in a flatbuffer, read with bounds checks (BASIN_SPILL naming `what` on a bad one).
class Table {
 public:
  Table(const std::vector<uint8_t>* buf, size_t pos, const std::string* what) : buf_(buf), pos_(pos), what_(what) {}
  static Table Root(const std::vector<uint8_t>& buf, const std::string& what) {
    Table t(&buf, 0, &what);
    return Table(&buf, t.read<uint32_t>(0), &what);
  }

  template <typename T> T scalar(int id, T otherwise) const {
    size_t off = field(id);
    return off ? read<T>(pos_ + off) : otherwise;
  }
  bool has(int id) const { return field(id) != 0; }
  Table table(int id) const {
    size_t at = pos_ + need(id);
    return Table(buf_, at + read<uint32_t>(at), what_);
  }
  // A vector: where its elements start and how many there are.
  std::pair<size_t, size_t> vector(int id) const {
    if (!field(id)) return {0, 0};
    size_t at = pos_ + field(id);
    size_t v = at + read<uint32_t>(at);
    return {v + 4, read<uint32_t>(v)};
  }
  Table element(size_t start, size_t i) const {
    size_t at = start + 4 * i;
    return Table(buf_, at + read<uint32_t>(at), what_);
  }
  std::string string(int id) const {
    size_t at = pos_ + need(id);
    size_t s = at + read<uint32_t>(at);
    size_t n = read<uint32_t>(s);
    check(s + 4, n);
    return std::string(reinterpret_cast<const char*>(buf_->data() + s + 4), n);
  }
  template <typename T> T read(size_t at) const {
    check(at, sizeof(T));
    T v;
    std::memcpy(&v, buf_->data() + at, sizeof v);
    return v;
  }
  [[noreturn]] void bad() const { throw BasinError("BASIN_SPILL", *what_ + " has malformed Arrow IPC metadata; was it changed while Basin ran?"); }

 private:
  size_t field(int id) const {
    size_t vt = size_t(int64_t(pos_) - read<int32_t>(pos_));
    size_t vtSize = read<uint16_t>(vt);
    size_t slot = 4 + 2 * size_t(id);
    return slot + 2 <= vtSize ? read<uint16_t>(vt + slot) : 0;
  }
  size_t need(int id) const {
    size_t off = field(id);
    if (!off) bad();
    return off;
  }
  void check(size_t at, size_t n) const {
    if (at > buf_->size() || n > buf_->size() - at) bad();
  }
  const std::vector<uint8_t>* buf_;
  size_t pos_;
  const std::string* what_;
};

// Arrow IPC's constants (Message.fbs, Schema.fbs, File.fbs) and the schema of a table.
constexpr char kMagic[6] = {'A', 'R', 'R', 'O', 'W', '1'};
constexpr uint32_t kContinuation = 0xFFFFFFFFu;
namespace arrow {
constexpr uint64_t kMetadataV5 = 4;
enum : uint8_t { kHeaderSchema = 1, kHeaderRecordBatch = 3 };
enum : uint8_t {
  kTypeInt = 2,
  kTypeFloat = 3,
  kTypeUtf8 = 5,
  kTypeBool = 6,
  kTypeDate = 8,
  kTypeTimestamp = 10,
  kTypeLargeUtf8 = 20
};

inline uint8_t ArrowType(DType t, bool largeStrings) {
  switch (t) {
    case DType::Int64: return kTypeInt;
    case DType::Float64: return kTypeFloat;
    case DType::Bool: return kTypeBool;
    case DType::String: return largeStrings ? kTypeLargeUtf8 : kTypeUtf8;
    case DType::Date: return kTypeDate;
    case DType::Timestamp: return kTypeTimestamp;
  }
  return 0;
}

// The Arrow type table of a column type (Int 64 signed, Float DOUBLE, Date DAY, Timestamp µs UTC-less).
inline size_t PutType(Builder& b, DType t) {
  switch (t) {
    case DType::Int64: return b.table({Scalar(0, 4, 64), Scalar(1, 1, 1)}).first;
    case DType::Float64: return b.table({Scalar(0, 2, 2)}).first;
    case DType::Date: return b.table({Scalar(0, 2, 0)}).first;
    case DType::Timestamp: return b.table({Scalar(0, 2, 2)}).first;
    case DType::Bool:
    case DType::String: return b.table({}).first;
  }
  return 0;
}

// A Schema table of `t`'s columns, every field nullable; strings as LargeUtf8 (int64
// offsets, as the store holds them) or Utf8 (int32 offsets, what apache-arrow writes).
inline size_t PutSchema(Builder& b, const ::basin::Table& t, bool largeStrings) {
  auto [schema, slots] = b.table({Scalar(0, 2, 0), Offset(1)});
  size_t fields = b.offsets(t.columns.size());
  b.point(slots[1], fields);
  for (size_t i = 0; i < t.columns.size(); i++) {
    DType type = t.columns[i].type;
    auto [field, fs] = b.table({Offset(0), Scalar(1, 1, 1), Scalar(2, 1, ArrowType(type, largeStrings)), Offset(3), Offset(5)});
    b.point(fields + 4 + 4 * i, field);
    b.point(fs[0], b.string(t.names[i]));
    b.point(fs[3], PutType(b, type));
    b.point(fs[5], b.offsets(0));
  }
  return schema;
}
}  // namespace arrow

}  // namespace fb
}  // namespace basin
