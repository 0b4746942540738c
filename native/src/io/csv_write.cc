#include "io/csv_write.h"

#include "ops/civil_time.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace basin {

namespace {

constexpr size_t kPieceBytes = 4 << 20;

void Digits(std::string& out, int64_t v, int width) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  for (int pad = width - int(r.ptr - buf); pad > 0; pad--) out += '0';
  out.append(buf, r.ptr);
}

// As JS's Date#toISOString: four-digit years, else a sign and six digits.
void Date(std::string& out, int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y >= 0 && y <= 9999) {
    Digits(out, y, 4);
  } else {
    out += y < 0 ? '-' : '+';
    Digits(out, y < 0 ? -y : y, 6);
  }
  out += '-';
  Digits(out, m, 2);
  out += '-';
  Digits(out, d, 2);
}

void Timestamp(std::string& out, int64_t us) {
  const int64_t secs = FloorDiv(us, 1000000);
  const int64_t frac = us - secs * 1000000;
  const int64_t days = FloorDiv(secs, 86400);
  const int64_t sod = secs - days * 86400;
  Date(out, days);
  out += ' ';
  Digits(out, sod / 3600, 2);
  out += ':';
  Digits(out, sod / 60 % 60, 2);
  out += ':';
  Digits(out, sod % 60, 2);
  if (frac != 0) {
    out += '.';
    Digits(out, frac, 6);
  }
}

bool NeedsQuotes(std::string_view s) {
  for (char c : s)
    if (c == '"' || c == ',' || c == '\n' || c == '\r') return true;
  return false;
}

void Field(std::string& out, std::string_view s) {
  if (!NeedsQuotes(s)) {
    out.append(s);
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void Cell(std::string& out, const Column& c, int64_t r) {
  switch (c.type) {
    case DType::Int64: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof buf, c.values<int64_t>()[r]);
      out.append(buf, res.ptr);
      break;
    }
    case DType::Float64:
      FormatJsNumber(c.values<double>()[r], out);
      break;
    case DType::Bool:
      out += c.values<uint8_t>()[r] ? "true" : "false";
      break;
    case DType::Date:
      Date(out, c.values<int32_t>()[r]);
      break;
    case DType::Timestamp:
      Timestamp(out, c.values<int64_t>()[r]);
      break;
    case DType::String: {
      std::string_view s = c.str(r);
      if (s.empty())
        out += "\"\"";
      else
        Field(out, s);
      break;
    }
  }
}

}  // namespace

std::string IoWhy(int err) {
  return err == ENOSPC ? "no space left on the device" : err == EDQUOT ? "disk quota exceeded" : std::strerror(err);
}

namespace {

// Writes all of `data` at `offset`; returns 0 or the errno.
int WriteAt(int fd, const char* data, size_t n, int64_t offset) {
  while (n > 0) {
    ssize_t w = pwrite(fd, data, n, offset);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    data += w;
    n -= size_t(w);
    offset += w;
  }
  return 0;
}

std::mutex sinksMu;
std::unordered_map<int64_t, std::shared_ptr<PartSink>> sinks;
int64_t nextSink = 1;

}  // namespace

void Gather::copyTo(uint8_t* out) const {
  for (const Segment& s : segments) {
    std::memcpy(out, s.view ? s.view : reinterpret_cast<const uint8_t*>(own.data()) + s.at, s.length);
    out += s.length;
  }
}

int WriteGatherAt(int fd, const Gather& g, int64_t offset) {
  std::vector<iovec> iov;
  iov.reserve(g.segments.size());
  for (const Gather::Segment& s : g.segments)
    if (s.length > 0)
      iov.push_back({const_cast<char*>(s.view ? reinterpret_cast<const char*>(s.view) : g.own.data() + s.at), s.length});
  size_t i = 0;
  while (i < iov.size()) {
    const int n = int(std::min<size_t>(iov.size() - i, IOV_MAX));
    ssize_t w = pwritev(fd, iov.data() + i, n, offset);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    offset += w;
    // Past the segments written whole, into the one written in part.
    while (i < iov.size() && size_t(w) >= iov[i].iov_len) w -= ssize_t(iov[i++].iov_len);
    if (i < iov.size()) {
      iov[i].iov_base = static_cast<char*>(iov[i].iov_base) + w;
      iov[i].iov_len -= size_t(w);
    }
  }
  return 0;
}

void FormatJsNumber(double x, std::string& out) {
  if (std::isnan(x)) {
    out += "NaN";
    return;
  }
  if (std::isinf(x)) {
    out += x < 0 ? "-Infinity" : "Infinity";
    return;
  }
  if (x == 0) {  // -0 too, as String(-0)
    out += '0';
    return;
  }
  // The shortest round-trip digits and the exponent, laid out by ECMAScript's Number::toString.
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const char* p = buf;
  if (*p == '-') {
    out += '-';
    p++;
  }
  char digits[24];
  int k = 0;
  digits[k++] = *p++;
  if (*p == '.')
    for (p++; *p != 'e'; p++) digits[k++] = *p;
  p++;  // 'e'
  bool negExp = *p == '-';
  p++;  // sign
  int e = 0;
  std::from_chars(p, res.ptr, e);
  const int n = (negExp ? -e : e) + 1;
  if (k <= n && n <= 21) {
    out.append(digits, k);
    out.append(size_t(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, n);
    out += '.';
    out.append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(size_t(-n), '0');
    out.append(digits, k);
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits + 1, k - 1);
    }
    out += 'e';
    out += n - 1 < 0 ? '-' : '+';
    Digits(out, std::abs(n - 1), 1);
  }
}

void FormatCsvRows(const Table& t, int64_t from, int64_t to, std::string& out) {
  const size_t ncols = t.columns.size();
  for (int64_t r = from; r < to; r++) {
    for (size_t c = 0; c < ncols; c++) {
      if (c > 0) out += ',';
      const Column& col = t.columns[c];
      if (col.valid(r)) Cell(out, col, r);
    }
    out += '\n';
  }
}

namespace {

// `n` bytes that `fill` writes as a one-row string table in the store (claimed: no
// worker's task owns it). `fill` runs before the table enters the store.
template <typename Fill> uint64_t StoreBytes(size_t n, Fill fill) {
  auto t = std::make_shared<Table>();
  Column c;
  c.type = DType::String;
  c.length = 1;
  c.data = MakeBufferNoInit(16);
  c.data->as<int64_t>()[0] = 0;
  c.data->as<int64_t>()[1] = int64_t(n);
  c.chars = MakeBufferNoInit(n);
  fill(c.chars->data());
  t->names = {"piece"};
  t->columns.push_back(std::move(c));
  t->rows = 1;
  const uint64_t h = Store::Instance().put(std::move(t));
  Store::Instance().claim(h);
  return h;
}

}  // namespace

PartSink::~PartSink() {
  dropPending();
  close(fd_);
}

void PartSink::dropPending() {
  for (auto& [part, p] : pending_)
    for (const Piece& piece : p.pieces)
      if (piece.stored != 0) Store::Instance().release(piece.stored);
  pending_.clear();
  pendingBytes_ = 0;
}

void PartSink::appendPart(int64_t part, std::string piece, bool last) {
  Piece p;
  p.size = int64_t(piece.size());
  p.bytes = std::move(piece);
  append(part, std::move(p), last);
}

void PartSink::appendPart(int64_t part, Gather piece, bool last) {
  Piece p;
  p.size = int64_t(piece.size);
  p.gather = std::move(piece);
  append(part, std::move(p), last);
}

void PartSink::append(int64_t part, Piece waiting, bool last) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!error_.empty()) throw BasinError("BASIN_IO", error_);
    if (part <= next_) return add(part, std::move(waiting), last, lock);
  }
  // Ahead of its turn: into the store (outside the lock: putting it may spill).
  if (waiting.size > 0) {
    // Copied, then freed before the store may spill to make room for the copy.
    waiting.stored = StoreBytes(size_t(waiting.size), [&](uint8_t* out) {
      if (!waiting.gather.segments.empty())
        waiting.gather.copyTo(out);
      else
        std::memcpy(out, waiting.bytes.data(), waiting.bytes.size());
      std::string().swap(waiting.bytes);  // ("" would keep the capacity)
      waiting.gather = Gather();          // the table's buffers are no longer held
    });
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!error_.empty()) {
    if (waiting.stored != 0) Store::Instance().release(waiting.stored);
    throw BasinError("BASIN_IO", error_);
  }
  add(part, std::move(waiting), last, lock);
}

void PartSink::add(int64_t part, Piece piece, bool last, std::unique_lock<std::mutex>& lock) {
  Pending& p = pending_[part];
  if (piece.size > 0) {
    pendingBytes_ += piece.size;
    p.pieces.push_back(std::move(piece));
  }
  if (last) p.done = true;
  if (writing_) return;  // the thread writing now takes this piece too when its turn comes
  writing_ = true;
  drain(lock);
}

void PartSink::fail(const std::string& why) {
  error_ = why;
  dropPending();
  writing_ = false;
  throw BasinError("BASIN_IO", error_);
}

void PartSink::drain(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    auto it = pending_.find(next_);
    if (it == pending_.end()) break;
    if (it->second.pieces.empty()) {
      if (!it->second.done) break;
      pending_.erase(it);
      next_++;
      starts_[next_] = offset_;
      continue;
    }
    std::vector<Piece> pieces = std::move(it->second.pieces);
    it->second.pieces.clear();
    int64_t at = offset_, bytes = 0;
    for (const Piece& s : pieces) bytes += s.size;
    offset_ += bytes;
    lock.unlock();
    int err = 0;
    std::string why;
    for (Piece& s : pieces) {
      if (err == 0 && why.empty()) {
        if (s.stored != 0) {
          try {
            // Read back (from disk when it spilled) while the table is held.
            TablePtr t = Store::Instance().get(s.stored);
            err = WriteAt(fd_, reinterpret_cast<const char*>(t->columns[0].chars->data()), size_t(s.size), at);
          } catch (const std::exception& e) {  // BASIN_SPILL (the file damaged or gone), out of memory
            why = e.what();
          }
        } else if (!s.gather.segments.empty()) {
          err = WriteGatherAt(fd_, s.gather, at);
        } else {
          err = WriteAt(fd_, s.bytes.data(), s.bytes.size(), at);
        }
        at += s.size;
      }
      if (s.stored != 0) Store::Instance().release(s.stored);
      s = Piece();
    }
    lock.lock();
    pendingBytes_ -= bytes;
    if (err != 0) fail("cannot write the file: " + IoWhy(err));
    if (!why.empty()) fail("cannot write the file: " + why);
    written_ = offset_;
  }
  writing_ = false;
}

void PartSink::setTrailer(int64_t part, std::string bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  trailers_[part] = std::move(bytes);
}

std::vector<std::pair<int64_t, std::string>> PartSink::trailers() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<int64_t, std::string>> out;
  for (int64_t p = 0; p < next_; p++) {
    auto t = trailers_.find(p);
    out.emplace_back(starts_[p], t == trailers_.end() ? std::string() : t->second);
  }
  return out;
}

PartSink::Status PartSink::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return {next_, written_, pendingBytes_, error_};
}

int64_t OpenSink(int fd, int64_t offset) {
  std::lock_guard<std::mutex> lock(sinksMu);
  int64_t id = nextSink++;
  sinks[id] = std::make_shared<PartSink>(fd, offset);
  return id;
}

std::shared_ptr<PartSink> GetSink(int64_t id) {
  std::lock_guard<std::mutex> lock(sinksMu);
  auto it = sinks.find(id);
  if (it == sinks.end()) throw BasinError("BASIN_IO", "the file being written was closed (the write was cancelled)");
  return it->second;
}

PartSink::Status CloseSink(int64_t id) {
  std::shared_ptr<PartSink> s;
  {
    std::lock_guard<std::mutex> lock(sinksMu);
    auto it = sinks.find(id);
    if (it == sinks.end()) return {0, 0, 0, "unknown sink"};
    s = it->second;
    sinks.erase(it);
  }
  return s->status();
}

void WriteCsvPart(PartSink& sink, int64_t part, const Table& t) {
  std::string out;
  int64_t r = 0;
  // Rows per step: about kPieceBytes of text, guessed from the first rows.
  int64_t step = 4096;
  do {
    out.reserve(kPieceBytes + (1 << 16));
    while (r < t.rows && out.size() < kPieceBytes) {
      int64_t to = std::min(t.rows, r + step);
      FormatCsvRows(t, r, to, out);
      r = to;
    }
    bool last = r >= t.rows;
    sink.appendPart(part, std::move(out), last);
    out = std::string();
    if (last) break;
  } while (true);
}

int64_t WriteCsvFile(const std::string& path, const Table& t, bool header) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw BasinError("BASIN_IO", "cannot write " + path + ": " + IoWhy(errno));
  std::string out;
  if (header) {
    for (size_t c = 0; c < t.names.size(); c++) {
      if (c > 0) out += ',';
      Field(out, t.names[c]);
    }
    out += '\n';
  }
  int64_t at = 0;
  int err = 0;
  int64_t r = 0;
  do {
    int64_t to = std::min(t.rows, r + 4096);
    FormatCsvRows(t, r, to, out);
    r = to;
    if (out.size() >= kPieceBytes || r >= t.rows) {
      if ((err = WriteAt(fd, out.data(), out.size(), at)) != 0) break;
      at += int64_t(out.size());
      out.clear();
    }
  } while (r < t.rows);
  if (err == 0 && close(fd) != 0) err = errno;
  else if (err != 0) close(fd);
  if (err != 0) {
    unlink(path.c_str());
    throw BasinError("BASIN_IO", "cannot write " + path + ": " + IoWhy(err));
  }
  return at;
}

}  // namespace basin
