// Parquet's low-level encodings, shared by the page checks and the decoder:
// ULEB128 varints, raw Snappy blocks and the RLE/bit-packed hybrid of levels and
// dictionary indices. Every read is bounds-checked: callers get false, never a
// read past the bytes they passed.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace basin {

// A ULEB128 varint of up to 64 bits.
inline bool Varint64(const uint8_t* b, size_t n, size_t* at, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
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

// A copy that overlaps its own output (offset < len): out[i] = out[i - offset] for i
// in [0, len). The pattern is first doubled until it spans 8 bytes (each doubling is a
// non-overlapping copy of what is written), then copied 8 bytes at a time: runs of one
// repeated value, common in sorted or low-cardinality columns, are long copies of a
// short pattern.
inline void RepeatCopy(uint8_t* out, size_t offset, size_t len) {
  const uint8_t* const src = out - offset;
  uint8_t* d = out;
  size_t left = len;
  size_t dist = offset;  // a multiple of the period, so d - dist repeats d's bytes
  while (dist < 8 && left > 0) {
    const size_t c = dist < left ? dist : left;
    std::memcpy(d, src, c);
    d += c;
    left -= c;
    dist *= 2;
  }
  for (; left >= 8; left -= 8, d += 8) std::memcpy(d, d - dist, 8);
  for (size_t i = 0; i < left; i++) d[i] = d[i - dist];
}

// Per copy tag: its length (bits 0-6), how many offset bytes follow it (bits 8-10) and
// the offset's high bits that copy-1 tags carry (bits 11 on).
struct SnappyCopyTags {
  uint32_t entry[256] = {};
  constexpr SnappyCopyTags() {
    for (uint32_t t = 0; t < 256; t++) {
      if ((t & 3) == 1) entry[t] = (((t >> 2) & 7) + 4) | (1u << 8) | ((t >> 5) << 8 << 11);
      else if ((t & 3) == 2) entry[t] = ((t >> 2) + 1) | (2u << 8);
      else if ((t & 3) == 3) entry[t] = ((t >> 2) + 1) | (4u << 8);
    }
  }
};
inline constexpr SnappyCopyTags kSnappyCopyTags{};

// Snappy tags while both sides have room for any tag's slop: up to 5 bytes of tag and
// offset, or a 60-byte literal, in; a 64-byte copy plus 16 bytes of overrun out. Tags
// cost a literal-or-copy branch, a table entry and one unaligned load of the offset
// bytes; copies 16 bytes at a time when the source is 16 or more back. Long literals
// and the block's last bytes are left to the careful loop (SnappyInto). Returns false
// on a copy reaching before the output's start.
inline bool SnappyFast(const uint8_t*& ip, const uint8_t* ie, uint8_t*& op, uint8_t* const out, uint8_t* oe) {
  if (ie - ip < 66 || oe - op < 80) return true;
  const uint8_t* const ilimit = ie - 66;
  uint8_t* const olimit = oe - 80;
  while (ip <= ilimit && op <= olimit) {
    const uint8_t tag = *ip;
    if ((tag & 3) == 0) {
      const size_t len = size_t(tag >> 2) + 1;
      if (len > 60) return true;  // its length follows in 1-4 bytes: the careful loop reads it
      std::memcpy(op, ip + 1, 16);
      for (size_t i = 16; i < len; i += 16) std::memcpy(op + i, ip + 1 + i, 16);
      ip += 1 + len;
      op += len;
      continue;
    }
    const uint32_t e = kSnappyCopyTags.entry[tag];
    const size_t len = e & 0x7f, extra = (e >> 8) & 7;
    uint32_t word;
    std::memcpy(&word, ip + 1, 4);  // Snappy's offsets are little-endian, as the host is
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "SnappyFast reads offsets as host integers");
    const size_t offset = (e >> 11) + (word & (0xffffffffu >> (32 - 8 * extra)));
    ip += 1 + extra;
    if (offset - 1 >= size_t(op - out)) return false;  // offset 0, or before the start
    const uint8_t* src = op - offset;
    if (offset >= 16) {
      // Each 16-byte step reads bytes already written (they lie at least 16 back).
      std::memcpy(op, src, 16);
      for (size_t i = 16; i < len; i += 16) std::memcpy(op + i, src + i, 16);
    } else if (offset >= 8) {
      for (size_t i = 0; i < len; i += 8) std::memcpy(op + i, src + i, 8);
    } else {
      RepeatCopy(op, offset, len);
    }
    op += len;
  }
  return true;
}

// A raw Snappy block's tags (after its length varint, from b[at]) into out[0, want):
// false unless they make exactly `want` bytes (Snappy has no checksum). Most tags go
// through SnappyFast; this loop checks every bound, for long literals and the end.
inline bool SnappyInto(const uint8_t* b, size_t n, size_t at, uint8_t* out, uint64_t want) {
  const uint8_t* ip = b + at;
  const uint8_t* const ie = b + n;
  uint8_t* op = out;
  uint8_t* const oe = out + want;
  while (ip < ie) {
    if (!SnappyFast(ip, ie, op, out, oe)) return false;
    if (ip >= ie) break;
    const uint8_t tag = *ip++;
    size_t len;
    if ((tag & 3) == 0) {
      len = size_t(tag >> 2) + 1;
      if (len > 60) {
        const size_t extra = len - 60;
        if (size_t(ie - ip) < extra) return false;
        len = 0;
        for (size_t i = 0; i < extra; i++) len |= size_t(ip[i]) << (8 * i);
        ip += extra;
        len += 1;
      }
      if (size_t(ie - ip) < len || size_t(oe - op) < len) return false;
      std::memcpy(op, ip, len);
      ip += len;
      op += len;
      continue;
    }
    size_t offset;
    if ((tag & 3) == 1) {
      if (ip >= ie) return false;
      len = size_t((tag >> 2) & 7) + 4;
      offset = (size_t(tag >> 5) << 8) | *ip++;
    } else if ((tag & 3) == 2) {
      if (ie - ip < 2) return false;
      len = size_t(tag >> 2) + 1;
      offset = size_t(ip[0]) | size_t(ip[1]) << 8;
      ip += 2;
    } else {
      if (ie - ip < 4) return false;
      len = size_t(tag >> 2) + 1;
      offset = size_t(ip[0]) | size_t(ip[1]) << 8 | size_t(ip[2]) << 16 | size_t(ip[3]) << 24;
      ip += 4;
    }
    if (offset == 0 || offset > size_t(op - out) || size_t(oe - op) < len) return false;  // before the start, past the end
    if (offset >= len) std::memcpy(op, op - offset, len);
    else RepeatCopy(op, offset, len);
    op += len;
  }
  return op == oe;
}

// A raw Snappy block's length, from its varint (b[*at] on; *at moves past it).
inline bool SnappyLength(const uint8_t* b, size_t n, size_t* at, uint64_t* want) {
  return Varint64(b, n, at, want) && *want <= (uint64_t(1) << 32);
}

// A raw Snappy block into `out` (or only checked, when out is null; then into a
// scratch buffer); *size is its length.
inline bool Snappy(const uint8_t* b, size_t n, std::vector<uint8_t>* out, uint64_t* size) {
  size_t at = 0;
  uint64_t want;
  if (!SnappyLength(b, n, &at, &want)) return false;
  std::vector<uint8_t> scratch;
  std::vector<uint8_t>& dst = out ? *out : scratch;
  dst.resize(size_t(want));
  *size = want;
  return SnappyInto(b, n, at, dst.data(), want);
}

// The hybrid's `count` values (each below 2^bits, bits <= 32) into out[0, count):
// runs are filled, bit-packed groups unpacked with one 8-byte load per value where
// the bytes allow. False when the runs do not fit in b[at, end).
// `groups` groups of 8 values of B bits each from in (8 readable bytes must follow
// the last group), with the shifts known at compile time.
template <int B>
inline void UnpackGroupsOf(const uint8_t* in, int64_t groups, uint32_t* out) {
  constexpr uint64_t mask = (uint64_t(1) << B) - 1;
  for (int64_t g = 0; g < groups; g++, in += B, out += 8) {
    for (int j = 0; j < 8; j++) {
      uint64_t w;
      std::memcpy(&w, in + (j * B) / 8, 8);
      out[j] = uint32_t((w >> ((j * B) & 7)) & mask);
    }
  }
}

template <int... B>
inline void UnpackGroupsDispatch(const uint8_t* in, int bits, int64_t groups, uint32_t* out,
                                 std::integer_sequence<int, B...>) {
  (void)((bits == B + 1 ? (UnpackGroupsOf<B + 1>(in, groups, out), true) : false) || ...);
}

// Bit-packed groups of the hybrid for 1 <= bits <= 32.
inline void UnpackGroups(const uint8_t* in, int bits, int64_t groups, uint32_t* out) {
  UnpackGroupsDispatch(in, bits, groups, out, std::make_integer_sequence<int, 32>{});
}

inline bool HybridToArray(const uint8_t* b, size_t at, size_t end, int bits, int64_t count, uint32_t* out) {
  if (bits < 0 || bits > 32) return false;
  if (bits == 0) {
    std::fill(out, out + count, 0u);
    return true;
  }
  const size_t valueBytes = size_t(bits + 7) / 8;
  const uint64_t mask = (uint64_t(1) << bits) - 1;
  int64_t seen = 0;
  while (seen < count) {
    uint64_t h;
    if (!Varint64(b, end, &at, &h)) return false;
    if (h & 1) {
      const uint64_t groups = h >> 1;
      const uint64_t bytes = groups * uint64_t(bits);
      if (groups == 0 || groups > (uint64_t(1) << 40) || bytes > end - at) return false;
      const int64_t take = std::min<int64_t>(int64_t(groups * 8), count - seen);
      const uint8_t* base = b + at;
      // Reads may run past the run into the rest of the buffer (the bits beyond are
      // masked off): whole groups with 8 readable bytes after them go through the
      // unrolled unpacker, only the buffer's last few values byte by byte. (Bounding
      // reads by the run sent short runs, as writers emit between repeats, through a
      // libc memcpy per value.)
      const size_t readable = end - at;
      int64_t i = 0;
      if (readable >= 8) {
        const int64_t fast = std::min<int64_t>(take / 8, int64_t((readable - 8) / uint64_t(bits)));
        UnpackGroups(base, bits, fast, out + seen);
        i = fast * 8;
      }
      for (; i < take; i++) {
        const uint64_t bit0 = uint64_t(i) * uint64_t(bits);
        const size_t from = size_t(bit0 >> 3);
        uint64_t w = 0;
        if (from + 8 <= readable) std::memcpy(&w, base + from, 8);
        else
          for (size_t k = 0; from + k < readable; k++) w |= uint64_t(base[from + k]) << (8 * k);
        out[seen + i] = uint32_t((w >> (bit0 & 7)) & mask);
      }
      at += bytes;
      seen += take;
      if (take < int64_t(groups * 8)) break;  // padding past `count`
    } else {
      const uint64_t runs = h >> 1;
      if (runs == 0 || valueBytes > end - at) return false;
      uint64_t v = 0;
      for (size_t k = 0; k < valueBytes; k++) v |= uint64_t(b[at + k]) << (8 * k);
      if (v > mask) return false;
      at += valueBytes;
      const int64_t take = std::min<int64_t>(int64_t(std::min<uint64_t>(runs, uint64_t(count - seen))), count - seen);
      std::fill(out + seen, out + seen + take, uint32_t(v));
      seen += take;
    }
  }
  return true;
}


inline int64_t ZigZag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

// DELTA_BINARY_PACKED: `count` values from b[*at, n) into out (as 64-bit two's
// complement, wrapping like the writer's arithmetic); *at moves past them.
inline bool DeltaBinaryPacked(const uint8_t* b, size_t n, size_t* at, int64_t count, std::vector<int64_t>* out) {
  uint64_t blockSize, miniblocks, total, first;
  if (!Varint64(b, n, at, &blockSize) || !Varint64(b, n, at, &miniblocks) || !Varint64(b, n, at, &total) ||
      !Varint64(b, n, at, &first))
    return false;
  if (total != uint64_t(count) || miniblocks == 0 || blockSize == 0 || blockSize % 128 != 0 ||
      blockSize % miniblocks != 0 || (blockSize / miniblocks) % 32 != 0 || blockSize > (1u << 20))
    return false;
  out->resize(size_t(count));
  if (count == 0) return true;
  const uint64_t perMini = blockSize / miniblocks;
  uint64_t prev = uint64_t(ZigZag(first));
  (*out)[0] = int64_t(prev);
  int64_t made = 1;
  std::vector<uint8_t> widths(static_cast<size_t>(miniblocks));
  while (made < count) {
    uint64_t zz;
    if (!Varint64(b, n, at, &zz) || miniblocks > n - *at) return false;
    const uint64_t minDelta = uint64_t(ZigZag(zz));
    std::memcpy(widths.data(), b + *at, size_t(miniblocks));
    *at += size_t(miniblocks);
    for (uint64_t m = 0; m < miniblocks && made < count; m++) {
      const int w = widths[size_t(m)];
      if (w > 64) return false;
      const uint64_t bytes = perMini * uint64_t(w) / 8;
      if (bytes > n - *at) return false;
      const uint8_t* base = b + *at;
      const int64_t take = std::min<int64_t>(int64_t(perMini), count - made);
      for (int64_t i = 0; i < take; i++) {
        uint64_t v = 0;
        const uint64_t bit0 = uint64_t(i) * uint64_t(w);
        for (int k = 0; k < w;) {  // up to 8 bits at a time, from the byte holding bit0 + k
          const uint64_t bit = bit0 + uint64_t(k);
          const int avail = 8 - int(bit & 7);
          const int got = std::min(avail, w - k);
          v |= uint64_t((base[bit >> 3] >> (bit & 7)) & ((1u << got) - 1)) << k;
          k += got;
        }
        prev += minDelta + v;
        (*out)[size_t(made + i)] = int64_t(prev);
      }
      made += take;
      *at += size_t(bytes);
    }
  }
  return true;
}

}  // namespace basin
