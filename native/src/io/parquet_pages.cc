#include "io/parquet_pages.h"

#include "io/parquet_codec.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace basin {
namespace {

constexpr int kSnappy = 1;
constexpr int kPlain = 0, kPlainDictionary = 2, kRleDictionary = 8;
constexpr int kBoolean = 0, kByteArray = 6;

std::string DamagedValues(const uint8_t* page, size_t n, const ParquetPage& p) {
  size_t at = 0;
  int64_t present = p.numValues;
  // No writer makes pages near this size; a count past it is a damaged header.
  if (p.numValues < 0 || p.numValues > (int64_t(1) << 28)) return "a data page claims " + std::to_string(p.numValues) + " values";
  if (p.optional) {
    if (n < 4) return "a data page has no definition levels";
    uint32_t len;
    std::memcpy(&len, page, 4);
    if (len > n - 4) return "a data page's definition levels run past the page";
    std::vector<uint32_t> levels(size_t(p.numValues));
    if (!HybridToArray(page, 4, 4 + len, 1, p.numValues, levels.data()))
      return "a data page's definition levels do not decode";
    present = 0;
    for (uint32_t v : levels) present += v;
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
    std::vector<uint32_t> indices(static_cast<size_t>(present));
    bool bad = !HybridToArray(page, at + 1, n, page[at], present, indices.data());
    for (size_t k = 0; k < indices.size() && !bad; k++) bad = int64_t(indices[k]) >= p.dictionary;
    if (bad)
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
