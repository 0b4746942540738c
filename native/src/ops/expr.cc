#include "ops/expr.h"

#include "io/csv.h"
#include "ops/expr_fn.h"
#include "ops/float_order.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace basin {

namespace {

Operand Eval(const Expr& e, const Table& t);

[[noreturn]] void CastError(std::string_view text, DType to, const std::string& label) {
  std::string shown(text.substr(0, 40));
  std::string where = label.empty() ? "" : " in " + label;
  throw BasinError("BASIN_CAST", "cannot cast \"" + shown + "\" to " + DTypeName(to) + where +
                                     " (clean the value first, fillNull / filter it out, or cast with { strict: false } to get null)");
}

Column CastColumn(const Operand& in, DType to, int64_t rows, bool strict = true, const std::string& label = "") {
  ColumnBuilder b(to, rows);
  // A value that does not convert: an error, or a null when not strict.
  auto fail = [&](std::string_view text) {
    if (strict) CastError(text, to, label);
    b.appendNull();
  };
  DType from = in.col.type;
  for (int64_t i = 0; i < rows; i++) {
    if (!in.valid(i)) {
      b.appendNull();
      continue;
    }
    switch (to) {
      case DType::Int64:
        if (from == DType::String) {
          auto s = in.s(i);
          int64_t v;
          if (!CsvParseInt64(s.data(), s.data() + s.size(), &v)) {
            fail(s);
            continue;
          }
          b.appendInt(v);
        } else if (from == DType::Float64) {
          double v = in.f64(i);
          if (!std::isfinite(v) || std::fabs(v) > 9.2e18) {
            fail(FormatDouble(v));
            continue;
          }
          b.appendInt(int64_t(std::llrint(v)));
        } else {
          b.appendInt(in.i64(i));
        }
        break;
      case DType::Float64:
        if (from == DType::String) {
          auto s = in.s(i);
          double v;
          if (!CsvParseFloat64(s.data(), s.data() + s.size(), &v)) {
            fail(s);
            continue;
          }
          b.appendDouble(v);
        } else {
          b.appendDouble(in.f64(i));
        }
        break;
      case DType::Bool:
        if (from == DType::String) {
          auto s = in.s(i);
          if (s == "true" || s == "TRUE" || s == "True" || s == "1") b.appendBool(true);
          else if (s == "false" || s == "FALSE" || s == "False" || s == "0") b.appendBool(false);
          else fail(s);
        } else {
          b.appendBool(in.f64(i) != 0);
        }
        break;
      case DType::String:
        switch (from) {
          case DType::String: b.appendString(in.s(i)); break;
          case DType::Float64: b.appendString(FormatDouble(in.f64(i))); break;
          case DType::Bool: b.appendString(in.b(i) ? "true" : "false"); break;
          case DType::Date: b.appendString(FormatDate(int32_t(in.i64(i)))); break;
          case DType::Timestamp: b.appendString(FormatTimestamp(in.i64(i))); break;
          case DType::Int64: b.appendString(std::to_string(in.i64(i))); break;
        }
        break;
      case DType::Date:
        if (from == DType::String) {
          int32_t d;
          auto s = in.s(i);
          if (!CsvParseDate(s.data(), s.data() + s.size(), &d)) {
            fail(s);
            continue;
          }
          b.appendDate(d);
        } else if (from == DType::Timestamp) {
          int64_t us = in.i64(i);
          int64_t days = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
          b.appendDate(int32_t(days));
        } else {
          b.appendDate(int32_t(in.i64(i)));
        }
        break;
      case DType::Timestamp:
        if (from == DType::String) {
          int64_t us;
          auto s = in.s(i);
          if (!CsvParseTimestamp(s.data(), s.data() + s.size(), true, &us)) {
            fail(s);
            continue;
          }
          b.appendInt(us);
        } else if (from == DType::Date) {
          b.appendInt(in.i64(i) * 86400000000LL);
        } else {
          b.appendInt(in.i64(i));
        }
        break;
    }
  }
  return b.finish();
}

Column Arithmetic(const std::string& op, const Operand& l, const Operand& r, DType type, int64_t rows) {
  ColumnBuilder b(type, rows);
  // One loop per op (the op is matched once, not per row); a null operand gives null.
  auto each = [&](auto apply) {
    for (int64_t i = 0; i < rows; i++) {
      if (!l.valid(i) || !r.valid(i)) b.appendNull();
      else apply(i);
    }
  };
  if (type == DType::Int64) {
    auto x = [&](int64_t i) { return uint64_t(l.i64(i)); };
    auto y = [&](int64_t i) { return uint64_t(r.i64(i)); };
    if (op == "add") each([&](int64_t i) { b.appendInt(int64_t(x(i) + y(i))); });
    else if (op == "sub") each([&](int64_t i) { b.appendInt(int64_t(x(i) - y(i))); });
    else if (op == "mul") each([&](int64_t i) { b.appendInt(int64_t(x(i) * y(i))); });
    else if (op == "mod") each([&](int64_t i) {
      const int64_t d = r.i64(i);
      if (d == 0) b.appendNull();
      else b.appendInt(d == -1 ? 0 : l.i64(i) % d);
    });
    else throw BasinError("BASIN_INTERNAL", "integer op " + op);
  } else {
    auto x = [&](int64_t i) { return l.f64(i); };
    auto y = [&](int64_t i) { return r.f64(i); };
    if (op == "add") each([&](int64_t i) { b.appendDouble(x(i) + y(i)); });
    else if (op == "sub") each([&](int64_t i) { b.appendDouble(x(i) - y(i)); });
    else if (op == "mul") each([&](int64_t i) { b.appendDouble(x(i) * y(i)); });
    else if (op == "div") each([&](int64_t i) {
      if (y(i) == 0) b.appendNull();
      else b.appendDouble(x(i) / y(i));
    });
    else if (op == "mod") each([&](int64_t i) {
      if (y(i) == 0) b.appendNull();
      else b.appendDouble(std::fmod(x(i), y(i)));
    });
    else throw BasinError("BASIN_INTERNAL", "float op " + op);
  }
  return b.finish();
}

template <typename Cmp>
Column CompareWith(const Operand& l, const Operand& r, int64_t rows, Cmp cmp) {
  ColumnBuilder b(DType::Bool, rows);
  DType lt = l.col.type, rt = r.col.type;
  for (int64_t i = 0; i < rows; i++) {
    if (!l.valid(i) || !r.valid(i)) {
      b.appendNull();
      continue;
    }
    int c;
    if (lt == DType::String) {
      int k = l.s(i).compare(r.s(i));
      c = k < 0 ? -1 : k > 0;
    } else if (lt == DType::Float64 || rt == DType::Float64) {
      c = CompareDoubles(l.f64(i), r.f64(i));
    } else {
      int64_t x = l.i64(i), y = r.i64(i);
      c = x < y ? -1 : x > y;
    }
    b.appendBool(cmp(c));
  }
  return b.finish();
}

Column Compare(const std::string& op, const Operand& l, const Operand& r, int64_t rows) {
  if (op == "eq") return CompareWith(l, r, rows, [](int c) { return c == 0; });
  if (op == "ne") return CompareWith(l, r, rows, [](int c) { return c != 0; });
  if (op == "lt") return CompareWith(l, r, rows, [](int c) { return c < 0; });
  if (op == "le") return CompareWith(l, r, rows, [](int c) { return c <= 0; });
  if (op == "gt") return CompareWith(l, r, rows, [](int c) { return c > 0; });
  return CompareWith(l, r, rows, [](int c) { return c >= 0; });
}

// Kleene logic: false AND null = false, true OR null = true.
Column Logic(bool isAnd, const Operand& l, const Operand& r, int64_t rows) {
  ColumnBuilder b(DType::Bool, rows);
  for (int64_t i = 0; i < rows; i++) {
    bool lv = l.valid(i), rv = r.valid(i);
    bool x = lv && l.b(i), y = rv && r.b(i);
    if (isAnd) {
      if ((lv && !x) || (rv && !y)) b.appendBool(false);
      else if (lv && rv) b.appendBool(true);
      else b.appendNull();
    } else {
      if (x || y) b.appendBool(true);
      else if (lv && rv) b.appendBool(false);
      else b.appendNull();
    }
  }
  return b.finish();
}

Operand Eval(const Expr& e, const Table& t) {
  const int64_t rows = t.rows;
  switch (e.kind) {
    case ExprKind::Col: {
      if (e.index < 0 || size_t(e.index) >= t.columns.size())
        throw BasinError("BASIN_INTERNAL", "column index out of range");
      return Operand{t.columns[size_t(e.index)], false};
    }
    case ExprKind::Lit: {
      ColumnBuilder b(e.type, 1);
      if (e.isNull) b.appendNull();
      else if (e.type == DType::String) b.appendString(e.text);
      else if (e.type == DType::Float64) b.appendDouble(e.num);
      else if (e.type == DType::Bool) b.appendBool(e.num != 0);
      else if (e.type == DType::Date) b.appendDate(int32_t(e.integer));
      else b.appendInt(e.integer);
      return Operand{b.finish(), true};
    }
    case ExprKind::Binary: {
      Operand l = Eval(e.args[0], t), r = Eval(e.args[1], t);
      const std::string& op = e.op;
      bool bothScalar = l.scalar && r.scalar;
      int64_t n = bothScalar ? 1 : rows;
      Column out;
      if (FastBinary(op, l, r, e.type, n, &out)) return Operand{std::move(out), bothScalar};
      if (op == "and" || op == "or") out = Logic(op == "and", l, r, n);
      else if (op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge") out = Compare(op, l, r, n);
      else out = Arithmetic(op, l, r, e.type, n);
      return Operand{std::move(out), bothScalar};
    }
    case ExprKind::Unary: {
      Operand a = Eval(e.args[0], t);
      int64_t n = a.scalar ? 1 : rows;
      // The op is read once, not per row (string compares per row cost more than the work).
      if (e.op == "isNull" || e.op == "isNotNull") {
        const bool valid = e.op == "isNotNull";
        Column c;
        c.type = DType::Bool;
        c.length = n;
        c.data = MakeBufferNoInit(size_t(n));
        uint8_t* o = c.data->data();
        for (int64_t i = 0; i < n; i++) o[i] = uint8_t(a.valid(i) == valid);
        return Operand{std::move(c), a.scalar};
      }
      enum class Op { Not, NegFloat, NegInt } op = e.op == "not" ? Op::Not : e.type == DType::Float64 ? Op::NegFloat : Op::NegInt;
      ColumnBuilder b(e.type, n);
      for (int64_t i = 0; i < n; i++) {
        if (!a.valid(i)) b.appendNull();
        else if (op == Op::Not) b.appendBool(!a.b(i));
        else if (op == Op::NegFloat) b.appendDouble(-a.f64(i));
        else b.appendInt(int64_t(0 - uint64_t(a.i64(i))));
      }
      return Operand{b.finish(), a.scalar};
    }
    case ExprKind::FillNull: {
      Operand a = Eval(e.args[0], t), f = Eval(e.args[1], t);
      if (a.col.type != e.type) a = Operand{CastColumn(a, e.type, a.scalar ? 1 : rows), a.scalar};
      if (f.col.type != e.type) f = Operand{CastColumn(f, e.type, f.scalar ? 1 : rows), f.scalar};
      if (!a.scalar && !a.col.validity) return a;
      int64_t n = a.scalar && f.scalar ? 1 : rows;
      ColumnBuilder b(e.type, n);
      for (int64_t i = 0; i < n; i++) {
        if (a.valid(i)) b.appendFrom(a.col, a.at(i));
        else b.appendFrom(f.col, f.at(i));
      }
      return Operand{b.finish(), a.scalar && f.scalar};
    }
    case ExprKind::Cast: {
      Operand a = Eval(e.args[0], t);
      if (a.col.type == e.type) return a;
      return Operand{CastColumn(a, e.type, a.scalar ? 1 : rows, e.strict, e.label), a.scalar};
    }
    case ExprKind::Fn: {
      std::vector<Operand> args;
      bool allScalar = true;
      for (auto& a : e.args) {
        args.push_back(Eval(a, t));
        allScalar = allScalar && args.back().scalar;
      }
      int64_t n = allScalar ? 1 : rows;
      std::optional<Column> out = StringFn(e, args, n);
      if (!out) out = DateFn(e, args, n);
      if (!out) out = MathFn(e, args, n);
      if (!out) out = CondFn(e, args, n);
      if (!out) throw BasinError("BASIN_INTERNAL", "unknown function '" + e.op + "'");
      return Operand{std::move(*out), allScalar};
    }
  }
  throw BasinError("BASIN_INTERNAL", "unknown expression kind");
}

}  // namespace

Column Evaluate(const Expr& e, const Table& t) {
  Operand o = Eval(e, t);
  if (!o.scalar) return o.col;
  // Broadcast a scalar result to the table's row count.
  std::vector<int64_t> zeros(size_t(t.rows), 0);
  return Take(o.col, zeros.data(), t.rows);
}

TablePtr EvalExprs(const Table& t, const std::vector<Expr>& exprs, const std::vector<std::string>& names) {
  auto out = std::make_shared<Table>();
  out->rows = t.rows;
  out->names = names;
  for (auto& e : exprs) out->columns.push_back(Evaluate(e, t));
  return out;
}

TablePtr FilterByMask(const Table& t, const Column& mask) { return FilterByKeep(t, TrueRows(mask)); }

TablePtr FilterByKeep(const Table& t, const std::vector<uint8_t>& keep) {
  // Kept rows as 0/1 bytes, counted and turned into row numbers without a branch per
  // row (a filter keeping about half the rows mispredicted every other one).
  int64_t kept = 0;
  for (int64_t i = 0; i < t.rows; i++) kept += keep[size_t(i)];
  auto out = std::make_shared<Table>();
  out->names = t.names;
  if (kept == t.rows) {
    // Every row stays (a dropNulls over a column without nulls): share the columns, as a
    // projection of plain columns does, instead of copying every one of them.
    out->rows = t.rows;
    out->columns = t.columns;
    return out;
  }
  std::vector<int64_t> idx(size_t(kept) + 1);  // one spare slot: every row is written, kept ones advance
  for (int64_t i = 0, k = 0; i < t.rows; i++) {
    idx[size_t(k)] = i;
    k += keep[size_t(i)];
  }
  out->rows = kept;
  for (auto& c : t.columns) out->columns.push_back(Take(c, idx.data(), out->rows));
  return out;
}

std::vector<uint8_t> TrueRows(const Column& mask) {
  const uint8_t* m = mask.values<uint8_t>();
  const uint8_t* v = mask.validity ? mask.validity->data() : nullptr;
  std::vector<uint8_t> out(size_t(mask.length));
  for (int64_t i = 0; i < mask.length; i++) out[size_t(i)] = uint8_t((m[i] != 0) & (!v || v[i] != 0));
  return out;
}

TablePtr Filter(const Table& t, const Expr& predicate) { return FilterByMask(t, Evaluate(predicate, t)); }

const FnOption& Opt(const Expr& e, const char* name) {
  auto it = e.options.find(name);
  if (it == e.options.end()) throw BasinError("BASIN_INTERNAL", e.op + "() is missing its option '" + name + "'");
  return it->second;
}

std::string FormatDate(int32_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

std::string FormatTimestamp(int64_t us) {
  int64_t days = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
  int64_t rem = us - days * 86400000000LL;
  int64_t secs = rem / 1000000, frac = rem % 1000000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %02lld:%02lld:%02lld", FormatDate(int32_t(days)).c_str(),
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  std::string s = buf;
  if (frac) {
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(frac));
    s += buf;
    while (s.back() == '0') s.pop_back();
  }
  return s;
}

std::string FormatDouble(double v) {
  // DuckDB's text of a double (Python's repr): the shortest digits that read back to
  // it, positionally for exponents -4 to 15 ("0.0001", "1000000000000000.0"), else in
  // scientific notation with a signed two-digit exponent ("1e-05", "1.5e+16").
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const int exp = std::atoi(sci.c_str() + e + 1);
  if (exp >= -4 && exp < 16) {
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
    std::string s(buf, r.ptr);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  const std::string digits = std::to_string(exp < 0 ? -exp : exp);
  return sci.substr(0, e) + (exp < 0 ? "e-" : "e+") + (digits.size() < 2 ? "0" : "") + digits;
}

}  // namespace basin
