#include "io/parquet_decode.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <type_traits>

#if BASIN_WITH_ZSTD
#include <zstd.h>
#endif

#include "io/parquet_codec.h"
#include "io/utf8.h"
#include "ops/expr.h"
#include "ops/expr_parts.h"

namespace basin {
namespace {

constexpr int kDataV1 = 0, kDictionaryPage = 2, kDataV2 = 3;
constexpr int kPlain = 0, kPlainDictionary = 2, kRle = 3, kDeltaBinaryPacked = 5, kDeltaLengthByteArray = 6,
              kDeltaByteArray = 7, kRleDictionary = 8, kByteStreamSplit = 9;
constexpr int kBoolean = 0, kInt32 = 1, kInt64 = 2, kFloat = 4, kDouble = 5, kByteArray = 6;
constexpr int kUncompressed = 0, kSnappy = 1, kZstd = 6;

// Bytes appended straight into a store buffer (pool memory, reserved from the pages'
// sizes), so a long string column's text is written once, where it stays.
class ByteSink {
 public:
  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  void append(const uint8_t* p, size_t n) {
    if (n == 0) return;
    room(n);
    std::memcpy(buf_->data() + len_, p, n);
    len_ += n;
  }
  // Appends n of its own bytes from `from` (before the end: they never overlap the new ones).
  void appendOwn(size_t from, size_t n) {
    if (n == 0) return;
    room(n);  // before the source is read: growing moves it
    std::memcpy(buf_->data() + len_, buf_->data() + from, n);
    len_ += n;
  }
  const uint8_t* data() const { return buf_ ? buf_->data() : nullptr; }
  size_t size() const { return len_; }
  BufferPtr finish() {
    if (!buf_) buf_ = MakeBufferNoInit(0);
    buf_->shrink(len_);
    return std::move(buf_);
  }

 private:
  size_t capacity() const { return buf_ ? buf_->size() : 0; }
  void room(size_t n) {
    if (len_ + n > capacity()) grow(std::max(len_ + n, capacity() * 2));
  }
  void grow(size_t n) {
    BufferPtr next = MakeBufferNoInit(n);
    if (len_ > 0) std::memcpy(next->data(), buf_->data(), len_);
    buf_ = std::move(next);
  }
  BufferPtr buf_;
  size_t len_ = 0;
};

// The values of in[0, n) whose keep byte is 1, written to out from `at` on (out has
// room for `room` values); returns where the next kept value goes. Branch-free: every
// value is written, and the next one overwrites it unless it was kept.
template <class T>
int64_t KeepValues(const T* in, const uint8_t* keep, int64_t n, T* out, int64_t at, int64_t room) {
  for (int64_t i = 0; i < n; i++) {
    if (at < room) out[at] = in[i];
    at += keep[i];
  }
  return at;
}

// A dictionary-encoded string column before its strings are gathered.
struct DictCodes {
  Column dict;                 // the entries, then one null entry
  std::vector<int32_t> codes;  // per row, an index into dict
};

// Decodes one column's pages into a Basin column, page by page.
class ColumnDecoder {
 public:
  // codes: a string column is read as dictionary codes (finishCodes) while every data
  // page is dictionary-encoded; notDictionary() tells when one is not. keep (a 0/1 byte
  // per row, `kept` < rows of them 1; null for every row) cuts a fixed-width column to
  // those rows as it is read:
  // each page is decoded into a page-sized buffer that stays in cache, and only the kept
  // values reach the column (a scan keeping 1% of lineitem's rows wrote every value of
  // its other columns to memory, then read them all again to cut them).
  ColumnDecoder(const ParquetColumnIn& c, int64_t rows, const std::string& path, bool codes = false,
                const std::vector<uint8_t>* keep = nullptr, int64_t kept = -1)
      : c_(c), rows_(rows), path_(path), codesMode_(codes && c.type == DType::String),
        keep_(c.type != DType::String ? keep : nullptr) {
    col_.type = c.type;
    col_.length = keep_ ? kept : rows;
    if (keep_) {
      col_.data = MakeBufferNoInit(size_t(kept) * ElementSize(c.type));
    } else if (codesMode_) {
      codes_.resize(size_t(rows));
    } else if (c.type == DType::String) {
      col_.data = MakeBufferNoInit(size_t(rows + 1) * 8);
      col_.data->as<int64_t>()[0] = 0;
      // PLAIN pages' text is a little less than their size; a header's claim is trusted
      // no further than 32 times the stored bytes (the sink grows past a reservation).
      size_t raw = 0, stored = 0;
      for (const auto& p : c.pages)
        if (p.type == kDataV1 || p.type == kDataV2) raw += size_t(std::max<int64_t>(p.raw, 0)), stored += p.size;
      chars_.reserve(std::min(raw, stored * 32));
    } else {
      col_.data = MakeBufferNoInit(size_t(rows) * ElementSize(c.type));
    }
  }

  Column finish() {
    if (row_ != rows_)
      fail("its pages hold " + std::to_string(row_) + " rows, its row groups " + std::to_string(rows_));
    if (c_.type == DType::String) {
      col_.chars = chars_.finish();
    }
    if (keep_ && out_ != col_.length)
      fail("its pages hold " + std::to_string(out_) + " kept rows, the scan counted " + std::to_string(col_.length));
    col_.validity = validity_;
    if (keep_ && validity_) {  // cut to the kept rows too
      col_.validity = MakeBufferNoInit(size_t(col_.length));
      KeepValues(validity_->data(), keep_->data(), rows_, col_.validity->data(), 0, col_.length);
    }
    return std::move(col_);
  }

  bool notDictionary() const { return notDictionary_; }

  // Codes mode: every dictionary's entries, in page order, with one null entry last
  // (the code of a null row), and each row's code into them.
  DictCodes finishCodes() {
    if (row_ != rows_)
      fail("its pages hold " + std::to_string(row_) + " rows, its row groups " + std::to_string(rows_));
    const int64_t entries = dictOffsets_.empty() ? 0 : int64_t(dictOffsets_.size()) - 1;
    DictCodes out;
    out.dict.type = DType::String;
    out.dict.length = entries + 1;
    out.dict.data = MakeBufferNoInit(size_t(entries + 2) * 8);
    int64_t* off = out.dict.data->as<int64_t>();
    off[0] = 0;
    for (int64_t e = 0; e < entries; e++) off[e + 1] = dictOffsets_[size_t(e + 1)];
    off[entries + 1] = off[entries];
    // 16 readable bytes past the last entry: GatherCodes copies short strings 16 bytes at a time.
    out.dict.chars = MakeBufferNoInit(dictChars_.size() + 16);
    if (!dictChars_.empty()) std::memcpy(out.dict.chars->data(), dictChars_.data(), dictChars_.size());
    out.dict.chars->shrink(dictChars_.size());
    out.dict.validity = MakeBufferNoInit(size_t(entries + 1));
    std::memset(out.dict.validity->data(), 1, size_t(entries));
    out.dict.validity->data()[entries] = 0;
    const uint8_t* valid = validity_ ? validity_->data() : nullptr;
    if (valid)
      for (int64_t i = 0; i < rows_; i++)
        if (!valid[i]) codes_[size_t(i)] = int32_t(entries);
    out.codes = std::move(codes_);
    return out;
  }

  void page(const ParquetPageIn& p) {
    group_ = p.group;
    if (notDictionary_) return;
    if (p.type == kDictionaryPage) return dictionary(p);
    if (p.type != kDataV1 && p.type != kDataV2) return;  // index pages
    if (codesMode_ && p.encoding != kPlainDictionary && p.encoding != kRleDictionary)
      return notDictionary_ = true, void();  // known before the page is decompressed
    if (p.values < 0 || p.values > rows_ - row_) fail("a data page holds more rows than its row groups");
    const int64_t n = p.values;
    const uint8_t* levels = nullptr;
    size_t levelBytes = 0;
    const uint8_t* values;
    size_t valueBytes;
    if (p.type == kDataV1 && !c_.optional && p.encoding == kPlain && SameLayout()) {
      // Values stored as Basin stores them: decompressed (or copied) straight into the column.
      uint8_t* dst = target(n);
      const size_t bytes = size_t(n) * width();
      if (c_.codec == kSnappy) {
        size_t at = 0;
        uint64_t want = 0;
        if (!SnappyLength(p.body, p.size, &at, &want) || want != uint64_t(p.raw) || want != bytes ||
            !SnappyInto(p.body, p.size, at, dst, want))
          fail("a Snappy page does not decompress to the " + std::to_string(bytes) + " bytes of its " +
               std::to_string(n) + " values");
      } else {
        const auto body = inflate(p.body, p.size, p.raw, c_.codec);
        if (body.second != bytes)
          fail("a page holds " + std::to_string(body.second) + " bytes of values for " + std::to_string(n) + " values");
        std::memcpy(dst, body.first, bytes);
      }
      if (validity_) std::memset(validity_->data() + row_, 1, size_t(n));
      settle(n);
      row_ += n;
      return;
    }
    if (p.type == kDataV1) {
      const auto body = inflate(p.body, p.size, p.raw, c_.codec);
      size_t at = 0;
      if (c_.optional) {
        uint32_t len;
        if (body.second < 4) fail("a data page has no definition levels");
        std::memcpy(&len, body.first, 4);
        if (len > body.second - 4) fail("a data page's definition levels run past the page");
        levels = body.first + 4;
        levelBytes = len;
        at = 4 + len;
      }
      values = body.first + at;
      valueBytes = body.second - at;
    } else {
      if (p.levelBytes < 0 || size_t(p.levelBytes) > p.size) fail("a data page's levels run past it");
      levels = p.body;
      levelBytes = size_t(p.levelBytes);
      const auto rest = p.compressed ? inflate(p.body + levelBytes, p.size - levelBytes, p.raw - p.levelBytes, c_.codec)
                                     : std::make_pair(p.body + levelBytes, p.size - levelBytes);
      values = rest.first;
      valueBytes = rest.second;
    }
    int64_t present = n;
    if (c_.optional) present = definitions(levels, levelBytes, n);
    else if (validity_) std::memset(validity_->data() + row_, 1, size_t(n));
    if (c_.type == DType::String) strings(values, valueBytes, p.encoding, n, present);
    else fixed(values, valueBytes, p.encoding, n, present);
    settle(n);
    row_ += n;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw BasinError("BASIN_IO", path_ + " is not a readable Parquet file: column \"" + c_.name + "\", row group " +
                                     std::to_string(group_) + ": " + why +
                                     "; check that the file is Parquet and was written completely");
  }

  // The page's bytes, decompressed into scratch_ when the column is compressed.
  std::pair<const uint8_t*, size_t> inflate(const uint8_t* b, size_t n, int64_t raw, int codec) {
    if (codec == kUncompressed) {
      if (raw != int64_t(n)) fail("an uncompressed page says " + std::to_string(raw) + " bytes but holds " + std::to_string(n));
      return {b, n};
    }
    if (raw < 0 || raw > (int64_t(1) << 31)) fail("a page says it holds " + std::to_string(raw) + " bytes");
    if (codec == kSnappy) {
      size_t at = 0;
      uint64_t want = 0;
      if (!SnappyLength(b, n, &at, &want) || want != uint64_t(raw)) fail("a Snappy page does not say the " + std::to_string(raw) + " bytes it holds");
      if (scratch_.size() < want) scratch_.resize(size_t(want));
      if (!SnappyInto(b, n, at, scratch_.data(), want))
        fail("a Snappy page does not decompress to the " + std::to_string(raw) + " bytes it says");
      return {scratch_.data(), size_t(want)};
    }
#if BASIN_WITH_ZSTD
    if (codec == kZstd) {
      scratch_.resize(size_t(raw));
      const size_t got = ZSTD_decompress(scratch_.data(), scratch_.size(), b, n);
      if (ZSTD_isError(got) || got != size_t(raw))
        fail("a zstd page does not decompress to the " + std::to_string(raw) + " bytes it says");
      return {scratch_.data(), scratch_.size()};
    }
#endif
    fail("compression codec " + std::to_string(codec) + " is not supported here");
  }

  // Definition levels (bit width 1) into the validity of rows [row_, row_ + n); the count present.
  int64_t definitions(const uint8_t* b, size_t n, int64_t count) {
    levels_.resize(size_t(count));
    if (!HybridToArray(b, 0, n, 1, count, levels_.data())) fail("a data page's definition levels do not decode");
    int64_t present = 0;
    for (int64_t i = 0; i < count; i++) present += levels_[size_t(i)];
    if (present < count && !validity_) {
      validity_ = MakeBufferNoInit(size_t(rows_));
      std::memset(validity_->data(), 1, size_t(row_));
    }
    if (validity_)
      for (int64_t i = 0; i < count; i++) validity_->data()[row_ + i] = uint8_t(levels_[size_t(i)]);
    return present;
  }

  // Dictionary indices of `present` values: bit width byte, then the hybrid.
  const uint32_t* indices(const uint8_t* b, size_t n, int64_t present, int64_t entries) {
    indices_.resize(size_t(present));
    if (present == 0) return indices_.data();
    if (n < 1 || b[0] > 32 || !HybridToArray(b, 1, n, b[0], present, indices_.data()))
      fail("a data page's dictionary indices do not decode");
    // One branch-free pass, checked once; OR-ing the comparisons leaves no chain of
    // dependent steps (a running max did, and cost as much as the unpacking).
    const uint32_t limit = uint32_t(std::min<int64_t>(entries, int64_t(UINT32_MAX)));  // (a page's count is int32)
    uint32_t past = 0;
    for (int64_t i = 0; i < present; i++) past |= uint32_t(indices_[size_t(i)] >= limit);
    if (past != 0)
        fail("a data page's dictionary index reaches past the " + std::to_string(entries) + " entries of its dictionary");
    return indices_.data();
  }

  // ---- fixed-width types: values converted to Basin's type as they are read ----

  size_t width() const { return ElementSize(c_.type); }

  // Where a page's n values go: the column at row_, or (cutting) the page buffer.
  uint8_t* target(int64_t n) {
    if (!keep_) return col_.data->data() + size_t(row_) * width();
    if (page_.size() < size_t(n) * width()) page_.resize(size_t(n) * width());
    return page_.data();
  }

  // Cutting: the page's kept values, from the page buffer to the column.
  void settle(int64_t n) {
    if (!keep_) return;
    const uint8_t* k = keep_->data() + row_;
    auto keep = [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      out_ = KeepValues(reinterpret_cast<const T*>(page_.data()), k, n, out, out_, col_.length);
    };
    switch (width()) {
      case 8: keep(col_.data->as<uint64_t>()); break;
      case 4: keep(col_.data->as<uint32_t>()); break;
      default: keep(col_.data->data()); break;
    }
    if (out_ > col_.length) fail("more rows are kept than the scan counted");
  }

  // Whether a PLAIN value of the physical type is already Basin's value, byte for byte.
  bool SameLayout() const {
    switch (c_.physical) {
      case kDouble: return c_.type == DType::Float64;
      case kInt64: return (c_.type == DType::Int64 || c_.type == DType::Timestamp) && c_.timeMul == 1 && c_.timeDiv == 1;
      case kInt32: return c_.type == DType::Date;
      default: return false;
    }
  }

  // `count` PLAIN values of the physical type into `out` (Basin's element type).
  void plainFixed(const uint8_t* b, size_t n, int64_t count, uint8_t* out) {
    static const size_t kWidth[] = {0, 4, 8, 12, 4, 8};
    if (c_.physical == kBoolean) {
      if (n < size_t(count + 7) / 8) fail("a data page holds too few bits of values");
      for (int64_t i = 0; i < count; i++) out[i] = (b[i >> 3] >> (i & 7)) & 1;
      return;
    }
    if (c_.physical < 1 || c_.physical > 5 || c_.physical == 3) fail("physical type " + std::to_string(c_.physical) + " is not supported here");
    if (n != size_t(count) * kWidth[c_.physical])
      fail("a page holds " + std::to_string(n) + " bytes of values for " + std::to_string(count) + " values");
    if (SameLayout()) return std::memcpy(out, b, n), void();
    for (int64_t i = 0; i < count; i++) convert(b + size_t(i) * kWidth[c_.physical], out + size_t(i) * width());
  }

  void convert(const uint8_t* v, uint8_t* out) const {
    switch (c_.physical) {
      case kInt32: {
        int32_t x;
        std::memcpy(&x, v, 4);
        if (c_.type == DType::Date) return std::memcpy(out, &x, 4), void();
        const int64_t y = c_.unsignedInt ? int64_t(uint32_t(x)) : int64_t(x);
        return std::memcpy(out, &y, 8), void();
      }
      case kInt64: {
        int64_t x;
        std::memcpy(&x, v, 8);
        if (c_.timeMul != 1) x *= c_.timeMul;
        if (c_.timeDiv != 1) x = x >= 0 ? x / c_.timeDiv : -((-x + c_.timeDiv - 1) / c_.timeDiv);
        return std::memcpy(out, &x, 8), void();
      }
      case kFloat: {
        float x;
        std::memcpy(&x, v, 4);
        const double y = x;
        return std::memcpy(out, &y, 8), void();
      }
      default:
        return std::memcpy(out, v, 8), void();  // DOUBLE
    }
  }

  void dictionary(const ParquetPageIn& p) {
    const auto body = inflate(p.body, p.size, p.raw, c_.codec);
    if (p.values < 0 || p.values > int64_t(body.second) * 8 + 8) fail("a dictionary page has a bad value count");
    if (p.encoding != kPlain && p.encoding != kPlainDictionary) fail("a dictionary page is not PLAIN-encoded");
    entries_ = p.values;
    if (codesMode_) {
      // Each chunk's dictionary is appended: codes count from its first entry.
      if (dictOffsets_.empty()) dictOffsets_.assign(1, 0);
      dictBase_ = int64_t(dictOffsets_.size()) - 1;
      if (dictBase_ + p.values >= (int64_t(1) << 31) - 1) return notDictionary_ = true, void();
      const size_t start = dictChars_.size();
      size_t at = 0;
      for (int64_t i = 0; i < p.values; i++) {
        const auto s = nextString(body.first, body.second, &at);
        dictChars_.insert(dictChars_.end(), s.first, s.first + s.second);
        dictOffsets_.push_back(int64_t(dictChars_.size()));
      }
      checkUtf8(dictChars_.data() + start, dictChars_.size() - start);
    } else if (c_.type == DType::String) {
      dictOffsets_.assign(1, 0);
      dictChars_.clear();
      size_t at = 0;
      for (int64_t i = 0; i < p.values; i++) {
        const auto s = nextString(body.first, body.second, &at);
        dictChars_.insert(dictChars_.end(), s.first, s.first + s.second);
        dictOffsets_.push_back(int64_t(dictChars_.size()));
      }
      checkUtf8(dictChars_.data(), dictChars_.size());
    } else {
      dictFixed_.resize(size_t(p.values) * width());
      plainFixed(body.first, body.second, p.values, dictFixed_.data());
    }
  }

  // Dictionary entries `idx` (checked in range) into out, as values of T.
  template <class T>
  void Gather(const uint32_t* idx, int64_t count, uint8_t* out) const {
    const uint8_t* dict = dictFixed_.data();
    for (int64_t i = 0; i < count; i++) {
      T v;
      std::memcpy(&v, dict + size_t(idx[i]) * sizeof(T), sizeof(T));
      std::memcpy(out + size_t(i) * sizeof(T), &v, sizeof(T));
    }
  }

  void fixed(const uint8_t* b, size_t n, int encoding, int64_t count, int64_t present) {
    const size_t w = width();
    uint8_t* dst = target(count);
    // Values land densely; with nulls they are then spread to their rows.
    uint8_t* dense = present == count ? dst : (dense_.resize(size_t(present) * w), dense_.data());
    if (encoding == kPlain) {
      plainFixed(b, n, present, dense);
    } else if (encoding == kDeltaBinaryPacked && (c_.physical == kInt32 || c_.physical == kInt64)) {
      // Back to the PLAIN layout, then converted like PLAIN values.
      size_t at = 0;
      if (!DeltaBinaryPacked(b, n, &at, present, &deltas_)) fail("a DELTA_BINARY_PACKED page does not decode");
      const size_t pw = c_.physical == kInt32 ? 4 : 8;
      plain_.resize(size_t(present) * pw);
      for (int64_t i = 0; i < present; i++) std::memcpy(plain_.data() + size_t(i) * pw, &deltas_[size_t(i)], pw);
      plainFixed(plain_.data(), plain_.size(), present, dense);
    } else if (encoding == kByteStreamSplit && c_.physical >= kInt32 && c_.physical <= kDouble && c_.physical != 3) {
      const size_t pw = c_.physical == kInt32 || c_.physical == kFloat ? 4 : 8;
      if (n != size_t(present) * pw) fail("a BYTE_STREAM_SPLIT page holds " + std::to_string(n) + " bytes for " + std::to_string(present) + " values");
      plain_.resize(n);
      for (int64_t i = 0; i < present; i++)
        for (size_t k = 0; k < pw; k++) plain_[size_t(i) * pw + k] = b[k * size_t(present) + size_t(i)];
      plainFixed(plain_.data(), plain_.size(), present, dense);
    } else if (encoding == kRle && c_.physical == kBoolean) {
      uint32_t len;
      if (n < 4) fail("a boolean page has no run length");
      std::memcpy(&len, b, 4);
      levels_.resize(size_t(present));
      if (len > n - 4 || !HybridToArray(b + 4, 0, len, 1, present, levels_.data())) fail("a boolean page does not decode");
      for (int64_t i = 0; i < present; i++) dense[i] = uint8_t(levels_[size_t(i)]);
    } else if (encoding == kPlainDictionary || encoding == kRleDictionary) {
      if (entries_ < 0) fail("a dictionary-encoded page comes before its dictionary");
      const uint32_t* idx = indices(b, n, present, entries_);
      switch (w) {
        case 8: Gather<uint64_t>(idx, present, dense); break;
        case 4: Gather<uint32_t>(idx, present, dense); break;
        default:
          for (int64_t i = 0; i < present; i++) std::memcpy(dense + size_t(i) * w, dictFixed_.data() + size_t(idx[i]) * w, w);
      }
    } else {
      fail("encoding " + std::to_string(encoding) + " is not supported here");
    }
    if (dense == dst) return;
    const uint8_t* valid = validity_->data() + row_;
    for (int64_t i = count - 1, k = present - 1; i >= 0; i--) {
      if (valid[i]) std::memcpy(dst + size_t(i) * w, dense + size_t(k--) * w, w);
      else std::memset(dst + size_t(i) * w, 0, w);
    }
  }

  // ---- strings ----

  std::pair<const uint8_t*, size_t> nextString(const uint8_t* b, size_t n, size_t* at) const {
    uint32_t len;
    if (n - *at < 4) fail("a page's strings run past it");
    std::memcpy(&len, b + *at, 4);
    *at += 4;
    if (len > n - *at) fail("a page's strings run past it");
    const auto s = std::make_pair(b + *at, size_t(len));
    *at += len;
    return s;
  }

  void checkUtf8(const uint8_t* p, size_t n) const {
    const size_t bad = FirstInvalidUtf8(p, n);
    if (bad < n) fail("a string is not valid UTF-8 (byte " + std::to_string(bad) + " of its page's text)");
  }

  void strings(const uint8_t* b, size_t n, int encoding, int64_t count, int64_t present) {
    if (codesMode_) return codes(b, n, encoding, count, present);
    int64_t* off = col_.data->as<int64_t>() + row_;
    const uint8_t* valid = validity_ ? validity_->data() + row_ : nullptr;
    if (encoding == kPlain) {
      const size_t start = chars_.size();
      size_t at = 0;
      for (int64_t i = 0; i < count; i++) {
        if (!valid || valid[i]) {
          const auto s = nextString(b, n, &at);
          chars_.append(s.first, s.second);
        }
        off[i + 1] = int64_t(chars_.size());
      }
      if (at != n) fail("a page's strings do not fill it exactly");
      checkUtf8(chars_.data() + start, chars_.size() - start);
    } else if (encoding == kPlainDictionary || encoding == kRleDictionary) {
      if (entries_ < 0) fail("a dictionary-encoded page comes before its dictionary");
      const uint32_t* idx = indices(b, n, present, entries_);
      for (int64_t i = 0, k = 0; i < count; i++) {
        if (!valid || valid[i]) {
          const uint32_t d = idx[k++];
          chars_.append(dictChars_.data() + dictOffsets_[d], size_t(dictOffsets_[d + 1] - dictOffsets_[d]));
        }
        off[i + 1] = int64_t(chars_.size());
      }
    } else if (encoding == kDeltaLengthByteArray || encoding == kDeltaByteArray) {
      const size_t start = chars_.size();
      size_t at = 0;
      std::vector<int64_t> prefixes;
      if (encoding == kDeltaByteArray && !DeltaBinaryPacked(b, n, &at, present, &prefixes))
        fail("a DELTA_BYTE_ARRAY page's prefix lengths do not decode");
      if (!DeltaBinaryPacked(b, n, &at, present, &deltas_)) fail("a page's string lengths do not decode");
      int64_t last = -1;  // where the previous present value starts in chars_
      for (int64_t i = 0, k = 0; i < count; i++) {
        if (!valid || valid[i]) {
          const int64_t len = deltas_[size_t(k)];
          const int64_t prefix = prefixes.empty() ? 0 : prefixes[size_t(k)];
          const int64_t prevLen = last < 0 ? 0 : int64_t(chars_.size()) - last;
          if (len < 0 || uint64_t(len) > n - at || prefix < 0 || prefix > prevLen)
            fail("a page's string lengths run past it");
          const int64_t from = int64_t(chars_.size());
          chars_.appendOwn(size_t(last), size_t(prefix));
          chars_.append(b + at, size_t(len));
          at += size_t(len);
          last = from;
          k++;
        }
        off[i + 1] = int64_t(chars_.size());
      }
      if (at != n) fail("a page's strings do not fill it exactly");
      checkUtf8(chars_.data() + start, chars_.size() - start);
    } else {
      fail("encoding " + std::to_string(encoding) + " is not supported here");
    }
  }

  // Codes mode: the rows' dictionary codes (a null row's is set by finishCodes).
  void codes(const uint8_t* b, size_t n, int encoding, int64_t count, int64_t present) {
    if (encoding != kPlainDictionary && encoding != kRleDictionary) return notDictionary_ = true, void();
    if (entries_ < 0) fail("a dictionary-encoded page comes before its dictionary");
    const uint32_t* idx = indices(b, n, present, entries_);
    int32_t* out = codes_.data() + row_;
    const uint8_t* valid = validity_ ? validity_->data() + row_ : nullptr;
    const int32_t base = int32_t(dictBase_);
    if (present == count) {
      for (int64_t i = 0; i < count; i++) out[i] = base + int32_t(idx[i]);
    } else {
      for (int64_t i = 0, k = 0; i < count; i++) out[i] = valid[i] ? base + int32_t(idx[k++]) : 0;
    }
  }

  const ParquetColumnIn& c_;
  const int64_t rows_;
  const std::string& path_;
  const bool codesMode_;
  bool notDictionary_ = false;
  std::vector<int32_t> codes_;
  int64_t dictBase_ = 0;
  Column col_;
  const std::vector<uint8_t>* keep_;  // cutting to these rows (fixed-width columns only)
  std::vector<uint8_t> page_;          // cutting: the page's values
  int64_t out_ = 0;                    // cutting: values kept so far
  BufferPtr validity_;
  int64_t row_ = 0;
  std::vector<uint8_t> scratch_, dense_, plain_, dictFixed_, dictChars_;
  ByteSink chars_;
  std::vector<uint32_t> levels_, indices_;
  std::vector<int64_t> dictOffsets_, deltas_;
  int64_t entries_ = -1;
  int group_ = 0;
};

}  // namespace

bool ParquetCodecSupported(int codec) {
#if BASIN_WITH_ZSTD
  if (codec == kZstd) return true;
#endif
  return codec == kUncompressed || codec == kSnappy;
}

namespace {

// The strings of the rows `keep` marks (every row when it is empty), from the dictionary:
// lengths summed first, so the characters are written once into a buffer of their size.
Column GatherCodes(const DictCodes& d, const std::vector<uint8_t>& keep, int64_t kept) {
  const int64_t rows = int64_t(d.codes.size());
  const int64_t* doff = d.dict.values<int64_t>();
  const uint8_t* dchars = d.dict.chars ? d.dict.chars->data() : nullptr;
  const int32_t nullCode = int32_t(d.dict.length - 1);
  Column c;
  c.type = DType::String;
  c.length = kept;
  c.data = MakeBufferNoInit(size_t(kept + 1) * 8);
  int64_t* off = c.data->as<int64_t>();
  off[0] = 0;
  bool nulls = false;
  for (int64_t i = 0, k = 0; i < rows; i++) {
    if (!keep.empty() && !keep[size_t(i)]) continue;
    const int32_t code = d.codes[size_t(i)];
    nulls |= code == nullCode;
    off[k + 1] = off[k] + (doff[code + 1] - doff[code]);
    k++;
  }
  // Short strings (most dictionary entries) are copied as 16 fixed bytes, into 16 bytes
  // of slack: a libc call per row was the gather's biggest cost.
  c.chars = MakeBufferNoInit(size_t(off[kept]) + 16);
  uint8_t* chars = c.chars->data();
  if (nulls) c.validity = MakeBufferNoInit(size_t(kept));
  for (int64_t i = 0, k = 0; i < rows; i++) {
    if (!keep.empty() && !keep[size_t(i)]) continue;
    const int32_t code = d.codes[size_t(i)];
    const size_t len = size_t(off[k + 1] - off[k]);
    if (len <= 16) std::memcpy(chars + off[k], dchars + doff[code], 16);
    else std::memcpy(chars + off[k], dchars + doff[code], len);
    if (nulls) c.validity->data()[k] = code != nullCode;
    k++;
  }
  c.chars->shrink(size_t(off[kept]));
  return c;
}

// Whether each row of `value` (one column, named as the scan names it) passes every one
// of `tests`, which read only that column.
std::vector<uint8_t> Passes(const Column& value, int index, const std::string& name,
                            const std::vector<const Expr*>& tests) {
  Table one;
  one.rows = value.length;
  one.names = {name};
  one.columns = {value};
  std::vector<uint8_t> ok(size_t(value.length), 1);
  for (const Expr* e : tests) {
    const std::vector<uint8_t> pass = TrueRows(Evaluate(Renumbered(*e, {{index, 0}}), one));
    for (size_t i = 0; i < ok.size(); i++) ok[i] &= pass[i];
  }
  return ok;
}

}  // namespace

TablePtr DecodeParquet(const std::vector<ParquetColumnIn>& columns, int64_t rows, const std::string& path,
                       const Expr* predicate, const std::vector<int>* outputs,
                       const std::vector<std::string>* outputNames) {
  // Conjuncts that read one string column alone are tested on its dictionary entries
  // (a few, however many rows) and the rows keep their entry's answer; the others are
  // evaluated over the rows that pass. Dictionary-encoded strings are gathered only for
  // the rows kept.
  std::vector<const Expr*> conjuncts, rest;
  if (predicate) Conjuncts(*predicate, &conjuncts);
  std::vector<std::vector<const Expr*>> own(columns.size());
  for (const Expr* e : conjuncts) {
    std::vector<int> cols;
    const bool perValue = ReadsPerValue(*e, &cols);
    if (perValue && cols.size() == 1 && cols[0] >= 0 && size_t(cols[0]) < columns.size() &&
        columns[size_t(cols[0])].type == DType::String)
      own[size_t(cols[0])].push_back(e);
    else
      rest.push_back(e);
  }
  std::vector<Column> out(columns.size());
  std::vector<std::unique_ptr<DictCodes>> dicts(columns.size());
  std::vector<uint8_t> keep;  // empty: every row
  auto narrow = [&](const std::vector<uint8_t>& pass) {
    if (keep.empty()) keep = pass;
    else for (size_t i = 0; i < keep.size(); i++) keep[i] &= pass[i];
  };
  for (size_t i = 0; i < columns.size(); i++) {
    const auto& c = columns[i];
    if (c.type != DType::String) continue;
    ColumnDecoder codes(c, rows, path, true);
    for (const auto& p : c.pages) codes.page(p);
    if (!codes.notDictionary()) {
      dicts[i] = std::make_unique<DictCodes>(codes.finishCodes());
      if (own[i].empty()) continue;
      const std::vector<uint8_t> entry = Passes(dicts[i]->dict, int(i), c.name, own[i]);
      std::vector<uint8_t> pass(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; r++) pass[size_t(r)] = entry[size_t(dicts[i]->codes[size_t(r)])];
      narrow(pass);
    } else {
      ColumnDecoder d(c, rows, path);
      for (const auto& p : c.pages) d.page(p);
      out[i] = d.finish();
      if (!own[i].empty()) narrow(Passes(out[i], int(i), c.name, own[i]));
    }
  }
  // The other conjuncts that read only decoded columns narrow the rows too, before any
  // column is cut, so dictionary strings are gathered once, for the rows kept (TPC-H
  // Q1 keeps 98%): over every row when the dictionary tests kept most, else over the
  // few kept, of only the columns they read (Q12, Q19). The whole-table form holds
  // every column's place; dictionary columns are empty and not read. The fixed-width
  // columns they read are decoded whole first; the others after, cut as they are read.
  std::vector<const Expr*> early, after;
  std::vector<bool> tested(columns.size(), false);
  for (const Expr* e : rest) {
    std::vector<int> cols;
    ReadsPerValue(*e, &cols);
    const bool decodedOnly = std::all_of(cols.begin(), cols.end(), [&](int c) {
      return c >= 0 && size_t(c) < columns.size() && !dicts[size_t(c)];
    });
    (decodedOnly ? early : after).push_back(e);
    if (decodedOnly)
      for (int c : cols) tested[size_t(c)] = true;
  }
  for (size_t i = 0; i < columns.size(); i++) {
    if (columns[i].type == DType::String || !tested[i]) continue;
    ColumnDecoder d(columns[i], rows, path);
    for (const auto& p : columns[i].pages) d.page(p);
    out[i] = d.finish();
  }
  const int64_t passed = keep.empty() ? rows : int64_t(std::count(keep.begin(), keep.end(), uint8_t(1)));
  if (!early.empty() && passed * 2 >= rows) {
    Table decoded;
    decoded.rows = rows;
    for (size_t i = 0; i < columns.size(); i++) {
      decoded.names.push_back(columns[i].name);
      decoded.columns.push_back(dicts[i] ? Column{} : out[i]);
    }
    narrow(TrueRows(Evaluate(AllOf(early), decoded)));
  } else if (!early.empty() && passed > 0) {
    // Over the rows kept so far, of the columns the conditions read: cut those alone.
    std::map<int, int> to;
    for (const Expr* e : early) {
      std::vector<int> cols;
      ReadsPerValue(*e, &cols);
      for (int c : cols) to.emplace(c, 0);
    }
    Table few;
    few.rows = rows;
    for (auto& [c, at] : to) {
      at = int(few.columns.size());
      few.names.push_back(columns[size_t(c)].name);
      few.columns.push_back(out[size_t(c)]);
    }
    const TablePtr cut = FilterByKeep(few, keep);
    const std::vector<uint8_t> pass = TrueRows(Evaluate(Renumbered(AllOf(early), to), *cut));
    for (size_t i = 0, k = 0; i < keep.size(); i++)
      if (keep[i]) keep[i] = pass[k++];
  }
  int64_t kept = rows;
  if (!keep.empty()) {
    kept = 0;
    for (uint8_t k : keep) kept += k;
  }
  // The decoded columns cut to the kept rows, then the dictionary columns gathered;
  // with `outputs` and nothing left to test, only the columns that go on.
  std::vector<bool> wanted(columns.size(), true);
  if (outputs && after.empty()) {
    wanted.assign(columns.size(), false);
    for (int o : *outputs) wanted.at(size_t(o)) = true;
  }
  const bool cutting = !keep.empty() && kept < rows;
  std::vector<bool> cut(columns.size(), false);  // decoded already cut to the kept rows
  for (size_t i = 0; i < columns.size(); i++) {
    if (columns[i].type == DType::String || tested[i] || !wanted[i]) continue;
    ColumnDecoder d(columns[i], rows, path, false, cutting ? &keep : nullptr, kept);
    for (const auto& p : columns[i].pages) d.page(p);
    out[i] = d.finish();
    cut[i] = cutting;
  }
  auto t = std::make_shared<Table>();
  t->rows = kept;
  t->names.reserve(columns.size());
  for (const auto& c : columns) t->names.push_back(c.name);
  t->columns.resize(columns.size());
  if (cutting) {
    Table decoded;
    decoded.rows = rows;
    std::vector<size_t> at;
    for (size_t i = 0; i < columns.size(); i++)
      if (cut[i]) {
        t->columns[i] = std::move(out[i]);
      } else if (!dicts[i] && wanted[i]) {
        decoded.names.push_back(columns[i].name);
        decoded.columns.push_back(std::move(out[i]));
        at.push_back(i);
      }
    const TablePtr cutNow = FilterByKeep(decoded, keep);
    for (size_t j = 0; j < at.size(); j++) t->columns[at[j]] = cutNow->columns[j];
  } else {
    for (size_t i = 0; i < columns.size(); i++)
      if (!dicts[i]) t->columns[i] = std::move(out[i]);
    keep.clear();
  }
  for (size_t i = 0; i < columns.size(); i++)
    if (dicts[i] && wanted[i]) t->columns[i] = GatherCodes(*dicts[i], keep, kept);
  TablePtr all = after.empty() ? t : Filter(*t, AllOf(after));
  if (!outputs) return all;
  auto picked = std::make_shared<Table>();
  picked->rows = all->rows;
  for (size_t k = 0; k < outputs->size(); k++) {
    const size_t o = size_t((*outputs)[k]);
    picked->names.push_back(outputNames && k < outputNames->size() ? (*outputNames)[k] : all->names.at(o));
    picked->columns.push_back(all->columns.at(o));
  }
  return picked;
}

}  // namespace basin
