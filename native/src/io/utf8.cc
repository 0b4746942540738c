#include "io/utf8.h"

#include <cstring>

namespace basin {
namespace {

// The length of the valid sequence at p[0..n), or 0 when it is not one.
size_t SequenceLength(const uint8_t* p, size_t n) {
  const uint8_t c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](size_t i, uint8_t lo = 0x80, uint8_t hi = 0xBF) { return i < n && p[i] >= lo && p[i] <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no UTF-16 surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;  // ≤ U+10FFFF
  return 0;
}

}  // namespace

size_t FirstInvalidUtf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    // ASCII runs eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    const size_t len = SequenceLength(p + i, n - i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

std::string Latin1ToUtf8(const char* p, size_t n) {
  std::string out;
  out.reserve(n + n / 8);
  for (size_t i = 0; i < n; i++) {
    const uint8_t c = uint8_t(p[i]);
    if (c < 0x80) {
      out.push_back(char(c));
    } else {
      out.push_back(char(0xC0 | (c >> 6)));
      out.push_back(char(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::string ReplaceInvalidUtf8(const char* p, size_t n) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  std::string out;
  out.reserve(n);
  size_t i = 0;
  while (i < n) {
    const size_t bad = i + FirstInvalidUtf8(u + i, n - i);
    out.append(p + i, bad - i);
    if (bad >= n) break;
    out.append("\xEF\xBF\xBD");
    // Skip the lead byte and the continuation bytes that followed it.
    i = bad + 1;
    while (i < n && (u[i] & 0xC0) == 0x80) i++;
  }
  return out;
}

}  // namespace basin
