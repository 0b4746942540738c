#include "spill_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

namespace basin {

namespace {

constexpr char kMagic[8] = {'B', 'A', 'S', 'I', 'N', 'S', 'P', '1'};
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
  int64_t finish() {
    FILE* f = f_.release();
    int a = std::fflush(f) == 0 ? 0 : errno;
    int b = std::fclose(f) == 0 ? 0 : errno;
    if (a || b) Fail("cannot write", path_, a ? a : b);
    return written_;
  }

 private:
  std::string path_;
  File f_;
  int64_t written_ = 0;
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
  BufferPtr buffer(size_t n) {
    BufferPtr b = MakeBuffer(n);
    get(b->data(), n);
    return b;
  }

 private:
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

int64_t WriteSpillFile(const std::string& path, const Table& t) {
  try {
    Writer w(path);
    w.put(kMagic, sizeof kMagic);
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
        if (b) {
          w.put<int64_t>(int64_t(b->size()));
          w.put(b->data(), b->size());
        }
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
    if (flags & kHasData) c.data = r.buffer(size_t(r.get<int64_t>()));
    if (flags & kHasChars) c.chars = r.buffer(size_t(r.get<int64_t>()));
    if (flags & kHasValidity) c.validity = r.buffer(size_t(r.get<int64_t>()));
    t->names.push_back(std::move(name));
    t->columns.push_back(std::move(c));
  }
  return t;
}

}  // namespace basin
