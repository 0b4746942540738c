#include "store/column.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "store/block_pool.h"
#include "store/store.h"

namespace basin {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::Int64: return "int64";
    case DType::Float64: return "float64";
    case DType::Bool: return "bool";
    case DType::String: return "string";
    case DType::Date: return "date";
    case DType::Timestamp: return "timestamp";
  }
  return "?";
}

DType DTypeFromName(const std::string& n) {
  if (n == "int64") return DType::Int64;
  if (n == "float64") return DType::Float64;
  if (n == "bool") return DType::Bool;
  if (n == "string") return DType::String;
  if (n == "date") return DType::Date;
  if (n == "timestamp") return DType::Timestamp;
  throw BasinError("BASIN_TYPE", "unknown type '" + n + "'");
}

Buffer::Buffer(size_t bytes) : size_(bytes) { allocate(true); }
Buffer::Buffer(size_t bytes, NoInit) : size_(bytes) { allocate(false); }
Buffer::Buffer(std::unique_ptr<uint8_t[]> bytes, size_t size) : bytes_(bytes.release(), BufferFree{}), size_(size) {
  Store& store = Store::Instance();
  store.beforeAlloc(size_);
  store.onAlloc(size_);
}
void Buffer::allocate(bool zero) {
  Store& store = Store::Instance();
  store.beforeAlloc(size_);  // may spill tables to disk first, to stay within the memory limit
  const size_t n = size_ > 0 ? size_ : 1;
  auto get = [&] {
    if (n >= BlockPool::kMinBytes) {
      Block b = BlockPool::Instance().take(n);
      if (zero && !b.zero) std::memset(b.data, 0, n);
      bytes_ = std::unique_ptr<uint8_t[], BufferFree>(b.data, BufferFree{b.capacity});
    } else {
      bytes_.reset(zero ? new uint8_t[n]() : new uint8_t[n]);
    }
  };
  try {
    get();
  } catch (const std::bad_alloc&) {
    BlockPool::Instance().release();
    if (!store.spillToFree(size_)) throw;
    get();  // retried once, after spilling
  }
  store.onAlloc(size_);
}
void BufferFree::operator()(uint8_t* p) const {
  if (capacity > 0)
    BlockPool::Instance().give(p, capacity);
  else
    delete[] p;
}
Buffer::~Buffer() {
  if (counted_) Store::Instance().onFree(size_, true);
}
void Buffer::uncount() {
  if (counted_) Store::Instance().onFree(size_, true);
  counted_ = false;
}
void Buffer::shrink(size_t bytes) {
  if (bytes >= size_) return;
  Store::Instance().onFree(size_ - bytes, false);
  size_ = bytes;
}
BufferPtr MakeBuffer(size_t bytes) { return std::make_shared<Buffer>(bytes); }
BufferPtr MakeBufferNoInit(size_t bytes) { return std::make_shared<Buffer>(bytes, NoInit{}); }

int64_t Column::nullCount() const {
  if (!validity) return 0;
  int64_t n = 0;
  const uint8_t* v = validity->data();
  for (int64_t i = 0; i < length; i++) n += v[i] == 0;
  return n;
}

int Table::columnIndex(const std::string& name) const {
  for (size_t i = 0; i < names.size(); i++)
    if (names[i] == name) return int(i);
  return -1;
}

size_t ElementSize(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::Date: return 4;
    default: return 8;
  }
}

ColumnBuilder::ColumnBuilder(DType type, int64_t capacity) : type_(type), capacity_(std::max<int64_t>(capacity, 1)) {
  if (type_ == DType::String) {
    offsets_.reserve(size_t(capacity_) + 1);
    offsets_.push_back(0);
  } else {
    fixed_.resize(size_t(capacity_) * ElementSize(type_));
  }
}

void ColumnBuilder::grow(int64_t need) {
  if (need <= capacity_) return;
  capacity_ = std::max(need, capacity_ * 2);
  if (type_ != DType::String) fixed_.resize(size_t(capacity_) * ElementSize(type_));
  if (hasNull_) validity_.resize(size_t(capacity_), 1);
}

void ColumnBuilder::markValid() {
  if (hasNull_) validity_[size_t(length_)] = 1;
}

void ColumnBuilder::appendNull() {
  grow(length_ + 1);
  if (!hasNull_) {
    hasNull_ = true;
    validity_.assign(size_t(capacity_), 1);
  }
  validity_[size_t(length_)] = 0;
  if (type_ == DType::String) offsets_.push_back(int64_t(chars_.size()));
  length_++;
}

void ColumnBuilder::appendInt(int64_t v) {
  grow(length_ + 1);
  markValid();
  if (type_ == DType::Date) {
    reinterpret_cast<int32_t*>(fixed_.data())[length_] = int32_t(v);
  } else {
    reinterpret_cast<int64_t*>(fixed_.data())[length_] = v;
  }
  length_++;
}
void ColumnBuilder::appendDate(int32_t v) { appendInt(v); }
void ColumnBuilder::appendDouble(double v) {
  grow(length_ + 1);
  markValid();
  reinterpret_cast<double*>(fixed_.data())[length_++] = v;
}
void ColumnBuilder::appendBool(bool v) {
  grow(length_ + 1);
  markValid();
  fixed_[size_t(length_++)] = v ? 1 : 0;
}
void ColumnBuilder::appendString(std::string_view s) {
  grow(length_ + 1);
  markValid();
  chars_.append(s.data(), s.size());
  offsets_.push_back(int64_t(chars_.size()));
  length_++;
}

void ColumnBuilder::appendFrom(const Column& src, int64_t i) {
  if (!src.valid(i)) return appendNull();
  switch (type_) {
    case DType::String: return appendString(src.str(i));
    case DType::Float64: return appendDouble(src.values<double>()[i]);
    case DType::Bool: return appendBool(src.values<uint8_t>()[i] != 0);
    case DType::Date: return appendDate(src.values<int32_t>()[i]);
    default: return appendInt(src.values<int64_t>()[i]);
  }
}

Column ColumnBuilder::finish() {
  Column c;
  c.type = type_;
  c.length = length_;
  if (type_ == DType::String) {
    c.data = MakeBuffer(offsets_.size() * sizeof(int64_t));
    std::memcpy(c.data->data(), offsets_.data(), offsets_.size() * sizeof(int64_t));
    c.chars = MakeBuffer(chars_.size());
    std::memcpy(c.chars->data(), chars_.data(), chars_.size());
  } else {
    size_t bytes = size_t(length_) * ElementSize(type_);
    c.data = MakeBuffer(bytes);
    std::memcpy(c.data->data(), fixed_.data(), bytes);
  }
  if (hasNull_) {
    c.validity = MakeBuffer(size_t(length_));
    std::memcpy(c.validity->data(), validity_.data(), size_t(length_));
  }
  return c;
}

Column Take(const Column& src, const int64_t* idx, int64_t n) {
  Column c;
  c.type = src.type;
  c.length = n;
  if (src.type == DType::String) {
    const int64_t* off = src.values<int64_t>();
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += off[idx[i] + 1] - off[idx[i]];
    c.data = MakeBuffer(size_t(n + 1) * 8);
    c.chars = MakeBuffer(size_t(total));
    int64_t* o = c.data->as<int64_t>();
    uint8_t* ch = c.chars->data();
    o[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t len = off[idx[i] + 1] - off[idx[i]];
      std::memcpy(ch + o[i], src.chars->data() + off[idx[i]], size_t(len));
      o[i + 1] = o[i] + len;
    }
  } else {
    size_t w = ElementSize(src.type);
    c.data = MakeBuffer(size_t(n) * w);
    uint8_t* d = c.data->data();
    const uint8_t* s = src.data->data();
    if (w == 8) {
      for (int64_t i = 0; i < n; i++) reinterpret_cast<int64_t*>(d)[i] = reinterpret_cast<const int64_t*>(s)[idx[i]];
    } else if (w == 4) {
      for (int64_t i = 0; i < n; i++) reinterpret_cast<int32_t*>(d)[i] = reinterpret_cast<const int32_t*>(s)[idx[i]];
    } else {
      for (int64_t i = 0; i < n; i++) d[i] = s[idx[i]];
    }
  }
  if (src.validity) {
    bool any = false;
    const uint8_t* v = src.validity->data();
    for (int64_t i = 0; i < n && !any; i++) any = v[idx[i]] == 0;
    if (any) {
      c.validity = MakeBuffer(size_t(n));
      uint8_t* out = c.validity->data();
      for (int64_t i = 0; i < n; i++) out[i] = v[idx[i]];
    }
  }
  return c;
}

Column Concat(const std::vector<const Column*>& parts) {
  Column c;
  if (parts.empty()) return c;
  c.type = parts[0]->type;
  int64_t n = 0, chars = 0;
  bool anyNull = false;
  for (auto* p : parts) {
    n += p->length;
    anyNull = anyNull || p->validity != nullptr;
    if (c.type == DType::String) chars += p->values<int64_t>()[p->length];
  }
  c.length = n;
  size_t w = ElementSize(c.type);
  if (c.type == DType::String) {
    c.data = MakeBufferNoInit(size_t(n + 1) * 8);
    c.chars = MakeBufferNoInit(size_t(chars));
    int64_t* o = c.data->as<int64_t>();
    o[0] = 0;
    int64_t row = 0, base = 0;
    for (auto* p : parts) {
      const int64_t* po = p->values<int64_t>();
      std::memcpy(c.chars->data() + base, p->chars->data(), size_t(po[p->length]));
      for (int64_t i = 0; i < p->length; i++) o[row + i + 1] = base + po[i + 1];
      row += p->length;
      base += po[p->length];
    }
  } else {
    c.data = MakeBufferNoInit(size_t(n) * w);
    size_t at = 0;
    for (auto* p : parts) {
      std::memcpy(c.data->data() + at, p->data->data(), size_t(p->length) * w);
      at += size_t(p->length) * w;
    }
  }
  if (anyNull) {
    c.validity = MakeBufferNoInit(size_t(n));
    size_t at = 0;
    for (auto* p : parts) {
      if (p->validity) std::memcpy(c.validity->data() + at, p->validity->data(), size_t(p->length));
      else std::memset(c.validity->data() + at, 1, size_t(p->length));
      at += size_t(p->length);
    }
  }
  return c;
}

// Rows [offset, offset+len) of one column: straight copies of each buffer's range
// (string offsets rebased to 0); the validity is dropped when the range has no null.
static Column SliceColumn(const Column& src, int64_t offset, int64_t len) {
  Column c;
  c.type = src.type;
  c.length = len;
  if (src.type == DType::String) {
    const int64_t* so = src.values<int64_t>() + offset;
    c.data = MakeBufferNoInit(size_t(len + 1) * 8);
    int64_t* o = c.data->as<int64_t>();
    for (int64_t i = 0; i <= len; i++) o[i] = so[i] - so[0];
    c.chars = MakeBufferNoInit(size_t(o[len]));
    std::memcpy(c.chars->data(), src.chars->data() + so[0], size_t(o[len]));
  } else {
    const size_t w = ElementSize(src.type);
    c.data = MakeBufferNoInit(size_t(len) * w);
    std::memcpy(c.data->data(), src.data->data() + size_t(offset) * w, size_t(len) * w);
  }
  if (src.validity && std::memchr(src.validity->data() + offset, 0, size_t(len)) != nullptr) {
    c.validity = MakeBufferNoInit(size_t(len));
    std::memcpy(c.validity->data(), src.validity->data() + offset, size_t(len));
  }
  return c;
}

TablePtr SliceTable(const Table& t, int64_t offset, int64_t len) {
  offset = std::max<int64_t>(0, std::min(offset, t.rows));
  len = std::max<int64_t>(0, std::min(len, t.rows - offset));
  auto out = std::make_shared<Table>();
  out->names = t.names;
  out->rows = len;
  for (auto& c : t.columns) out->columns.push_back(SliceColumn(c, offset, len));
  return out;
}

TablePtr ConcatTables(const std::vector<TablePtr>& parts) {
  if (parts.empty()) throw BasinError("BASIN_INTERNAL", "concat of zero tables");
  if (parts.size() == 1) return parts[0];
  const size_t ncols = parts[0]->columns.size();
  auto out = std::make_shared<Table>();
  out->names = parts[0]->names;
  int64_t bytes = 0;
  for (auto& p : parts) {
    out->rows += p->rows;
    if (p->columns.size() != ncols) throw BasinError("BASIN_INTERNAL", "concat of tables with different schemas");
    for (size_t c = 0; c < ncols; c++) {
      if (p->columns[c].type != parts[0]->columns[c].type) throw BasinError("BASIN_INTERNAL", "concat of tables with different schemas");
      for (const Buffer* b : {p->columns[c].data.get(), p->columns[c].chars.get(), p->columns[c].validity.get()})
        if (b) bytes += int64_t(b->size());
    }
  }
  out->columns.resize(ncols);
  auto concatColumn = [&](size_t c) {
    std::vector<const Column*> cols;
    for (auto& p : parts) cols.push_back(&p->columns[c]);
    out->columns[c] = Concat(cols);
  };
  const size_t threads = bytes < kParallelConcatBytes ? 1 : std::min<size_t>(ncols, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (size_t c = 0; c < ncols; c++) concatColumn(c);
    return out;
  }
  // Columns taken in turn by the threads, whose allocations spill as the caller's
  // would (the same store owner); the first error is rethrown here.
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  const uint32_t owner = Store::ThreadOwner();
  auto work = [&]() {
    Store::SetThreadOwner(owner);
    for (size_t c = next++; c < ncols; c = next++) {
      try {
        concatColumn(c);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; i++) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

TablePtr ShapeTable(const std::vector<std::string>& names, const std::vector<DType>& types, int64_t rows) {
  auto t = std::make_shared<Table>();
  t->names = names;
  t->rows = rows;
  for (DType type : types) {
    Column c;
    c.type = type;
    c.length = rows;
    t->columns.push_back(std::move(c));
  }
  return t;
}

}  // namespace basin
