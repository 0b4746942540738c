#include "ops/packed_keys.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "store/block_pool.h"

namespace basin {
namespace {

constexpr int64_t kMaxStringBytes = 7;

// A string of up to 7 bytes as an integer: its bytes (little-endian) above its length.
// `wide`: 8 bytes may be read at s (the rest are masked off).
inline uint64_t StringCode(const uint8_t* s, int64_t len, bool wide) {
  uint64_t v = 0;
  if (wide) {
    std::memcpy(&v, s, 8);
    v &= (uint64_t(1) << (8 * len)) - 1;
  } else {
    for (int64_t b = 0; b < len; b++) v |= uint64_t(s[b]) << (8 * b);
  }
  return (v << 3) | uint64_t(len);
}

// One key column's values as integers (offset from lo when packed), and their range.
struct KeyCodes {
  const Column* col;
  PoolVector<uint64_t> strings;  // a string column's codes (other types read their values)
  uint64_t lo = ~uint64_t(0), hi = 0;
  bool nulls = false;
  int shift = 0;
};

// The integer a fixed-width value packs as: order-preserving, so offsets from the
// smallest are small (int64's sign bit flipped).
template <class T>
inline uint64_t Code(T v) {
  if constexpr (std::is_same_v<T, uint8_t>) return v;
  else return uint64_t(int64_t(v)) ^ (uint64_t(1) << 63);
}

template <class T>
void RangeOf(KeyCodes& k, int64_t n) {
  const T* v = k.col->values<T>();
  const uint8_t* valid = k.col->validity ? k.col->validity->data() : nullptr;
  uint64_t lo = ~uint64_t(0), hi = 0;
  for (int64_t i = 0; i < n; i++) {
    if (valid && !valid[i]) {
      k.nulls = true;
      continue;
    }
    const uint64_t c = Code(v[i]);
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  k.lo = lo;
  k.hi = hi;
}

// The codes of a string column and their range; false when a string is longer than 7 bytes.
bool StringRange(KeyCodes& k, int64_t n) {
  const int64_t* off = k.col->values<int64_t>();
  const uint8_t* chars = k.col->chars ? k.col->chars->data() : nullptr;
  const uint8_t* valid = k.col->validity ? k.col->validity->data() : nullptr;
  const int64_t wideEnd = (n > 0 ? off[n] : 0) - 8;  // strings starting at or before it load 8 bytes
  k.strings.resize(size_t(n));
  uint64_t* codes = k.strings.data();
  uint64_t lo = ~uint64_t(0), hi = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t len = off[i + 1] - off[i];
    if (valid && !valid[i]) {
      k.nulls = true;
      codes[i] = 0;
      continue;
    }
    if (len > kMaxStringBytes) return false;
    const uint64_t c = StringCode(chars + off[i], len, off[i] <= wideEnd);
    codes[i] = c;
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  k.lo = lo;
  k.hi = hi;
  return true;
}

// Ors each row's offset code (nulls: one past the largest) into out, shifted into place.
template <class Get>
void PackInto(const KeyCodes& k, int64_t n, uint64_t* __restrict out, const Get& code) {
  const uint64_t lo = k.lo, null = k.hi - k.lo + 1;
  const int shift = k.shift;
  const uint8_t* valid = k.col->validity ? k.col->validity->data() : nullptr;
  if (valid) {
    for (int64_t i = 0; i < n; i++) out[i] |= (valid[i] ? code(i) - lo : null) << shift;
  } else {
    for (int64_t i = 0; i < n; i++) out[i] |= (code(i) - lo) << shift;
  }
}

int Bits(uint64_t span) { return span == 0 ? 0 : 64 - __builtin_clzll(span); }

}  // namespace

bool PackKeys(const Table& t, const std::vector<int>& keys, BufferPtr* out, uint64_t* span) {
  const int64_t n = t.rows;
  std::vector<KeyCodes> codes(keys.size());
  int bits = 0;
  *span = 0;
  for (size_t k = 0; k < keys.size(); k++) {
    KeyCodes& kc = codes[k];
    kc.col = &t.columns[size_t(keys[k])];
    switch (kc.col->type) {
      case DType::Float64: return false;
      case DType::String:
        if (!StringRange(kc, n)) return false;
        break;
      case DType::Bool: RangeOf<uint8_t>(kc, n); break;
      case DType::Date: RangeOf<int32_t>(kc, n); break;
      default: RangeOf<int64_t>(kc, n); break;
    }
    if (kc.lo > kc.hi) kc.lo = kc.hi = 0;  // every value null (or no rows)
    if (kc.nulls && kc.hi - kc.lo == ~uint64_t(0)) return false;
    const uint64_t top = kc.hi - kc.lo + (kc.nulls ? 1 : 0);  // the largest offset code
    kc.shift = bits;
    bits += Bits(top);
    if (bits > 64) return false;
    *span += top << kc.shift;  // the columns' bits do not overlap
  }
  *out = MakeBuffer(size_t(n) * sizeof(uint64_t));
  uint64_t* p = (*out)->as<uint64_t>();
  for (const KeyCodes& kc : codes) {
    const Column& c = *kc.col;
    auto pack = [&](const auto* v) { PackInto(kc, n, p, [v](int64_t i) { return Code(v[i]); }); };
    switch (c.type) {
      case DType::String: {
        const uint64_t* v = kc.strings.data();
        PackInto(kc, n, p, [v](int64_t i) { return v[i]; });
        break;
      }
      case DType::Bool: pack(c.values<uint8_t>()); break;
      case DType::Date: pack(c.values<int32_t>()); break;
      default: pack(c.values<int64_t>()); break;
    }
  }
  return true;
}

}  // namespace basin
