// CSV kernel. One quote-aware row parser (ParseRow) is shared by inference and scanning;
// the splitter is a separate memchr-driven state machine that agrees with it on what a
// quoted field is: a '"' opens a quoted field only at the start of a field, `""` inside
// quotes is a literal quote, and anything else is literal data.
#include "io/csv.h"
#include "io/utf8.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <tuple>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace basin {
namespace {

// ---------------------------------------------------------------------------------------
// Files

class File {
 public:
  explicit File(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      int err = errno;
      if (err == ENOENT || err == ENOTDIR)
        throw BasinError("BASIN_IO", path + ": no such file (check the path or glob)");
      if (err == EACCES) throw BasinError("BASIN_IO", path + ": permission denied (check the file's permissions)");
      throw BasinError("BASIN_IO", path + ": cannot open: " + std::strerror(err));
    }
    struct stat st;
    if (::fstat(fd_, &st) != 0) {
      int err = errno;
      ::close(fd_);
      throw BasinError("BASIN_IO", path + ": cannot stat: " + std::strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd_);
      throw BasinError("BASIN_IO", path + ": is a directory, not a CSV file (check the path or glob)");
    }
    size_ = int64_t(st.st_size);
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  int64_t size() const { return size_; }
  int fd() const { return fd_; }

  // Reads up to `n` bytes at `off`; returns the count read (less only at end of file).
  size_t readAt(char* dst, size_t n, int64_t off) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, dst + done, n - done, off_t(off + int64_t(done)));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw BasinError("BASIN_IO", path_ + ": cannot read: " + std::strerror(errno));
      }
      if (r == 0) break;
      done += size_t(r);
    }
    return done;
  }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// A malloc'ed byte buffer (no zero-fill: it is overwritten by reads straight away), with
// kPad zeroed bytes after the end so that vector loads near the end (up to 64 bytes, see
// ParseRowFast) stay in bounds.
constexpr size_t kPad = 64;
struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char, FreeDeleter>;
Bytes AllocBytes(size_t n) {
  Bytes b(static_cast<char*>(std::malloc(n + kPad)));
  if (!b) throw std::bad_alloc();
  std::memset(b.get() + n, 0, kPad);
  return b;
}

// The bytes [start, end) of a file, with kPad readable bytes after them: mapped
// (MAP_POPULATE: the page cache's pages, no copy and no fresh zeroed memory) where the
// file's last page leaves kPad bytes after `end`, else read into a malloc'ed buffer.
// (As with any mmap, a file truncated during the scan faults; the block is read at once.)
class FileRange {
 public:
  FileRange(File& f, const std::string& path, int64_t start, int64_t end) {
    const size_t n = size_t(end - start);
    const int64_t page = int64_t(::sysconf(_SC_PAGESIZE));
    const int64_t mapEnd = (f.size() + page - 1) / page * page;  // reading up to here is safe
    if (n >= (size_t(1) << 20) && end + int64_t(kPad) <= mapEnd) {
      const int64_t base = start / page * page;
      len_ = size_t(end + int64_t(kPad) - base);
      void* m = ::mmap(nullptr, len_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, f.fd(), off_t(base));
      if (m != MAP_FAILED) {
        map_ = m;
        data_ = static_cast<const char*>(m) + (start - base);
        return;
      }
    }
    buf_ = AllocBytes(n);
    if (f.readAt(buf_.get(), n, start) != n)
      throw BasinError("BASIN_IO", path + ": file changed while reading (it is shorter than expected)");
    data_ = buf_.get();
  }
  ~FileRange() {
    if (map_) ::munmap(map_, len_);
  }
  FileRange(const FileRange&) = delete;
  FileRange& operator=(const FileRange&) = delete;
  const char* data() const { return data_; }

 private:
  void* map_ = nullptr;
  size_t len_ = 0;
  Bytes buf_;
  const char* data_ = nullptr;
};

bool HasBom(const char* b, size_t n) {
  return n >= 3 && uint8_t(b[0]) == 0xEF && uint8_t(b[1]) == 0xBB && uint8_t(b[2]) == 0xBF;
}

// Newlines in [b, e): SSE2 compares summed into byte counters, folded every 255 blocks
// (one pass at memory speed; a memchr call per newline costs a call per row).
int64_t CountNewlines(const char* b, const char* e) {
  int64_t n = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
  while (e - b >= 16) {
    __m128i acc = zero;
    for (int i = 0; i < 255 && e - b >= 16; i++, b += 16)
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), nl));
    const __m128i sums = _mm_sad_epu8(acc, zero);
    n += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
  }
#endif
  for (; b < e; b++) n += *b == '\n';
  return n;
}

// ---------------------------------------------------------------------------------------
// Rows

enum FieldKind : uint8_t {
  kPlain = 0,   // [b, e) is the value
  kQuoted = 1,  // [b, e) is the value, inside quotes (b - 1 is the opening quote)
  kSlow = 2,    // [b, e) is the raw text incl. quotes; needs DecodeSlow (`""` or text after the quote)
};

struct RawField {
  const char* b;
  const char* e;
  FieldKind kind;
  const char* start() const { return kind == kQuoted ? b - 1 : b; }
};

struct RowInfo {
  size_t count = 0;         // fields in the row (may exceed the stored maximum)
  bool terminated = false;  // ended with a newline (else ran to the end of the buffer)
  const char* unclosed = nullptr;  // the opening quote of a field that never closes
  const char* afterQuote = nullptr;  // text after a closing quote (RFC 4180 allows none)
  const char* strayCr = nullptr;     // a '\r' inside an unquoted field (other readers end the line there)
};

// The first delimiter or '\n' in [p, e), or e. Reads up to 15 bytes past e (see kPad).
inline const char* FindFieldEnd(const char* p, const char* e, char delim) {
#if defined(__SSE2__)
  const __m128i d = _mm_set1_epi8(delim), nl = _mm_set1_epi8('\n');
  while (p < e) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    unsigned m = unsigned(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, d), _mm_cmpeq_epi8(v, nl))));
    if (m) {
      p += __builtin_ctz(m);
      return p < e ? p : e;
    }
    p += 16;
  }
  return e;
#else
  while (p < e && *p != delim && *p != '\n') p++;
  return p;
#endif
}

// Parses one non-blank row at p (< e). Stores the first `maxFields` fields.
// Returns the position after the row's newline (or e).
inline const char* ParseRow(const char* p, const char* e, char delim, RawField* fields, size_t maxFields,
                            RowInfo* info) {
  size_t n = 0;
  info->terminated = false;
  info->unclosed = nullptr;
  info->afterQuote = nullptr;
  info->strayCr = nullptr;
  for (;;) {
    const char* fb = p;
    RawField f;
    if (p < e && *p == '"') {
      const char* q = p + 1;
      bool esc = false;
      const char* close = nullptr;
      for (;;) {
        const void* r = std::memchr(q, '"', size_t(e - q));
        if (!r) break;
        const char* rq = static_cast<const char*>(r);
        if (rq + 1 < e && rq[1] == '"') {
          esc = true;
          q = rq + 2;
          continue;
        }
        close = rq;
        break;
      }
      if (!close) {
        info->unclosed = fb;
        f = RawField{fb, e, kSlow};
        if (n < maxFields) fields[n] = f;
        info->count = n + 1;
        return e;
      }
      p = close + 1;
      if (p < e && *p != delim && *p != '\n' && !(*p == '\r' && (p + 1 == e || p[1] == '\n'))) {
        // Text after the closing quote: the field is damaged (the scan reports it).
        if (!info->afterQuote) info->afterQuote = p;
        while (p < e && *p != delim && *p != '\n') p++;
        const char* fe = p;
        if (fe > close + 1 && fe[-1] == '\r' && (p == e || *p == '\n')) fe--;
        f = RawField{fb, fe, kSlow};
      } else {
        f = esc ? RawField{fb, p, kSlow} : RawField{fb + 1, close, kQuoted};
        if (p < e && *p == '\r') p++;
      }
    } else {
      p = FindFieldEnd(p, e, delim);
      const char* fe = p;
      if (fe > fb && fe[-1] == '\r' && (p == e || *p == '\n')) fe--;
      if (!info->strayCr && fe > fb)
        info->strayCr = static_cast<const char*>(std::memchr(fb, '\r', size_t(fe - fb)));
      f = RawField{fb, fe, kPlain};
    }
    if (n < maxFields) fields[n] = f;
    n++;
    if (p >= e) {
      info->count = n;
      return e;
    }
    if (*p == delim) {
      p++;
      continue;
    }
    // *p == '\n'
    info->count = n;
    info->terminated = true;
    return p + 1;
  }
}

#if defined(__SSE2__)
// Bit i set where w[i] equals c, for the 64 bytes at w.
inline uint64_t Mask64(const char* w, __m128i c) {
  uint64_t m = 0;
  for (int k = 0; k < 4; k++) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16 * k));
    m |= uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c)))) << (16 * k);
  }
  return m;
}
#endif

// ParseRow for the common row: no quote and no '\r' before its newline. Finds every
// field end of 64 bytes at once (bit masks of delimiters and newlines) instead of one
// field at a time. Returns nullptr, having stored nothing that matters, for any other
// row (ParseRow then parses it). Reads up to 63 bytes past e (see kPad).
inline const char* ParseRowFast(const char* p, const char* e, char delim, RawField* fields, size_t maxFields,
                                RowInfo* info) {
#if defined(__SSE2__)
  const __m128i d = _mm_set1_epi8(delim), nl = _mm_set1_epi8('\n'), qt = _mm_set1_epi8('"'),
                cr = _mm_set1_epi8('\r');
  size_t n = 0;
  const char* fb = p;
  for (const char* w = p; w < e; w += 64) {
    uint64_t valid = e - w >= 64 ? ~uint64_t(0) : (uint64_t(1) << (e - w)) - 1;
    uint64_t nlm = Mask64(w, nl) & valid;
    uint64_t ends = (Mask64(w, d) & valid) | nlm;
    uint64_t odd = (Mask64(w, qt) | Mask64(w, cr)) & valid;
    if (nlm) {
      const uint64_t row = nlm & (0 - nlm);  // the row's newline
      if (odd & ((row << 1) - 1)) return nullptr;
      ends &= (row << 1) - 1;
    } else if (odd) {
      return nullptr;
    }
    while (ends) {
      const int i = __builtin_ctzll(ends);
      ends &= ends - 1;
      if (n < maxFields) fields[n] = RawField{fb, w + i, kPlain};
      n++;
      fb = w + i + 1;
      if (w[i] == '\n') {
        info->count = n;
        info->terminated = true;
        info->unclosed = nullptr;
        return fb;
      }
    }
  }
  // The buffer ends inside the row: its last field runs to e.
  if (n < maxFields) fields[n] = RawField{fb, e, kPlain};
  info->count = n + 1;
  info->terminated = false;
  info->unclosed = nullptr;
  return e;
#else
  (void)p, (void)e, (void)delim, (void)fields, (void)maxFields, (void)info;
  return nullptr;
#endif
}

// Skips blank lines ("\n", "\r\n", a lone "\r" at the end). Returns the next row start or e.
inline const char* SkipBlank(const char* p, const char* e) {
  for (;;) {
    if (p < e && *p == '\n') {
      p++;
    } else if (p < e && *p == '\r' && (p + 1 == e || p[1] == '\n')) {
      p += p + 1 == e ? 1 : 2;
    } else {
      return p;
    }
  }
}

// Unquotes a kSlow field into `out`.
void DecodeSlow(const char* b, const char* e, std::string& out) {
  out.clear();
  const char* p = b;
  if (p < e && *p == '"') {
    p++;
    while (p < e) {
      if (*p == '"') {
        if (p + 1 < e && p[1] == '"') {
          out.push_back('"');
          p += 2;
          continue;
        }
        p++;
        break;
      }
      out.push_back(*p++);
    }
  }
  out.append(p, size_t(e - p));
}

inline std::string_view FieldText(const RawField& f, std::string& scratch) {
  if (f.kind == kSlow) {
    DecodeSlow(f.b, f.e, scratch);
    return scratch;
  }
  return std::string_view(f.b, size_t(f.e - f.b));
}

class NullSet {
 public:
  explicit NullSet(const std::vector<std::string>& values) {
    for (const auto& v : values) {
      if (v.empty()) empty_ = true;
      else others_.push_back(v);
    }
  }
  bool operator()(std::string_view s) const {
    if (s.empty()) return empty_;
    for (const auto& o : others_)
      if (s == o) return true;
    return false;
  }

 private:
  bool empty_ = false;
  std::vector<std::string> others_;
};

// Whether every byte is ASCII (Latin-1 text with none above 0x7F is already UTF-8).
bool AllAsciiBytes(const uint8_t* p, size_t n) {
  uint8_t any = 0;
  for (size_t i = 0; i < n; i++) any |= p[i];
  return (any & 0x80) == 0;
}

// The error for a byte that is not UTF-8, at `where` (file:line:col).
BasinError InvalidUtf8(const std::string& where, const char* at) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", unsigned(uint8_t(*at)));
  return BasinError("BASIN_PARSE", where + ": byte " + hex +
                                       " is not valid UTF-8; if the file is Latin-1 pass encoding: \"latin1\", or "
                                       "encoding: \"replace\" to read bad bytes as U+FFFD");
}


// The bytes [b, b+n) as the parser reads them: UTF-8 as they are (*bad is then the
// offset of the first invalid byte, or n), or transcoded as `enc` says; and, in a range
// that starts the file and has no '\n' at all, classic-Mac line ends ('\r' alone) read
// as '\n'. Returns b itself when nothing changes, else a padded copy held by `storage`.
std::pair<const char*, size_t> PrepareText(const char* b, size_t n, bool fileStart, CsvEncoding enc, Bytes* storage,
                                           size_t* bad) {
  *bad = n;
  const bool crOnly = fileStart && !std::memchr(b, '\n', n) && std::memchr(b, '\r', n);
  const auto* u = reinterpret_cast<const uint8_t*>(b);
  std::string changed;
  if (enc == CsvEncoding::Utf8) {
    *bad = FirstInvalidUtf8(u, n);
  } else if (FirstInvalidUtf8(u, n) < n || (enc == CsvEncoding::Latin1 && !AllAsciiBytes(u, n))) {
    changed = enc == CsvEncoding::Latin1 ? Latin1ToUtf8(b, n) : ReplaceInvalidUtf8(b, n);
  }
  if (!crOnly && changed.empty()) return {b, n};
  if (changed.empty()) changed.assign(b, n);
  if (crOnly) std::replace(changed.begin(), changed.end(), '\r', '\n');
  *storage = AllocBytes(changed.size());
  std::memcpy(storage->get(), changed.data(), changed.size());
  if (enc != CsvEncoding::Utf8) *bad = changed.size();  // transcoded: nothing left to report
  return {storage->get(), changed.size()};
}

// 1-based line and byte column of `pos` in a buffer whose first byte is at line `line0`.
// `lineStart0` is where the first line's columns start counting (after a BOM).
std::pair<int64_t, int64_t> LineCol(const char* buf, const char* lineStart0, const char* pos, int64_t line0) {
  int64_t line = line0 + CountNewlines(buf, pos);
  const char* ls = lineStart0;
  for (const char* q = pos; q > buf; q--) {
    if (q[-1] == '\n') {
      ls = q;
      break;
    }
  }
  if (ls > pos) ls = pos;
  return {line, int64_t(pos - ls) + 1};
}

// The first `n` UTF-8 characters of s.
std::string Truncate(std::string_view s, size_t n) {
  size_t i = 0, chars = 0;
  while (i < s.size() && chars < n) {
    i++;
    while (i < s.size() && (uint8_t(s[i]) & 0xC0) == 0x80) i++;
    chars++;
  }
  return std::string(s.substr(0, i));
}

bool EqualsIgnoreCase(std::string_view s, const char* lit) {
  size_t n = std::strlen(lit);
  if (s.size() != n) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != lit[i]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Values

inline int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = unsigned(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + int64_t(doe) - 719468;
}

inline bool Digits(const char* p, int n, unsigned* out) {
  unsigned v = 0;
  for (int i = 0; i < n; i++) {
    unsigned d = unsigned(uint8_t(p[i])) - '0';
    if (d > 9) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

inline bool ParseYmd(const char* p, int64_t* days) {
  unsigned y, m, d;
  if (!Digits(p, 4, &y) || p[4] != '-' || !Digits(p + 5, 2, &m) || p[7] != '-' || !Digits(p + 8, 2, &d))
    return false;
  if (m < 1 || m > 12 || d < 1) return false;
  static const unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  unsigned dim = kDays[m - 1];
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) dim = 29;
  if (d > dim) return false;
  *days = DaysFromCivil(int64_t(y), m, d);
  return true;
}

enum Candidate : unsigned { kCInt = 1, kCFloat = 2, kCBool = 4, kCDate = 8, kCTs = 16, kCAll = 31 };

inline bool ParseInt64(const char* b, const char* e, int64_t* out) {
  if (b == e) return false;
  bool neg = false;
  if (*b == '+' || *b == '-') {
    neg = *b == '-';
    b++;
    if (b == e) return false;
  }
  uint64_t v = 0;
  if (e - b <= 18) {
    for (const char* p = b; p < e; p++) {
      unsigned d = unsigned(uint8_t(*p)) - '0';
      if (d > 9) return false;
      v = v * 10 + d;
    }
  } else {
    for (const char* p = b; p < e; p++) {
      unsigned d = unsigned(uint8_t(*p)) - '0';
      if (d > 9) return false;
      if (__builtin_mul_overflow(v, uint64_t(10), &v) || __builtin_add_overflow(v, uint64_t(d), &v)) return false;
    }
    if (v > (neg ? uint64_t(1) << 63 : (uint64_t(1) << 63) - 1)) return false;
  }
  *out = neg ? int64_t(0 - v) : int64_t(v);
  return true;
}

// Clinger's fast path: "[-]digits[.digits]" with at most 15 significant digits and at
// most 22 decimals is m / 10^k with m and 10^k exact doubles, and one IEEE division
// rounds correctly. False (nothing stored) for anything else.
inline bool ParseSimpleDecimal(const char* b, const char* e, double* out) {
  static const double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = b;
  const bool neg = p < e && *p == '-';
  if (neg) p++;
  if (p == e || e - p > 16) return false;
  uint64_t m = 0;
  int digits = 0, frac = -1;
  for (; p < e; p++) {
    unsigned c = unsigned(uint8_t(*p)) - '0';
    if (c <= 9) {
      m = m * 10 + c;
      digits++;
      if (frac >= 0) frac++;
    } else if (*p == '.' && frac < 0) {
      frac = 0;
    } else {
      return false;
    }
  }
  if (digits == 0 || digits > 15 || frac == 0) return false;  // "1." goes the long way
  double v = double(m);
  if (frac > 0) v /= kPow10[frac];
  *out = neg ? -v : v;
  return true;
}

inline bool ParseFloat64(const char* b, const char* e, double* out) {
  if (b == e) return false;
  if (ParseSimpleDecimal(b, e, out)) return true;
  const char* p = b;
  if (*p == '+') {
    p++;
    if (p == e || *p == '-' || *p == '+') return false;
  }
  auto r = std::from_chars(p, e, *out);
  if (r.ptr != e) return false;
  if (r.ec == std::errc()) return true;
  if (r.ec != std::errc::result_out_of_range) return false;
  // Out of range: strtod semantics (±HUGE_VAL, or a denormal/zero).
  std::string tmp(b, size_t(e - b));
  *out = std::strtod(tmp.c_str(), nullptr);
  return true;
}

inline bool ParseDate(const char* b, const char* e, int32_t* days) {
  if (e - b != 10) return false;
  int64_t d;
  if (!ParseYmd(b, &d)) return false;
  *days = int32_t(d);
  return true;
}

inline bool ParseTimestamp(const char* b, const char* e, bool allowDateOnly, int64_t* micros) {
  int64_t n = e - b;
  if (n < 10) return false;
  int64_t days;
  if (!ParseYmd(b, &days)) return false;
  if (n == 10) {
    if (!allowDateOnly) return false;
    *micros = days * 86400000000LL;
    return true;
  }
  if (n < 19 || (b[10] != 'T' && b[10] != ' ')) return false;
  const char* t = b + 11;
  unsigned hh, mm, ss;
  if (!Digits(t, 2, &hh) || t[2] != ':' || !Digits(t + 3, 2, &mm) || t[5] != ':' || !Digits(t + 6, 2, &ss))
    return false;
  if (hh > 23 || mm > 59 || ss > 59) return false;
  const char* p = b + 19;
  int64_t frac = 0;
  if (p < e && *p == '.') {
    p++;
    int nd = 0;
    while (p < e && unsigned(uint8_t(*p)) - '0' <= 9) {
      if (nd < 6) frac = frac * 10 + (*p - '0');
      nd++;
      p++;
    }
    if (nd < 1 || nd > 9) return false;
    for (int i = nd; i < 6; i++) frac *= 10;
  }
  if (p < e && *p == 'Z') p++;
  if (p != e) return false;
  *micros = days * 86400000000LL + (int64_t(hh) * 3600 + int64_t(mm) * 60 + int64_t(ss)) * 1000000LL + frac;
  return true;
}

}  // namespace

bool CsvParseInt64(const char* b, const char* e, int64_t* out) { return ParseInt64(b, e, out); }
bool CsvParseFloat64(const char* b, const char* e, double* out) { return ParseFloat64(b, e, out); }
bool CsvParseDate(const char* b, const char* e, int32_t* days) { return ParseDate(b, e, days); }
int64_t CsvDaysFromCivil(int64_t y, unsigned m, unsigned d) { return DaysFromCivil(y, m, d); }
bool CsvParseTimestamp(const char* b, const char* e, bool allowDateOnly, int64_t* micros) {
  return ParseTimestamp(b, e, allowDateOnly, micros);
}

// ---------------------------------------------------------------------------------------
// Split

std::vector<CsvBlock> CsvSplit(const std::string& path, int64_t blocksize, const CsvOptions& opts) {
  File f(path);
  const int64_t size = f.size();
  if (blocksize < 1) blocksize = 1;
  const char delim = opts.delimiter;
  std::vector<CsvBlock> out;
  const size_t kChunk = size_t(4) << 20;
  Bytes buf = AllocBytes(std::min<int64_t>(int64_t(kChunk), std::max<int64_t>(size, 1)));

  int64_t blockStart = 0, blockLine = 1, line = 1;
  bool inQuote = false, pendingQuote = false;
  char lastByte = '\n';  // the byte before the current chunk
  for (int64_t off = 0; off < size;) {
    size_t want = size_t(std::min<int64_t>(int64_t(kChunk), size - off));
    size_t n = f.readAt(buf.get(), want, off);
    if (n == 0) break;  // the file shrank under us; split what was read
    const char* b = buf.get();
    const char* e = b + n;
    const char* p = b;
    const char* contentStart = nullptr;
    if (off == 0) {
      if (HasBom(b, n)) p += 3;
      contentStart = p;
    }
    if (pendingQuote) {
      pendingQuote = false;
      if (*p == '"') p++;  // `""` split across chunks: still quoted
      else inQuote = false;
    }
    const char* qt = p - 1;  // cached next '"' at or after p (e when none)
    while (p < e) {
      if (inQuote) {
        const void* r = std::memchr(p, '"', size_t(e - p));
        const char* q = r ? static_cast<const char*>(r) : e;
        line += CountNewlines(p, q);
        if (!r) {
          p = e;
          break;
        }
        if (q + 1 == e) {
          pendingQuote = true;
          p = e;
          break;
        }
        if (q[1] == '"') {
          p = q + 2;
          continue;
        }
        inQuote = false;
        p = q + 1;
        continue;
      }
      if (qt < p) {
        const void* r = std::memchr(p, '"', size_t(e - p));
        qt = r ? static_cast<const char*>(r) : e;
      }
      // Outside quotes up to qt: only the first newline at or after the one that would
      // end a block of `blocksize` bytes matters; the ones before it are only counted.
      const int64_t firstEnd = blockStart + blocksize - 1 - off;  // a newline here ends the block
      const char* from = firstEnd <= p - b ? p : (firstEnd < qt - b ? b + firstEnd : qt);
      line += CountNewlines(p, from);
      p = from;
      if (p < qt) {
        const void* r = std::memchr(p, '\n', size_t(qt - p));
        if (r) {
          line++;
          p = static_cast<const char*>(r) + 1;
          const int64_t pos = off + int64_t(p - b);
          out.push_back(CsvBlock{blockStart, pos, blockLine});
          blockStart = pos;
          blockLine = line;
          continue;
        }
        p = qt;  // no newline before the quote
      }
      if (qt == e) {
        p = e;
        break;
      }
      char before = qt > b ? qt[-1] : lastByte;
      if (qt == contentStart || before == delim || before == '\n') inQuote = true;
      p = qt + 1;
    }
    lastByte = e[-1];
    off += int64_t(n);
  }
  if (out.empty() || blockStart < size) out.push_back(CsvBlock{blockStart, size, blockLine});
  return out;
}

// ---------------------------------------------------------------------------------------
// Infer

CsvSchema CsvInfer(const std::string& path, const CsvOptions& opts, int64_t sampleBytes) {
  File f(path);
  const int64_t size = f.size();
  CsvSchema schema;
  if (size == 0) return schema;
  const char delim = opts.delimiter;
  int64_t want = std::min(std::max<int64_t>(sampleBytes, 1), size);
  const size_t need = opts.header ? 2 : 1;

  Bytes buf, text;
  const char *b = nullptr, *body = nullptr, *cut = nullptr;
  for (;;) {
    buf = AllocBytes(size_t(want));
    size_t n = f.readAt(buf.get(), size_t(want), 0);
    bool atEof = int64_t(n) >= size || int64_t(n) < want;
    size_t bad;
    std::tie(b, n) = PrepareText(buf.get(), n, true, opts.encoding, &text, &bad);
    // A sample may end inside a character: only a bad byte before the last 3 counts.
    if (bad < n && (atEof || bad + 3 < n)) {
      auto lc = LineCol(b, b, b + bad, 1);
      throw InvalidUtf8(path + ":" + std::to_string(lc.first) + ":" + std::to_string(lc.second), b + bad);
    }
    const char* e = b + n;
    body = HasBom(b, n) ? b + 3 : b;
    cut = body;
    size_t complete = 0;
    RowInfo info;
    const char* p = SkipBlank(body, e);
    while (p < e) {
      const char* next = ParseRow(p, e, delim, nullptr, 0, &info);
      if (info.unclosed || !(info.terminated || atEof)) break;
      complete++;
      cut = next;
      p = SkipBlank(next, e);
    }
    if (complete >= need || atEof) break;
    want = std::min(size, want * 2);
  }

  // Header (or the first row, for the column count).
  const char* p = SkipBlank(body, cut);
  if (p >= cut) return schema;
  RowInfo info;
  std::vector<RawField> fields(64);
  const char* next = ParseRow(p, cut, delim, fields.data(), fields.size(), &info);
  if (info.count > fields.size()) {
    fields.resize(info.count);
    next = ParseRow(p, cut, delim, fields.data(), fields.size(), &info);
  }
  const size_t ncols = info.count;
  std::string scratch;
  for (size_t i = 0; i < ncols; i++) {
    std::string name;
    if (opts.header) name = std::string(FieldText(fields[i], scratch));
    if (name.empty()) name = "column_" + std::to_string(i);
    for (const auto& prev : schema.names) {
      if (prev == name) {
        auto lc = LineCol(b, body, p, 1);
        throw BasinError("BASIN_PARSE", path + ":" + std::to_string(lc.first) + ": duplicate column name \"" + name +
                                            "\" in the header (rename one of them, or pass header: false)");
      }
    }
    schema.names.push_back(std::move(name));
  }
  if (!opts.header) next = p;  // the first row is data

  NullSet isNull(opts.nullValues);
  std::vector<unsigned> mask(ncols, kCAll);
  std::vector<bool> seen(ncols, false);
  p = SkipBlank(next, cut);
  while (p < cut) {
    next = ParseRow(p, cut, delim, fields.data(), ncols, &info);
    if (info.count == ncols && !info.unclosed) {
      for (size_t i = 0; i < ncols; i++) {
        if (!mask[i]) {
          seen[i] = true;
          continue;
        }
        std::string_view s = FieldText(fields[i], scratch);
        if (isNull(s)) continue;
        seen[i] = true;
        const char* sb = s.data();
        const char* se = sb + s.size();
        unsigned m = mask[i];
        int64_t iv;
        double dv;
        int32_t days;
        if ((m & kCInt) && !CsvParseInt64(sb, se, &iv)) m &= ~kCInt;
        if ((m & kCFloat) && !CsvParseFloat64(sb, se, &dv)) m &= ~kCFloat;
        if ((m & kCBool) && !EqualsIgnoreCase(s, "true") && !EqualsIgnoreCase(s, "false")) m &= ~kCBool;
        if ((m & kCDate) && !CsvParseDate(sb, se, &days)) m &= ~kCDate;
        if ((m & kCTs) && !CsvParseTimestamp(sb, se, false, &iv)) m &= ~kCTs;
        mask[i] = m;
      }
    }
    p = SkipBlank(next, cut);
  }
  for (size_t i = 0; i < ncols; i++) {
    unsigned m = mask[i];
    DType t = DType::String;
    if (!seen[i]) t = DType::String;
    else if (m & kCInt) t = DType::Int64;
    else if (m & kCFloat) t = DType::Float64;
    else if (m & kCBool) t = DType::Bool;
    else if (m & kCDate) t = DType::Date;
    else if (m & kCTs) t = DType::Timestamp;
    schema.types.push_back(t);
  }
  schema.seen = seen;
  return schema;
}

// ---------------------------------------------------------------------------------------
// Scan

namespace {

// Writes one column straight into its final buffers, sized for `cap` rows up front (the
// caller's bound on the row count), so appends need no capacity checks or copies.
class ColumnWriter {
 public:
  ColumnWriter(DType t, int64_t cap, size_t charsHint) : type_(t), cap_(cap) {
    // Uninitialised: every kept byte is written (rows past the end are shrunk away).
    if (t == DType::String) {
      data_ = MakeBufferNoInit(size_t(cap + 1) * sizeof(int64_t));
      data_->as<int64_t>()[0] = 0;
      // Room for every byte of the block: virtual memory only until written, and
      // adopted by the column as it is (no copy); counted by the store from then on.
      chars_.reset(new uint8_t[charsHint + 1]);
    } else {
      data_ = MakeBufferNoInit(size_t(cap) * ElementSize(t));
    }
  }
  void appendNull() {
    if (!validity_) {
      validity_ = MakeBufferNoInit(size_t(cap_));
      std::memset(validity_->data(), 1, size_t(cap_));
    }
    validity_->data()[len_] = 0;
    if (type_ == DType::String) data_->as<int64_t>()[len_ + 1] = int64_t(charsLen_);
    else std::memset(data_->data() + size_t(len_) * ElementSize(type_), 0, ElementSize(type_));  // nulls hold 0, as zeroed buffers did
    len_++;
  }
  void appendInt(int64_t v) { data_->as<int64_t>()[len_++] = v; }
  void appendDouble(double v) { data_->as<double>()[len_++] = v; }
  void appendDate(int32_t v) { data_->as<int32_t>()[len_++] = v; }
  void appendBool(bool v) { data_->data()[len_++] = uint8_t(v); }
  void appendString(std::string_view s) {
    std::memcpy(chars_.get() + charsLen_, s.data(), s.size());
    charsLen_ += s.size();
    data_->as<int64_t>()[++len_] = int64_t(charsLen_);
  }
  // Drops the rows from `len` on (a row that failed to parse after some of its fields were written).
  void truncate(int64_t len) {
    if (len >= len_) return;
    if (validity_) std::memset(validity_->data() + len, 1, size_t(len_ - len));
    if (type_ == DType::String) charsLen_ = size_t(data_->as<int64_t>()[len]);
    len_ = len;
  }
  Column finish() {
    Column c;
    c.type = type_;
    c.length = len_;
    if (type_ == DType::String) {
      data_->shrink(size_t(len_ + 1) * sizeof(int64_t));
      c.chars = std::make_shared<Buffer>(std::move(chars_), charsLen_);
    } else {
      data_->shrink(size_t(len_) * ElementSize(type_));
    }
    c.data = std::move(data_);
    if (validity_) {
      validity_->shrink(size_t(len_));
      c.validity = std::move(validity_);
    }
    return c;
  }

 private:
  DType type_;
  int64_t cap_, len_ = 0;
  BufferPtr data_, validity_;
  std::unique_ptr<uint8_t[]> chars_;
  size_t charsLen_ = 0;
};
}  // namespace

CsvScanResult CsvScan(const std::string& path, int64_t start, int64_t end, const CsvScanOptions& opts) {
  File f(path);
  const int64_t size = f.size();
  end = std::min(end, size);
  start = std::max<int64_t>(start, 0);
  if (end < start) end = start;
  const size_t ncols = opts.names.size();
  if (opts.types.size() != ncols)
    throw BasinError("BASIN_INTERNAL", "csvScan: " + std::to_string(opts.types.size()) + " types for " +
                                           std::to_string(ncols) + " columns");
  const std::vector<int>& proj = opts.columns;
  for (int c : proj)
    if (c < 0 || size_t(c) >= ncols)
      throw BasinError("BASIN_INTERNAL", "csvScan: column index " + std::to_string(c) + " out of range");

  FileRange range(f, path, start, end);
  Bytes prepared;
  size_t bad;
  const auto text = PrepareText(range.data(), size_t(end - start), start == 0, opts.encoding, &prepared, &bad);
  const char* b = text.first;
  const size_t n = text.second;
  const char* e = b + n;
  const char* body = (start == 0 && HasBom(b, n)) ? b + 3 : b;
  bool skipHeader = start == 0 && opts.header;
  const char delim = opts.delimiter;
  NullSet isNull(opts.nullValues);

  const int64_t rowsUpper = CountNewlines(body, e) + 1;
  std::vector<ColumnWriter> builders;
  builders.reserve(proj.size());
  std::vector<DType> types;
  for (int c : proj) {
    types.push_back(opts.types[size_t(c)]);
    builders.emplace_back(opts.types[size_t(c)], rowsUpper, n);
  }
  std::vector<RawField> fields(std::max<size_t>(ncols, 1));
  std::vector<std::string> scratch(proj.size());

  auto where = [&](const char* pos) {
    auto lc = LineCol(b, body, pos, opts.line);
    return path + ":" + std::to_string(lc.first) + ":" + std::to_string(lc.second);
  };

  if (bad < n) throw InvalidUtf8(where(b + bad), b + bad);

  int64_t rows = 0, skipped = 0;
  RowInfo info;
  // A blank line is skipped, except in a file of one column, where it is that column's
  // empty value (DuckDB reads it so, and it is how a null is written there). Blank lines
  // before the file's first row are skipped either way.
  const bool blankIsRow = ncols == 1;
  auto nextRow = [&](const char* q) { return blankIsRow ? q : SkipBlank(q, e); };
  const char* p = start == 0 ? SkipBlank(body, e) : nextRow(body);
  while (p < e) {
    const char* rowStart = p;
    const char* next = ParseRowFast(p, e, delim, fields.data(), ncols, &info);
    if (!next) next = ParseRow(p, e, delim, fields.data(), ncols, &info);
    p = nextRow(next);
    if (skipHeader) {
      skipHeader = false;
      continue;
    }
    if (info.unclosed || info.afterQuote || info.strayCr) {
      if (opts.skipBadLines) {
        skipped++;
        // An unterminated quote read on to the block's end: only the row up to the
        // line it opened on is dropped, and the scan goes on after that line (as
        // DuckDB's ignore_errors does), instead of losing the rest of the file.
        if (info.unclosed) {
          const char* nl = static_cast<const char*>(std::memchr(info.unclosed, '\n', size_t(e - info.unclosed)));
          p = nextRow(nl ? nl + 1 : e);
        }
        continue;
      }
      // DuckDB, pandas and Python's csv end the line at a lone '\r': reading it as text
      // would give another answer than theirs.
      if (!info.unclosed && !info.afterQuote)
        throw BasinError("BASIN_PARSE", where(info.strayCr) +
                                            ": a carriage return inside an unquoted field (the lines end in \\n or "
                                            "\\r\\n; quote the field if the \\r is part of it, or pass onBadLines: "
                                            "\"skip\" to drop such lines)");
      throw BasinError("BASIN_PARSE", info.unclosed ? where(info.unclosed) +
                                                          ": unterminated quoted field (a '\"' opens a field that never "
                                                          "closes; fix the quoting, or pass onBadLines: \"skip\" to drop "
                                                          "such lines)"
                                                    : where(info.afterQuote) +
                                                          ": text after a closing quote (a quoted field must end at a "
                                                          "delimiter or the line's end; double a quote inside it as "
                                                          "\"\", or pass onBadLines: \"skip\" to drop such lines)");
    }
    if (info.count != ncols) {
      if (opts.skipBadLines) {
        skipped++;
        continue;
      }
      auto lc = LineCol(b, body, rowStart, opts.line);
      throw BasinError("BASIN_PARSE", path + ":" + std::to_string(lc.first) + ":1: expected " + std::to_string(ncols) +
                                          " fields, found " + std::to_string(info.count) +
                                          " (fix the line, or pass onBadLines: \"skip\" to drop such lines)");
    }
    if (rows == rowsUpper) throw BasinError("BASIN_INTERNAL", "csvScan: more rows than newlines");
    // Each field goes straight into its column; a field that does not parse drops the
    // row's fields written before it (skip) or reports it (error).
    bool ok = true;
    for (size_t j = 0; j < proj.size(); j++) {
      const RawField& fld = fields[size_t(proj[j])];
      ColumnWriter& w = builders[j];
      std::string_view s = FieldText(fld, scratch[j]);
      if (isNull(s)) {
        w.appendNull();
        continue;
      }
      const char* sb = s.data();
      const char* se = sb + s.size();
      switch (types[j]) {
        case DType::Int64: {
          int64_t v;
          ok = ParseInt64(sb, se, &v);
          if (ok) w.appendInt(v);
          break;
        }
        case DType::Float64: {
          double v;
          ok = ParseFloat64(sb, se, &v);
          if (ok) w.appendDouble(v);
          break;
        }
        case DType::Bool:
          if (s.size() == 1 && (s[0] == '1' || s[0] == '0')) w.appendBool(s[0] == '1');
          else if (EqualsIgnoreCase(s, "true")) w.appendBool(true);
          else if (EqualsIgnoreCase(s, "false")) w.appendBool(false);
          else ok = false;
          break;
        case DType::Date: {
          int32_t d = 0;
          ok = ParseDate(sb, se, &d);
          if (ok) w.appendDate(d);
          break;
        }
        case DType::Timestamp: {
          int64_t v;
          ok = ParseTimestamp(sb, se, true, &v);
          if (ok) w.appendInt(v);
          break;
        }
        case DType::String:
          w.appendString(s);
          break;
      }
      if (!ok) {
        if (opts.skipBadLines) {
          for (size_t k = 0; k < j; k++) builders[k].truncate(rows);
          break;
        }
        const std::string& name = opts.names[size_t(proj[j])];
        throw BasinError("BASIN_PARSE", where(fld.start()) + ": cannot parse \"" + Truncate(s, 40) + "\" as " +
                                            DTypeName(types[j]) + " in column \"" + name + "\" (pass dtypes: { " +
                                            name + ": \"string\" } to read it as text, or fix the value)");
      }
    }
    if (!ok) {
      skipped++;
      continue;
    }
    rows++;
  }

  auto t = std::make_shared<Table>();
  t->rows = rows;
  for (size_t j = 0; j < proj.size(); j++) {
    t->names.push_back(opts.names[size_t(proj[j])]);
    t->columns.push_back(builders[j].finish());
  }
  CsvScanResult res;
  res.table = std::move(t);
  res.rows = rows;
  res.skipped = skipped;
  return res;
}

}  // namespace basin
