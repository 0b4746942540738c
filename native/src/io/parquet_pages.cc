#include "io/parquet_pages.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace basin {
namespace {

constexpr int kSnappy = 1;
constexpr int kPlain = 0, kPlainDictionary = 2, kRleDictionary = 8;
constexpr int kBoolean = 0, kByteArray = 6;

bool Varint(const uint8_t* b, size_t n, size_t* at, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (*at >= n) return false;
    const uint8_t x = b[(*at)++];
    v |= uint64_t(x & 0x7f) << shift;
    if (!(x & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

// A raw Snappy block into `out` (or only walked, when out is null); false when its
// tags do not add up to the length it starts with (Snappy has no checksum).
bool Snappy(const uint8_t* b, size_t n, std::vector<uint8_t>* out, uint64_t* size) {
  size_t at = 0;
  uint64_t want;
  if (!Varint(b, n, &at, &want)) return false;
  if (out) out->resize(want);
  uint64_t made = 0;
  while (at < n) {
    const uint8_t tag = b[at++];
    uint64_t len;
    if ((tag & 3) == 0) {
      len = tag >> 2;
      if (len >= 60) {
        const size_t extra = len - 59;
        if (at + extra > n) return false;
        len = 0;
        for (size_t i = 0; i < extra; i++) len |= uint64_t(b[at + i]) << (8 * i);
        at += extra;
      }
      len += 1;
      if (len > n - at || made + len > want) return false;
      if (out) std::memcpy(out->data() + made, b + at, len);
      at += len;
    } else {
      const size_t offsetBytes = (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
      len = (tag & 3) == 1 ? ((tag >> 2) & 7) + 4 : (tag >> 2) + 1;
      if (at + offsetBytes > n) return false;
      uint64_t offset = (tag & 3) == 1 ? uint64_t(tag >> 5) << 8 : 0;
      for (size_t i = 0; i < offsetBytes; i++) offset |= uint64_t(b[at + i]) << (8 * i);
      at += offsetBytes;
      if (offset == 0 || offset > made || made + len > want) return false;  // a copy from before the start
      if (out && offset >= len) {
        std::memcpy(out->data() + made, out->data() + made - offset, len);
      } else if (out) {
        for (uint64_t i = 0; i < len; i++) (*out)[made + i] = (*out)[made - offset + i];  // overlapping: a repeat
      }
    }
    made += len;
  }
  *size = made;
  return made == want;
}

// Walks an RLE/bit-packed hybrid run of `count` values of `bits` bits in b[at, end),
// calling each(value, times); returns false when the runs do not fit (a bit-packed
// group's padding past `count` is allowed).
template <class Each>
bool Hybrid(const uint8_t* b, size_t at, size_t end, int bits, int64_t count, Each each) {
  const size_t valueBytes = size_t(bits + 7) / 8;
  int64_t seen = 0;
  while (seen < count) {
    uint64_t h;
    if (!Varint(b, end, &at, &h)) return false;
    if (h & 1) {
      const uint64_t groups = h >> 1;
      const uint64_t bytes = groups * uint64_t(bits);
      if (groups == 0 || bytes > end - at) return false;
      const int64_t take = std::min<int64_t>(int64_t(groups * 8), count - seen);
      const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
      for (int64_t i = 0; i < take; i++) {
        // The value's bits, from the (up to) 8 bytes that hold them.
        const uint64_t bit0 = uint64_t(i) * uint64_t(bits);
        const size_t from = at + size_t(bit0 >> 3);
        uint64_t w = 0;
        std::memcpy(&w, b + from, std::min<size_t>(8, at + size_t(bytes) - from));
        each((w >> (bit0 & 7)) & mask, 1);
      }
      at += bytes;
      seen += int64_t(groups * 8);
    } else {
      const uint64_t runs = h >> 1;
      if (runs == 0 || valueBytes > end - at) return false;
      uint64_t v = 0;
      for (size_t k = 0; k < valueBytes; k++) v |= uint64_t(b[at + k]) << (8 * k);
      at += valueBytes;
      each(v, std::min<int64_t>(int64_t(runs), count - seen));
      seen += int64_t(runs);
    }
  }
  return true;
}

std::string DamagedValues(const uint8_t* page, size_t n, const ParquetPage& p) {
  size_t at = 0;
  int64_t present = p.numValues;
  if (p.optional) {
    if (n < 4) return "a data page has no definition levels";
    uint32_t len;
    std::memcpy(&len, page, 4);
    if (len > n - 4) return "a data page's definition levels run past the page";
    present = 0;
    bool bad = false;
    if (!Hybrid(page, 4, 4 + len, 1, p.numValues, [&](uint64_t v, int64_t k) {
          if (v > 1) bad = true;
          present += int64_t(v) * k;
        }) ||
        bad)
      return "a data page's definition levels do not decode";
    at = 4 + len;
  }
  const size_t rest = n - at;
  static const int kWidth[] = {0, 4, 8, 12, 4, 8};
  if (p.encoding == kPlain && p.physical >= 1 && p.physical <= 5) {
    if (rest != uint64_t(present) * uint64_t(kWidth[p.physical]))
      return "a data page holds " + std::to_string(rest) + " bytes of values for " + std::to_string(present) + " values";
  } else if (p.encoding == kPlain && p.physical == kBoolean) {
    if (rest < uint64_t(present + 7) / 8) return "a data page holds too few bits of values";
  } else if (p.encoding == kPlain && p.physical == kByteArray) {
    for (int64_t i = 0; i < present; i++) {
      uint32_t len;
      if (n - at < 4) return "a data page's strings run past the page";
      std::memcpy(&len, page + at, 4);
      at += 4;
      if (len > n - at) return "a data page's strings run past the page";
      at += len;
    }
    if (at != n) return "a data page's strings do not fill it exactly";
  } else if ((p.encoding == kPlainDictionary || p.encoding == kRleDictionary) && present > 0) {
    if (rest < 1 || page[at] > 32) return "a data page's dictionary indices have no valid bit width";
    bool bad = false;
    if (!Hybrid(page, at + 1, n, page[at], present, [&](uint64_t v, int64_t) {
          if (int64_t(v) >= p.dictionary) bad = true;
        }) ||
        bad)
      return "a data page's dictionary indices do not decode or reach past the " + std::to_string(p.dictionary) +
             " entries of its dictionary";
  }
  return "";
}

}  // namespace

std::string DamagedParquetPage(const uint8_t* b, size_t n, const ParquetPage& p) {
  if (p.codec == kSnappy) {
    if (p.levels < 0 || uint64_t(p.levels) > n) return "a page's levels run past it";
    std::vector<uint8_t> page;
    uint64_t size = 0;
    if (!Snappy(b + p.levels, n - size_t(p.levels), p.checkValues ? &page : nullptr, &size) ||
        int64_t(size) != p.raw - p.levels)
      return "a Snappy page does not decompress to the " + std::to_string(p.raw) + " bytes it says";
    return p.checkValues ? DamagedValues(page.data(), page.size(), p) : "";
  }
  return p.checkValues ? DamagedValues(b, n, p) : "";
}

}  // namespace basin
