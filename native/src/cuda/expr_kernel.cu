#include "cuda/expr_kernel.cuh"

#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/cuda_check.cuh"
#include "cuda/string_build_kernel.cuh"
#include "cuda/string_bytes.cuh"
#include "ops/civil_time.h"
#include "ops/float_order.h"
#include "ops/literal_pattern.h"

namespace basin {
namespace gpu {

namespace {

enum class Op : uint8_t {
  Col, Lit, StrLit, StrLen, StrMatch, Add, Sub, Mul, Div, Mod, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Neg, Not, IsNull, IsNotNull,
  FillNull, ToFloat, ToInt, ToBool, ToDate, DateToTs, TsToDate, Abs, Sqrt, Exp, Log, Log10, Log2, LogBase, Pow,
  DatePart, DtFloor, DtOffset, DtDiff
};

// StrMatch's `arg`: where the pattern must sit (neither: anywhere, both: the whole string).
enum Anchor : uint8_t { kAnchorStart = 1, kAnchorEnd = 2 };

// DatePart's `arg`: which part of a timestamp (dates are widened to midnight first).
enum Part : uint8_t { kYear, kMonth, kDay, kWeekday, kHour, kMinute, kSecond };

// isFloat: whether the operands (arithmetic, comparisons, neg, abs, toBool) are doubles.
struct Instr {
  Op op;
  bool isFloat;
  bool litValid;
  uint8_t arg;   // DatePart: the Part; StrMatch: Anchor bits; comparisons: 1 for strings
  int32_t slot;  // Col: index into the program's column views
  int64_t i;     // StrLit: offset of its bytes in the program's constants
  double f;
  int64_t len;   // StrLit: its length in bytes
};

constexpr int kMaxProgram = 64;
constexpr int kMaxStack = 16;
constexpr int kMaxCols = 16;

struct Program {
  Instr code[kMaxProgram];
  ColumnView cols[kMaxCols];
  const uint8_t* consts = nullptr;  // string literals' bytes (a device buffer)
  int length = 0, ncols = 0;
};

bool IsFloat(DType t) { return t == DType::Float64; }
bool IsIntLike(DType t) { return t == DType::Int64 || t == DType::Timestamp || t == DType::Date || t == DType::Bool; }


// Builds the program; returns "" or why it cannot (then nothing is launched).
class Compiler {
 public:
  Compiler(const std::vector<DType>& types, Program* p) : types_(types), p_(p) {}
  std::vector<int> columns;  // input columns in slot order; -1 - k: temps[k]
  std::string consts;        // string literals' bytes, uploaded next to the program
  // String-valued functions inside the expression: built into columns first (a string
  // builder each), then read through their slots like input columns.
  std::vector<const Expr*> temps;

  std::string compile(const Expr& e) {
    std::string why = emit(e);
    if (why.empty() && maxDepth_ > kMaxStack) why = "the expression is too deep for the GPU kernel";
    return why;
  }

 private:
  std::string push(Instr in, int delta) {
    if (!p_) {
      depth_ += delta;
      maxDepth_ = std::max(maxDepth_, depth_);
      count_++;
      return count_ > kMaxProgram ? "the expression is too long for the GPU kernel" : "";
    }
    if (p_->length >= kMaxProgram) return "the expression is too long for the GPU kernel";
    p_->code[p_->length++] = in;
    depth_ += delta;
    maxDepth_ = std::max(maxDepth_, depth_);
    return "";
  }
  Instr make(Op op, bool isFloat = false) { return Instr{op, isFloat, false, 0, -1, 0, 0.0, 0}; }
  // The program's slot for input column `index` (each column is read through one view).
  std::string slotOf(int index, int32_t& slot) {
    if (index < 0 || size_t(index) >= types_.size()) return "a column out of range";
    for (size_t i = 0; i < columns.size(); i++)
      if (columns[i] == index) {
        slot = int32_t(i);
        return "";
      }
    if (columns.size() >= size_t(kMaxCols)) return "more columns than the GPU kernel reads";
    slot = int32_t(columns.size());
    columns.push_back(index);
    return "";
  }
  // Converts the value on top of the stack from type `from` to `to` (numeric widening only).
  std::string convert(DType from, DType to) {
    if (from == to) return "";
    if (to == DType::Float64 && IsIntLike(from)) return push(make(Op::ToFloat), 0);
    if (to == DType::Int64 && IsIntLike(from)) return "";
    if (to == DType::Int64 && from == DType::Float64) return push(make(Op::ToInt), 0);
    return std::string("a ") + DTypeName(from) + " → " + DTypeName(to) + " conversion";
  }

  std::string emit(const Expr& e) {
    std::string why;
    auto sub = [&](const Expr& a) {
      if (why.empty()) why = emit(a);
    };
    switch (e.kind) {
      case ExprKind::Col: {
        if (e.index < 0 || size_t(e.index) >= types_.size()) return "a column out of range";
        Instr in = make(Op::Col);
        std::string why = slotOf(e.index, in.slot);
        return why.empty() ? push(in, 1) : why;
      }
      case ExprKind::Lit: {
        if (e.type == DType::String && !e.isNull) return pushText(e.text);
        Instr in = make(Op::Lit, IsFloat(e.type));
        in.litValid = !e.isNull;
        if (e.type == DType::Float64) in.f = e.num;
        else if (e.type == DType::Bool) in.i = e.num != 0;
        else in.i = e.integer;
        return push(in, 1);
      }
      case ExprKind::Binary: {
        const Expr& l = e.args[0];
        const Expr& r = e.args[1];
        const std::string& op = e.op;
        const bool cmp = op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
        if (l.type == DType::String || r.type == DType::String) {
          // Bytewise, as std::string_view::compare (expr.cc CompareWith).
          if (!cmp || l.type != r.type) return "a string operator " + op;
          sub(l);
          sub(r);
          if (!why.empty()) return why;
          Instr in = make(CmpOp(op));
          in.arg = 1;
          return push(in, -1);
        }
        if (op == "and" || op == "or") {
          sub(l);
          sub(r);
          if (!why.empty()) return why;
          return push(make(op == "and" ? Op::And : Op::Or), -1);
        }
        // As the CPU kernels: comparisons are in doubles if either side is a double;
        // arithmetic in the result's type.
        const DType work = cmp ? (IsFloat(l.type) || IsFloat(r.type) ? DType::Float64 : DType::Int64) : e.type;
        if (work != DType::Float64 && work != DType::Int64) return std::string(DTypeName(work)) + " arithmetic";
        if (!cmp && op == "div" && work != DType::Float64) return "integer division";
        sub(l);
        if (why.empty()) why = convert(l.type, work);
        sub(r);
        if (why.empty()) why = convert(r.type, work);
        if (!why.empty()) return why;
        static const std::pair<const char*, Op> kOps[] = {{"add", Op::Add}, {"sub", Op::Sub}, {"mul", Op::Mul}, {"div", Op::Div},
                                                         {"mod", Op::Mod}, {"eq", Op::Eq},   {"ne", Op::Ne},   {"lt", Op::Lt},
                                                         {"le", Op::Le},   {"gt", Op::Gt},   {"ge", Op::Ge}};
        for (auto& [name, code] : kOps)
          if (op == name) return push(make(code, work == DType::Float64), -1);
        return "the operator " + op;
      }
      case ExprKind::Unary: {
        const Expr& a = e.args[0];
        if (a.type == DType::String && e.op != "isNull" && e.op != "isNotNull") return "the operator " + e.op + " on a string";
        sub(a);
        if (!why.empty()) return why;
        if (e.op == "isNull") return push(make(Op::IsNull), 0);
        if (e.op == "isNotNull") return push(make(Op::IsNotNull), 0);
        if (e.op == "not") return push(make(Op::Not), 0);
        if (e.op == "neg") {
          if (!IsFloat(e.type) && e.type != DType::Int64) return "negating a " + std::string(DTypeName(e.type));
          if (why.empty()) why = convert(a.type, e.type);
          return why.empty() ? push(make(Op::Neg, IsFloat(e.type)), 0) : why;
        }
        return "the operator " + e.op;
      }
      case ExprKind::FillNull: {
        // Strings too: the string value (bytes and length) moves with its validity.
        if (e.type == DType::String && (e.args[0].type != DType::String || e.args[1].type != DType::String))
          return "a string fillNull of another type";
        sub(e.args[0]);
        if (why.empty()) why = convert(e.args[0].type, e.type);
        sub(e.args[1]);
        if (why.empty()) why = convert(e.args[1].type, e.type);
        return why.empty() ? push(make(Op::FillNull), -1) : why;
      }
      case ExprKind::Cast: {
        const DType from = e.args[0].type, to = e.type;
        if (from == DType::String || to == DType::String) return "a cast from or to string";
        sub(e.args[0]);
        if (!why.empty() || from == to) return why;
        // Only casts that cannot fail (float → int64 can: it stays on the CPU).
        if (to == DType::Float64) return push(make(Op::ToFloat), 0);
        if (to == DType::Bool) return push(make(Op::ToBool, IsFloat(from)), 0);
        if (from == DType::Float64) return "a cast from float64 to " + std::string(DTypeName(to));
        if (to == DType::Int64) return "";
        if (to == DType::Date) return push(make(from == DType::Timestamp ? Op::TsToDate : Op::ToDate), 0);
        if (to == DType::Timestamp) return from == DType::Date ? push(make(Op::DateToTs), 0) : "";
        return "a cast to " + std::string(DTypeName(to));
      }
      case ExprKind::Fn: {
        const std::string& name = e.op;
        if (name == "abs") {
          if (e.type != DType::Float64 && e.type != DType::Int64) return "abs of a " + std::string(DTypeName(e.type));
          sub(e.args[0]);
          if (why.empty()) why = convert(e.args[0].type, e.type);
          return why.empty() ? push(make(Op::Abs, IsFloat(e.type)), 0) : why;
        }
        if (name.rfind("dt.", 0) == 0) return emitDate(e);
        if (name.rfind("str.", 0) == 0 || name == "concatStr") return emitStringFn(e);
        Op op;
        if (name == "sqrt") op = Op::Sqrt;
        else if (name == "exp") op = Op::Exp;
        else if (name == "pow") op = Op::Pow;
        else if (name == "log") {
          auto it = e.options.find("base");
          if (it == e.options.end() || it->second.kind == FnOption::Kind::Null) op = Op::Log;
          else if (it->second.num == 10) op = Op::Log10;
          else if (it->second.num == 2) op = Op::Log2;
          else op = Op::LogBase;
        } else {
          return "the function " + name + "()";
        }
        for (const Expr& a : e.args) {
          if (a.type == DType::String) return "a string argument";
          sub(a);
          if (why.empty()) why = convert(a.type, DType::Float64);
        }
        if (!why.empty()) return why;
        Instr in = make(op, true);
        if (op == Op::LogBase) in.f = std::log(e.options.at("base").num);
        return push(in, 1 - int(e.args.size()));
      }
    }
    return "an unknown expression";
  }

  static Op CmpOp(const std::string& op) {
    return op == "eq" ? Op::Eq : op == "ne" ? Op::Ne : op == "lt" ? Op::Lt : op == "le" ? Op::Le : op == "gt" ? Op::Gt : Op::Ge;
  }

  // Pushes a string literal: its bytes go to the program's constants.
  std::string pushText(const std::string& text) {
    Instr in = make(Op::StrLit);
    in.litValid = true;
    in.i = int64_t(consts.size());
    in.len = int64_t(text.size());
    consts += text;
    return push(in, 1);
  }

  static const FnOption* Option(const Expr& e, const char* name, FnOption::Kind kind) {
    auto it = e.options.find(name);
    return it == e.options.end() || it->second.kind != kind ? nullptr : &it->second;
  }

  // String functions with a number or bool result. A regex stays on the CPU unless it is
  // plain text, optionally anchored (LiteralPattern without `.*`): then it is a
  // substring, prefix, suffix or whole-string test, exactly as LiteralPattern::Matches.
  std::string emitStringFn(const Expr& e) {
    const std::string& name = e.op;
    if (e.type == DType::String) {
      std::string why = StringUnsupported(e, types_);
      if (!why.empty()) return why;
      if (columns.size() >= size_t(kMaxCols)) return "more columns than the GPU kernel reads";
      Instr in = make(Op::Col);
      in.slot = int32_t(columns.size());
      columns.push_back(-1 - int(temps.size()));
      temps.push_back(&e);
      return push(in, 1);
    }
    if (e.args.size() != 1 || e.args[0].type != DType::String) return "the function " + name + "() of a non-string";
    uint8_t anchor = 0;
    const FnOption* pattern = Option(e, "pattern", FnOption::Kind::String);
    if (name == "str.len") {
      std::string why = emit(e.args[0]);
      return why.empty() ? push(make(Op::StrLen), 0) : why;
    } else if (name == "str.startsWith") {
      anchor = kAnchorStart;
    } else if (name == "str.endsWith") {
      anchor = kAnchorEnd;
    } else if (name != "str.contains") {
      return "the function " + name + "()";
    }
    if (!pattern) return "the function " + name + "() without its pattern";
    std::string text = pattern->text;
    const FnOption* literal = Option(e, "literal", FnOption::Kind::Bool);
    if (name == "str.contains" && !(literal && literal->flag)) {
      std::optional<LiteralPattern> lp = LiteralPattern::Parse(text);
      if (!lp || lp->hasGaps()) return "a regular expression";
      text = lp->pieces().empty() ? "" : lp->pieces()[0];
      anchor = uint8_t((lp->anchoredStart() ? kAnchorStart : 0) | (lp->anchoredEnd() ? kAnchorEnd : 0));
    }
    std::string why = emit(e.args[0]);
    if (why.empty()) why = pushText(text);
    if (!why.empty()) return why;
    Instr in = make(Op::StrMatch);
    in.arg = anchor;
    return push(in, -1);
  }

  // Pushes a date or timestamp operand as microseconds (a date at its midnight, as
  // expr_date.cc's Micros), so every dt.* instruction works on one representation.
  std::string emitMicros(const Expr& a) {
    if (a.type != DType::Date && a.type != DType::Timestamp) return "a dt function of a " + std::string(DTypeName(a.type));
    std::string why = emit(a);
    if (why.empty() && a.type == DType::Date) why = push(make(Op::DateToTs), 0);
    return why;
  }

  std::string emitDate(const Expr& e) {
    static const std::pair<const char*, Part> kParts[] = {{"dt.year", kYear},     {"dt.month", kMonth},   {"dt.day", kDay},
                                                          {"dt.weekday", kWeekday}, {"dt.hour", kHour}, {"dt.minute", kMinute},
                                                          {"dt.second", kSecond}};
    const std::string& name = e.op;
    std::string why = emitMicros(e.args[0]);
    if (!why.empty()) return why;
    for (auto& [fn, part] : kParts)
      if (name == fn) {
        Instr in = make(Op::DatePart);
        in.arg = part;
        return push(in, 0);
      }
    auto micros = [&](int64_t& out) {
      auto it = e.options.find("micros");
      if (it == e.options.end() || it->second.kind != FnOption::Kind::Number) return false;
      out = int64_t(it->second.num);
      return true;
    };
    Instr in = make(Op::DtFloor);
    if (!micros(in.i)) return "the function " + name + "() without its duration";
    if (name == "dt.diff") {
      if (in.i == 0) return "dt.diff by a zero unit";
      why = emitMicros(e.args[1]);
      in.op = Op::DtDiff;
      return why.empty() ? push(in, -1) : why;
    }
    if (name != "dt.floor" && name != "dt.offsetBy") return "the function " + name + "()";
    if (name == "dt.floor" && in.i <= 0) return "dt.floor by a non-positive step";
    if (name == "dt.offsetBy") in.op = Op::DtOffset;
    why = push(in, 0);
    // A date result is the day the microseconds fall in (AppendTemporal floors).
    if (why.empty() && e.type == DType::Date) why = push(make(Op::TsToDate), 0);
    return why;
  }

  const std::vector<DType>& types_;
  Program* p_;
  int depth_ = 0, maxDepth_ = 0, count_ = 0;
};

// A value on the stack; a string is its bytes `s` and its length in bytes `i`.
struct Val {
  int64_t i;
  double f;
  bool ok;
  const uint8_t* s;
};

__device__ inline Val Load(const ColumnView& c, int64_t row) {
  int64_t p = c.sel ? c.sel[row] : row;
  Val v{0, 0.0, c.validity ? c.validity[p] != 0 : true};
  switch (c.type) {
    case DType::Float64: v.f = static_cast<const double*>(c.data)[p]; break;
    case DType::Bool: v.i = static_cast<const uint8_t*>(c.data)[p]; break;
    case DType::Date: v.i = static_cast<const int32_t*>(c.data)[p]; break;
    case DType::String: {
      const int64_t* off = static_cast<const int64_t*>(c.data);
      v.s = c.chars + off[p];
      v.i = off[p + 1] - off[p];
      break;
    }
    default: v.i = static_cast<const int64_t*>(c.data)[p]; break;
  }
  return v;
}

__device__ inline bool MatchBytes(const uint8_t* s, int64_t n, const uint8_t* p, int64_t m, uint8_t anchor) {
  if (anchor == (kAnchorStart | kAnchorEnd)) return n == m && SameBytes(s, p, m);
  if (anchor == kAnchorStart) return n >= m && SameBytes(s, p, m);
  if (anchor == kAnchorEnd) return n >= m && SameBytes(s + n - m, p, m);
  return FindBytes(s, n, p, m, 0) >= 0;
}

__device__ inline Val Math(double r, bool ok) { return Val{0, r, ok && isfinite(r)}; }

// time_bucket's default origin, 2000-01-03 (a Monday), in days: expr_date.cc's kBucketOriginDays.
constexpr int64_t kBucketOriginMicros = 10959 * kMicrosPerDay;

// One dt.* part of a timestamp, as expr_date.cc computes it.
__device__ inline int64_t DatePartOf(int64_t us, uint8_t part) {
  const int64_t days = FloorDiv(us, kMicrosPerDay);
  if (part <= kDay) {
    int64_t y;
    unsigned m, d;
    CivilFromDays(days, &y, &m, &d);
    return part == kYear ? y : part == kMonth ? m : d;
  }
  if (part == kWeekday) return (days % 7 + 10) % 7 + 1;  // 1970-01-01: Thursday (4), Monday 1
  const int64_t timeOfDay = us - days * kMicrosPerDay;
  if (part == kHour) return timeOfDay / 3600000000LL;
  if (part == kMinute) return timeOfDay / 60000000LL % 60;
  return timeOfDay / 1000000LL % 60;
}

// mode 0: write the value (type outType) and its validity; mode 1: write a mask (valid && true).
__global__ void EvalKernel(const Program* prog, int64_t n, DType outType, void* out, uint8_t* outValid, unsigned long long* nulls, int mode) {
  int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n) return;
  Val st[kMaxStack];
  int sp = 0;
  const int len = prog->length;
  for (int pc = 0; pc < len; pc++) {
    const Instr in = prog->code[pc];
    switch (in.op) {
      case Op::Col: st[sp++] = Load(prog->cols[in.slot], row); break;
      case Op::Lit: st[sp++] = Val{in.i, in.f, in.litValid}; break;
      case Op::StrLit: st[sp++] = Val{in.len, 0.0, true, prog->consts + in.i}; break;
      case Op::StrLen: st[sp - 1] = Val{CharCount(st[sp - 1].s, st[sp - 1].i), 0.0, st[sp - 1].ok}; break;
      case Op::StrMatch: {
        Val b = st[--sp], a = st[sp - 1];
        st[sp - 1] = Val{MatchBytes(a.s, a.i, b.s, b.i, in.arg) ? 1 : 0, 0.0, a.ok && b.ok};
        break;
      }
      case Op::And:
      case Op::Or: {
        Val b = st[--sp], a = st[sp - 1];
        bool x = a.ok && a.i, y = b.ok && b.i;
        Val r{0, 0.0, true};
        if (in.op == Op::And) {
          if ((a.ok && !x) || (b.ok && !y)) r.i = 0;
          else if (a.ok && b.ok) r.i = 1;
          else r.ok = false;
        } else {
          if (x || y) r.i = 1;
          else if (a.ok && b.ok) r.i = 0;
          else r.ok = false;
        }
        st[sp - 1] = r;
        break;
      }
      case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Mod: {
        Val b = st[--sp], a = st[sp - 1];
        Val r{0, 0.0, a.ok && b.ok};
        if (in.isFloat) {
          double x = a.f, y = b.f;
          if (in.op == Op::Add) r.f = x + y;
          else if (in.op == Op::Sub) r.f = x - y;
          else if (in.op == Op::Mul) r.f = x * y;
          else if (y == 0) r.ok = false;
          else r.f = in.op == Op::Div ? x / y : fmod(x, y);
        } else {
          uint64_t x = uint64_t(a.i), y = uint64_t(b.i);
          if (in.op == Op::Add) r.i = int64_t(x + y);
          else if (in.op == Op::Sub) r.i = int64_t(x - y);
          else if (in.op == Op::Mul) r.i = int64_t(x * y);
          else if (b.i == 0) r.ok = false;
          else r.i = b.i == -1 ? 0 : a.i % b.i;
        }
        st[sp - 1] = r;
        break;
      }
      case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: {
        Val b = st[--sp], a = st[sp - 1];
        int c = in.arg ? CompareBytes(a.s, a.i, b.s, b.i) : in.isFloat ? CompareDoubles(a.f, b.f) : (a.i < b.i ? -1 : a.i > b.i);
        bool t = in.op == Op::Eq ? c == 0 : in.op == Op::Ne ? c != 0 : in.op == Op::Lt ? c < 0 : in.op == Op::Le ? c <= 0 : in.op == Op::Gt ? c > 0 : c >= 0;
        st[sp - 1] = Val{t ? 1 : 0, 0.0, a.ok && b.ok};
        break;
      }
      case Op::Neg: {
        Val& a = st[sp - 1];
        if (in.isFloat) a.f = -a.f;
        else a.i = int64_t(0 - uint64_t(a.i));
        break;
      }
      case Op::Not: st[sp - 1].i = !st[sp - 1].i; break;
      case Op::IsNull: st[sp - 1] = Val{st[sp - 1].ok ? 0 : 1, 0.0, true}; break;
      case Op::IsNotNull: st[sp - 1] = Val{st[sp - 1].ok ? 1 : 0, 0.0, true}; break;
      case Op::FillNull: {
        Val b = st[--sp];
        if (!st[sp - 1].ok) st[sp - 1] = b;
        break;
      }
      case Op::ToFloat: st[sp - 1].f = double(st[sp - 1].i); break;
      case Op::ToInt: st[sp - 1].i = int64_t(llrint(st[sp - 1].f)); break;  // half to even, as the CPU
      case Op::ToBool: st[sp - 1].i = in.isFloat ? st[sp - 1].f != 0 : st[sp - 1].i != 0; break;
      case Op::ToDate: st[sp - 1].i = int64_t(int32_t(st[sp - 1].i)); break;
      case Op::DateToTs: st[sp - 1].i = st[sp - 1].i * 86400000000LL; break;
      case Op::TsToDate: {
        int64_t us = st[sp - 1].i;
        st[sp - 1].i = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
        break;
      }
      case Op::Abs: {
        Val& a = st[sp - 1];
        if (in.isFloat) a.f = fabs(a.f);
        else a.i = a.i < 0 ? int64_t(0 - uint64_t(a.i)) : a.i;
        break;
      }
      case Op::Sqrt: st[sp - 1] = Math(sqrt(st[sp - 1].f), st[sp - 1].ok); break;
      case Op::Exp: st[sp - 1] = Math(exp(st[sp - 1].f), st[sp - 1].ok); break;
      case Op::Log: st[sp - 1] = Math(log(st[sp - 1].f), st[sp - 1].ok); break;
      case Op::Log10: st[sp - 1] = Math(log10(st[sp - 1].f), st[sp - 1].ok); break;
      case Op::Log2: st[sp - 1] = Math(log2(st[sp - 1].f), st[sp - 1].ok); break;
      case Op::LogBase: st[sp - 1] = Math(log(st[sp - 1].f) / in.f, st[sp - 1].ok); break;
      case Op::Pow: {
        Val b = st[--sp], a = st[sp - 1];
        st[sp - 1] = Math(pow(a.f, b.f), a.ok && b.ok);
        break;
      }
      case Op::DatePart: st[sp - 1].i = DatePartOf(st[sp - 1].i, in.arg); break;
      case Op::DtFloor: {
        const int64_t us = st[sp - 1].i;
        st[sp - 1].i = kBucketOriginMicros + FloorDiv(us - kBucketOriginMicros, in.i) * in.i;
        break;
      }
      case Op::DtOffset: st[sp - 1].i = int64_t(uint64_t(st[sp - 1].i) + uint64_t(in.i)); break;
      case Op::DtDiff: {
        Val b = st[--sp], a = st[sp - 1];
        st[sp - 1] = Val{FloorDiv(a.i, in.i) - FloorDiv(b.i, in.i), 0.0, a.ok && b.ok};
        break;
      }
    }
  }
  const Val v = st[0];
  if (mode == 1) {
    static_cast<uint8_t*>(out)[row] = v.ok && v.i != 0;
    return;
  }
  switch (outType) {
    case DType::Float64: static_cast<double*>(out)[row] = v.ok ? v.f : 0.0; break;
    case DType::Bool: static_cast<uint8_t*>(out)[row] = v.ok ? uint8_t(v.i != 0) : 0; break;
    case DType::Date: static_cast<int32_t*>(out)[row] = v.ok ? int32_t(v.i) : 0; break;
    default: static_cast<int64_t*>(out)[row] = v.ok ? v.i : 0; break;
  }
  outValid[row] = v.ok;
  if (!v.ok) atomicAdd(nulls, 1ULL);
}

// A program on the device and the buffers it reads, kept until its kernel has run.
struct Uploaded {
  DBuf prog, consts;
  std::vector<DColumn> temps;
};

// Compiles e and copies the program (with its column views and literals) to the device.
Uploaded Upload(DTable& t, const Expr& e) {
  std::vector<DType> types;
  for (auto& c : t.cols) types.push_back(c.type);
  Program p;
  Compiler c(types, &p);
  std::string why = c.compile(e);
  if (!why.empty()) throw BasinError("BASIN_INTERNAL", "GPU: cannot evaluate " + why);
  Uploaded u;
  for (const Expr* temp : c.temps) u.temps.push_back(BuildStrings(t, *temp));
  for (size_t i = 0; i < c.columns.size(); i++)
    p.cols[i] = c.columns[i] >= 0 ? t.view(c.columns[i]) : ComputedView(u.temps[size_t(-1 - c.columns[i])]);
  p.ncols = int(c.columns.size());
  if (!c.consts.empty()) {
    u.consts = t.dev.alloc(c.consts.size(), "an expression's strings");
    // Pageable memory: the copy has read c.consts when the call returns.
    Check(t.dev.device(), "copy an expression's strings",
          cudaMemcpyAsync(u.consts->data(), c.consts.data(), c.consts.size(), cudaMemcpyHostToDevice, t.dev.stream()));
    p.consts = u.consts->as<uint8_t>();
  }
  u.prog = t.dev.alloc(sizeof(Program), "an expression program");
  Check(t.dev.device(), "copy an expression program", cudaMemcpyAsync(u.prog->data(), &p, sizeof(Program), cudaMemcpyHostToDevice, t.dev.stream()));
  return u;
}


}  // namespace

std::string ExprUnsupported(const Expr& e, const std::vector<DType>& types) {
  if (e.type == DType::String) return StringUnsupported(e, types);
  Compiler c(types, nullptr);
  return c.compile(e);
}

DColumn EvalColumn(DTable& t, const Expr& e) {
  if (e.type == DType::String) return BuildStrings(t, e);
  Uploaded prog = Upload(t, e);
  const int64_t n = t.rows;
  auto bufs = std::make_shared<CachedColumn>();
  bufs->data = t.dev.alloc(size_t(n) * ElementSize(e.type), "an expression result");
  bufs->validity = t.dev.alloc(size_t(n), "an expression result");
  DBuf nulls = t.dev.alloc(8, "a null count");
  auto s = t.dev.stream();
  Check(t.dev.device(), "clear a null count", cudaMemsetAsync(nulls->data(), 0, 8, s));
  if (n > 0)
    EvalKernel<<<Blocks(n), kBlock, 0, s>>>(prog.prog->as<Program>(), n, e.type, bufs->data->data(), bufs->validity->as<uint8_t>(),
                                          nulls->as<unsigned long long>(), 0);
  unsigned long long nullCount = 0;
  ToHost(t.dev, &nullCount, nulls->data(), 8);
  if (nullCount == 0) bufs->validity.reset();
  DColumn out;
  out.type = e.type;
  out.length = n;
  out.bufs = std::move(bufs);
  return out;
}

DBuf SelectRows(DTable& t, const Expr& predicate, int64_t& count) {
  const int64_t n = t.rows;
  count = 0;
  DBuf rows = t.dev.alloc(size_t(std::max<int64_t>(n, 1)) * 4, "a filter's rows");
  if (n == 0) return rows;
  Uploaded prog = Upload(t, predicate);
  DBuf mask = t.dev.alloc(size_t(n), "a filter mask");
  auto s = t.dev.stream();
  EvalKernel<<<Blocks(n), kBlock, 0, s>>>(prog.prog->as<Program>(), n, DType::Bool, mask->data(), nullptr, nullptr, 1);
  DBuf selected = t.dev.alloc(8, "a filter count");
  thrust::counting_iterator<int32_t> it(0);
  RunCub(t.dev, "filter", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, it, mask->as<uint8_t>(), rows->as<int32_t>(), selected->as<int64_t>(), n, s);
  });
  ToHost(t.dev, &count, selected->data(), 8);
  return rows;
}

}  // namespace gpu
}  // namespace basin
