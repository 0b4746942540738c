#include "cuda/string_build_kernel.cuh"

#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "cuda/cuda_check.cuh"
#include "cuda/string_bytes.cuh"
#include "ops/case_map.h"

namespace basin {
namespace gpu {

namespace {

// Produce writes only when given somewhere to write: pass 1 sizes, pass 2 writes.

constexpr int kMaxParts = 8;

enum class StrFn : uint8_t { Concat, Lower, Upper, Slice, Replace };

// An argument: a string column (computed ones included), a literal, or a null literal.
struct StrPart {
  enum Kind : uint8_t { Column, Literal, Null } kind;
  ColumnView v;
  int64_t lit, litLen;  // Literal: its bytes in the job's constants
};

struct StrJob {
  StrFn fn;
  int nparts;
  StrPart parts[kMaxParts];
  const uint8_t* consts;
  int64_t pat, patLen, with, withLen;  // Replace: offsets into consts
  bool all;                            // Replace: every occurrence
  int64_t start, length;               // Slice
  bool toEnd;                          // Slice: no length
};

// expr_string.cc's Decode: a malformed or cut-off sequence decodes its lead byte as itself.
__device__ inline uint32_t Decode(const uint8_t*& p, const uint8_t* end) {
  const uint32_t c = *p++;
  const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  if (extra == 0 || end - p < extra) return c;
  uint32_t cp = c & (0x3F >> extra);
  for (int i = 0; i < extra; i++) cp = (cp << 6) | (*p++ & 0x3F);
  return cp;
}

// expr_string.cc's Encode; writes at out unless it is null; returns the bytes.
__device__ inline int Encode(uint32_t cp, uint8_t* out) {
  if (cp < 0x80) {
    if (out) out[0] = uint8_t(cp);
    return 1;
  }
  if (cp < 0x800) {
    if (out) out[0] = uint8_t(0xC0 | (cp >> 6)), out[1] = uint8_t(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    if (out) out[0] = uint8_t(0xE0 | (cp >> 12)), out[1] = uint8_t(0x80 | ((cp >> 6) & 0x3F)), out[2] = uint8_t(0x80 | (cp & 0x3F));
    return 3;
  }
  if (out)
    out[0] = uint8_t(0xF0 | (cp >> 18)), out[1] = uint8_t(0x80 | ((cp >> 12) & 0x3F)), out[2] = uint8_t(0x80 | ((cp >> 6) & 0x3F)),
    out[3] = uint8_t(0x80 | (cp & 0x3F));
  return 4;
}

// expr_string.cc's ByteOffset: where character k starts (n when k is the count).
__device__ inline int64_t ByteOffset(const uint8_t* s, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; i++)
    if ((s[i] & 0xC0) != 0x80 && k-- == 0) return i;
  return n;
}

// Appends n bytes at out + at (out null: only counts).
__device__ inline int64_t Put(uint8_t* out, int64_t at, const uint8_t* src, int64_t n) {
  if (out)
    for (int64_t k = 0; k < n; k++) out[at + k] = src[k];
  return at + n;
}

// Part k of row `row`: its bytes and length; false for a null.
__device__ inline bool PartAt(const StrJob& j, int k, int64_t row, const uint8_t*& s, int64_t& n) {
  const StrPart& part = j.parts[k];
  if (part.kind == StrPart::Null) return false;
  if (part.kind == StrPart::Literal) {
    s = j.consts + part.lit;
    n = part.litLen;
    return true;
  }
  return StringAt(part.v, row, s, n);
}

// Row `row` of the result: its length, its bytes written at out (when not null); ok
// false for a null (any null argument, as MapStrings and ConcatStrings).
__device__ int64_t Produce(const StrJob& j, int64_t row, uint8_t* out, bool& ok) {
  const uint8_t* s = nullptr;
  int64_t n = 0, at = 0;
  if (j.fn == StrFn::Concat) {
    for (int k = 0; k < j.nparts; k++) {
      if (!PartAt(j, k, row, s, n)) {
        ok = false;
        return 0;
      }
      at = Put(out, at, s, n);
    }
    return at;
  }
  if (!PartAt(j, 0, row, s, n)) {
    ok = false;
    return 0;
  }
  switch (j.fn) {
    case StrFn::Lower:
    case StrFn::Upper: {
      const uint8_t *p = s, *end = s + n;
      while (p < end) {
        const uint32_t cp = Decode(p, end);
        at += Encode(j.fn == StrFn::Upper ? ToUpper(cp) : ToLower(cp), out ? out + at : nullptr);
      }
      return at;
    }
    case StrFn::Slice: {
      // expr_string.cc's Slice (DuckDB substring with a 0-based start).
      const int64_t chars = CharCount(s, n);
      int64_t from = j.start >= 0 ? j.start : chars + j.start;
      int64_t to = j.toEnd ? chars : from + j.length;
      from = max(int64_t(0), min(from, chars));
      to = max(from, min(to, chars));
      const int64_t b = ByteOffset(s, n, from), e = ByteOffset(s, n, to);
      return Put(out, 0, s + b, e - b);
    }
    case StrFn::Replace: {
      const uint8_t* pat = j.consts + j.pat;
      if (j.patLen == 0) return Put(out, 0, s, n);
      int64_t pos = 0;
      for (int64_t hit; (hit = FindBytes(s, n, pat, j.patLen, pos)) >= 0;) {
        at = Put(out, at, s + pos, hit - pos);
        at = Put(out, at, j.consts + j.with, j.withLen);
        pos = hit + j.patLen;
        if (!j.all) break;
      }
      return Put(out, at, s + pos, n - pos);
    }
    default: return 0;
  }
}

// Pass 1: row sizes (the last entry 0, so the exclusive scan ends in the total) and validity.
__global__ void StringSizeKernel(StrJob j, int64_t n, int64_t* len, uint8_t* valid, unsigned long long* nulls) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row > n) return;
  if (row == n) {
    len[n] = 0;
    return;
  }
  bool ok = true;
  const int64_t size = Produce(j, row, nullptr, ok);
  len[row] = ok ? size : 0;
  valid[row] = ok;
  if (!ok) atomicAdd(nulls, 1ULL);
}

// Pass 2: the bytes (a null or empty row has nothing to write).
__global__ void StringWriteKernel(StrJob j, int64_t n, const int64_t* off, uint8_t* chars) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n || off[row + 1] == off[row]) return;
  bool ok = true;
  Produce(j, row, chars + off[row], ok);
}

}  // namespace

// Whether `e` is a string argument the builder reads: a string column, a string literal,
// or a string function it builds (built first, into a column).
std::string PartUnsupported(const Expr& e, const std::vector<DType>& types) {
  if (e.type != DType::String) return "a " + std::string(DTypeName(e.type)) + " argument of a string function";
  if (e.kind == ExprKind::Col) return e.index < 0 || size_t(e.index) >= types.size() ? "a column out of range" : "";
  if (e.kind == ExprKind::Lit) return "";
  if (e.kind == ExprKind::Fn) return StringUnsupported(e, types);
  return "a computed string argument of a string function";
}

// The string builder's function for e, or why it has none.
std::string StringFnOf(const Expr& e, StrFn& fn) {
  const std::string& name = e.op;
  auto flag = [&](const char* key) {
    auto it = e.options.find(key);
    return it != e.options.end() && it->second.kind == FnOption::Kind::Bool && it->second.flag;
  };
  auto has = [&](const char* key, FnOption::Kind kind) {
    auto it = e.options.find(key);
    return it != e.options.end() && it->second.kind == kind;
  };
  if (e.kind == ExprKind::Lit) fn = StrFn::Concat;  // a literal: the concatenation of itself
  else if (e.kind != ExprKind::Fn) return "a string result of this kind";
  else if (name == "concatStr") fn = StrFn::Concat;
  else if (name == "str.lower") fn = StrFn::Lower;
  else if (name == "str.upper") fn = StrFn::Upper;
  else if (name == "str.slice") fn = StrFn::Slice;
  else if (name == "str.replace") fn = StrFn::Replace;
  else return "the function " + name + "()";
  if (fn == StrFn::Replace && !flag("literal")) return "a regular expression replace";
  if (fn == StrFn::Replace && !(has("pattern", FnOption::Kind::String) && has("with", FnOption::Kind::String)))
    return "str.replace() without its pattern";
  if (fn == StrFn::Slice && !has("start", FnOption::Kind::Number)) return "str.slice() without its start";
  if (e.kind == ExprKind::Fn && (e.args.empty() || e.args.size() > size_t(kMaxParts) || (fn != StrFn::Concat && e.args.size() != 1)))
    return "a string function with " + std::to_string(e.args.size()) + " arguments";
  return "";
}

std::string StringUnsupported(const Expr& e, const std::vector<DType>& types) {
  StrFn fn;
  std::string why = StringFnOf(e, fn);
  if (e.kind == ExprKind::Fn)
    for (const Expr& a : e.args)
      if (why.empty()) why = PartUnsupported(a, types);
  return why;
}

// Builds the string column e over t's rows (StringUnsupported(e) is "").
DColumn BuildStrings(DTable& t, const Expr& e) {
  std::vector<DType> types;
  for (auto& c : t.cols) types.push_back(c.type);
  std::string why = StringUnsupported(e, types);
  if (!why.empty()) throw BasinError("BASIN_INTERNAL", "GPU: cannot build strings from " + why);
  StrJob j{};
  StringFnOf(e, j.fn);
  std::string consts;
  auto text = [&](const std::string& s, int64_t& at, int64_t& len) {
    at = int64_t(consts.size());
    len = int64_t(s.size());
    consts += s;
  };
  std::vector<DColumn> nested;  // string functions built for the arguments
  const std::vector<Expr> self = e.kind == ExprKind::Lit ? std::vector<Expr>{e} : std::vector<Expr>{};
  const std::vector<Expr>& args = e.kind == ExprKind::Lit ? self : e.args;
  j.nparts = int(args.size());
  for (size_t k = 0; k < args.size(); k++) {
    const Expr& a = args[k];
    StrPart& part = j.parts[k];
    if (a.kind == ExprKind::Lit) {
      part.kind = a.isNull ? StrPart::Null : StrPart::Literal;
      if (!a.isNull) text(a.text, part.lit, part.litLen);
    } else {
      part.kind = StrPart::Column;
      if (a.kind == ExprKind::Col) {
        part.v = t.view(a.index);
      } else {
        nested.push_back(BuildStrings(t, a));
        part.v = ComputedView(nested.back());
      }
    }
  }
  if (j.fn == StrFn::Replace) {
    text(e.options.at("pattern").text, j.pat, j.patLen);
    text(e.options.at("with").text, j.with, j.withLen);
    j.all = e.options.count("all") && e.options.at("all").flag;
  }
  if (j.fn == StrFn::Slice) {
    // As expr_string.cc: int64_t(num) of the options resolve_fn.ts checked are integers.
    j.start = int64_t(e.options.at("start").num);
    auto len = e.options.find("length");
    j.toEnd = len == e.options.end() || len->second.kind != FnOption::Kind::Number;
    j.length = j.toEnd ? 0 : int64_t(len->second.num);
  }
  DBuf constBuf = t.dev.alloc(std::max<size_t>(consts.size(), 1), "a string function's literals");
  if (!consts.empty()) ToDevice(t.dev, constBuf->data(), consts.data(), consts.size());
  j.consts = constBuf->as<uint8_t>();

  const int64_t n = t.rows;
  auto s = t.dev.stream();
  auto bufs = std::make_shared<CachedColumn>();
  DBuf len = t.dev.alloc(size_t(n + 1) * 8, "a string result");
  bufs->data = t.dev.alloc(size_t(n + 1) * 8, "a string result");
  bufs->validity = t.dev.alloc(size_t(std::max<int64_t>(n, 1)), "a string result");
  DBuf nulls = t.dev.alloc(8, "a null count");
  Check(t.dev.device(), "clear a null count", cudaMemsetAsync(nulls->data(), 0, 8, s));
  StringSizeKernel<<<Blocks(n + 1), kBlock, 0, s>>>(j, n, len->as<int64_t>(), bufs->validity->as<uint8_t>(), nulls->as<unsigned long long>());
  int64_t* off = bufs->data->as<int64_t>();
  RunCub(t.dev, "a string result", [&](void* scratch, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(scratch, bytes, len->as<int64_t>(), off, n + 1, s);
  });
  int64_t total = 0;
  unsigned long long nullCount = 0;
  ToHost(t.dev, &total, off + n, 8);
  ToHost(t.dev, &nullCount, nulls->data(), 8);
  bufs->chars = t.dev.alloc(size_t(std::max<int64_t>(total, 1)), "a string result");
  if (n > 0 && total > 0) StringWriteKernel<<<Blocks(n), kBlock, 0, s>>>(j, n, off, bufs->chars->as<uint8_t>());
  // The literals and nested columns must outlive the write pass.
  Sync(t.dev, "a string result");
  if (nullCount == 0) bufs->validity.reset();
  DColumn out;
  out.type = DType::String;
  out.length = n;
  out.bufs = std::move(bufs);
  return out;
}


}  // namespace gpu
}  // namespace basin
