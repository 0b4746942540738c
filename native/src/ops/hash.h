// Key hashing shared by group-by, hash partitioning and joins. The hash of a row
// depends only on its key values (never on the process, thread or table layout), so
// partitions are deterministic and a row hashes the same in every operator.
//
// Row hash: the hash of the first key column, then Combine(h, hash of each next column).
// Column hash of a value: Mix64 of its canonical 64-bit form (ints and dates sign-
// extended, bools 0/1, floats with -0.0 → 0.0 and one NaN), strings HashBytes of their
// UTF-8 bytes; a null hashes to kNullHash. Equal keys (null == null) hash equal.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "store/column.h"

// Mix64 and Combine are also the GPU kernels' (cuda/groupby_kernel.cu).
#include "ops/host_device.h"

namespace basin {
namespace hash {

constexpr uint64_t kNullHash = 0x5bd1e9955bd1e995ULL;
constexpr uint64_t kSeed = 0xa0761d6478bd642fULL;
constexpr uint64_t kSeed2 = 0xe7037ed1a0b428dbULL;

// murmur3 fmix64: a bijection with good avalanche.
BASIN_HD inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

inline uint64_t Mum(uint64_t a, uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return uint64_t(r) ^ uint64_t(r >> 64);
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// wyhash-style hash of a byte string (reads only [p, p+len)).
inline uint64_t HashBytes(const uint8_t* p, size_t len) {
  uint64_t seed = kSeed ^ Mix64(len);
  size_t n = len;
  while (n > 16) {
    seed = Mum(Load64(p) ^ kSeed2, Load64(p + 8) ^ seed);
    p += 16;
    n -= 16;
  }
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    a = Load32(p);
    b = Load32(p + n - 4);
  } else if (n > 0) {
    a = (uint64_t(p[0]) << 16) | (uint64_t(p[n >> 1]) << 8) | uint64_t(p[n - 1]);
  }
  return Mum(Mum(a ^ kSeed2, b ^ seed) ^ kSeed, uint64_t(len) ^ kSeed2);
}

BASIN_HD inline uint64_t Combine(uint64_t h, uint64_t c) { return Mix64(h ^ (c + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))); }

// Canonical 64-bit form of a float key: -0.0 and 0.0 are one key, all NaNs are one key.
inline uint64_t CanonDouble(double d) {
  if (d == 0.0) return 0;
  if (std::isnan(d)) return 0x7ff8000000000000ULL;
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

// Canonical 64-bit form of row i of a fixed-width column (not strings).
inline uint64_t CanonFixed(const Column& c, int64_t i) {
  switch (c.type) {
    case DType::Float64: return CanonDouble(c.values<double>()[i]);
    case DType::Bool: return c.values<uint8_t>()[i];
    case DType::Date: return uint64_t(int64_t(c.values<int32_t>()[i]));
    default: return uint64_t(c.values<int64_t>()[i]);
  }
}

// Hashes of rows [begin, begin+count) of column c into out; when `combine` the column
// hash is folded into the hashes already there.
inline void HashColumn(const Column& c, int64_t begin, int64_t count, uint64_t* out, bool combine) {
  const uint8_t* valid = c.validity ? c.validity->data() + begin : nullptr;
  auto put = [&](int64_t i, uint64_t h) { out[i] = combine ? Combine(out[i], h) : h; };
  auto loop = [&](auto valueHash) {
    if (valid) {
      for (int64_t i = 0; i < count; i++) put(i, valid[i] ? valueHash(begin + i) : kNullHash);
    } else {
      for (int64_t i = 0; i < count; i++) put(i, valueHash(begin + i));
    }
  };
  switch (c.type) {
    case DType::String: {
      const int64_t* off = c.values<int64_t>();
      const uint8_t* chars = c.chars->data();
      loop([&](int64_t r) { return HashBytes(chars + off[r], size_t(off[r + 1] - off[r])); });
      break;
    }
    case DType::Float64: {
      const double* v = c.values<double>();
      loop([&](int64_t r) { return Mix64(CanonDouble(v[r])); });
      break;
    }
    case DType::Bool: {
      const uint8_t* v = c.values<uint8_t>();
      loop([&](int64_t r) { return Mix64(v[r]); });
      break;
    }
    case DType::Date: {
      const int32_t* v = c.values<int32_t>();
      loop([&](int64_t r) { return Mix64(uint64_t(int64_t(v[r]))); });
      break;
    }
    default: {
      const int64_t* v = c.values<int64_t>();
      loop([&](int64_t r) { return Mix64(uint64_t(v[r])); });
      break;
    }
  }
}

// Row hashes of rows [begin, begin+count) over key columns `keys` of t. With no keys
// every row hashes to kSeed.
inline void HashRows(const Table& t, const std::vector<int>& keys, int64_t begin, int64_t count, uint64_t* out) {
  if (keys.empty()) {
    for (int64_t i = 0; i < count; i++) out[i] = kSeed;
    return;
  }
  for (size_t k = 0; k < keys.size(); k++) HashColumn(t.columns[size_t(keys[k])], begin, count, out, k > 0);
}

// Partition of a row hash among `parts` (uses the high bits; hash tables use the low ones).
inline uint32_t PartitionOf(uint64_t h, uint32_t parts) { return uint32_t(((h >> 32) * uint64_t(parts)) >> 32); }

}  // namespace hash
}  // namespace basin
