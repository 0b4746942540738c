// Columnar data: buffers with process-wide byte accounting, typed columns, tables.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace basin {

// Type codes shared with engine/common/types.ts (keep the numbers in sync).
enum class DType : uint8_t { Int64 = 0, Float64 = 1, Bool = 2, String = 3, Date = 4, Timestamp = 5 };
const char* DTypeName(DType t);
DType DTypeFromName(const std::string& name);

// An error that crosses to JS as { code, message }.
struct BasinError : std::runtime_error {
  std::string code;
  BasinError(std::string c, const std::string& msg) : std::runtime_error(msg), code(std::move(c)) {}
};

// Owned, zero-initialised bytes. Every live Buffer is counted in the store stats until
// uncount() hands its bytes to JS (an external ArrayBuffer over them).
// Tag for a Buffer whose bytes are left uninitialised: for writers that overwrite
// every byte they keep, so fresh pages are touched once (by the writer), not zeroed first.
struct NoInit {};

// How a Buffer's bytes are freed: delete[], or back to the BlockPool (capacity > 0).
struct BufferFree {
  size_t capacity = 0;
  void operator()(uint8_t* p) const;
};

class Buffer {
 public:
  explicit Buffer(size_t bytes);
  Buffer(size_t bytes, NoInit);
  // Adopts `size` bytes a writer has already filled (the allocation may be larger).
  Buffer(std::unique_ptr<uint8_t[]> bytes, size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* data() { return bytes_.get(); }
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  template <typename T> T* as() { return reinterpret_cast<T*>(bytes_.get()); }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(bytes_.get()); }
  // Shrinks the logical size (used by builders that over-allocate).
  void shrink(size_t bytes);
  // Leaves the store's accounting: the bytes now belong to JS (an ArrayBuffer over them).
  void uncount();

 private:
  void allocate(bool zero);
  std::unique_ptr<uint8_t[], BufferFree> bytes_;
  size_t size_;
  bool counted_ = true;
};
using BufferPtr = std::shared_ptr<Buffer>;
BufferPtr MakeBuffer(size_t bytes);
// A buffer of `bytes` uninitialised bytes (see NoInit): the caller writes every one it reads.
BufferPtr MakeBufferNoInit(size_t bytes);

// Layout by type:
//   Int64, Timestamp (microseconds since epoch, UTC): data = int64_t[length]
//   Float64: data = double[length];  Bool: data = uint8_t[length] (0/1)
//   Date (days since epoch): data = int32_t[length]
//   String: data = int64_t offsets[length + 1], chars = UTF-8 bytes
//   validity: uint8_t[length], 1 = valid; nullptr means "no nulls".
struct Column {
  DType type = DType::Int64;
  int64_t length = 0;
  BufferPtr data;
  BufferPtr chars;
  BufferPtr validity;

  bool valid(int64_t i) const { return !validity || validity->data()[i] != 0; }
  template <typename T> const T* values() const { return data->as<T>(); }
  std::string_view str(int64_t i) const {
    const int64_t* off = data->as<int64_t>();
    return std::string_view(reinterpret_cast<const char*>(chars->data()) + off[i], size_t(off[i + 1] - off[i]));
  }
  int64_t nullCount() const;
};

struct Table {
  std::vector<std::string> names;
  std::vector<Column> columns;
  int64_t rows = 0;
  int columnIndex(const std::string& name) const;  // -1 when absent
};
using TablePtr = std::shared_ptr<const Table>;

size_t ElementSize(DType t);  // bytes per row of `data` (String: 8, the offset width)

// Builds a column row by row; nulls are tracked lazily.
class ColumnBuilder {
 public:
  ColumnBuilder(DType type, int64_t capacity);
  void appendNull();
  void appendInt(int64_t v);        // Int64, Timestamp
  void appendDate(int32_t v);       // Date
  void appendDouble(double v);      // Float64
  void appendBool(bool v);          // Bool
  void appendString(std::string_view s);
  // Appends row i of `src` (same type).
  void appendFrom(const Column& src, int64_t i);
  int64_t length() const { return length_; }
  Column finish();

 private:
  void grow(int64_t need);
  void markValid();
  DType type_;
  int64_t length_ = 0, capacity_;
  std::vector<uint8_t> fixed_;     // element bytes
  std::vector<int64_t> offsets_;   // strings
  std::string chars_;
  std::vector<uint8_t> validity_;  // empty until the first null
  bool hasNull_ = false;
};

// Gathers rows `idx` of `src` (a selection vector) into a new column.
Column Take(const Column& src, const int64_t* idx, int64_t n);
// Concatenates same-typed columns.
Column Concat(const std::vector<const Column*>& parts);
// Rows [offset, offset+len) of a table, copied.
TablePtr SliceTable(const Table& t, int64_t offset, int64_t len);
// A table with `names`, `types` and `rows` but no buffers: what the store keeps of a
// table whose only copy is on a GPU (the device tier).
TablePtr ShapeTable(const std::vector<std::string>& names, const std::vector<DType>& types, int64_t rows);
// Concatenates same-schema tables. One of kParallelConcatBytes or more copies its
// columns on several threads: a table persisted whole for a GPU (gigabytes, one
// partition) is concatenated while the CPU workers that parsed it wait.
TablePtr ConcatTables(const std::vector<TablePtr>& parts);
constexpr int64_t kParallelConcatBytes = int64_t(256) << 20;

}  // namespace basin
