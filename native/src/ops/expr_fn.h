// Internal to the expression evaluator: operands, and the scalar function families
// (expr_string.cc, expr_date.cc, expr_math.cc, expr_cond.cc) that expr.cc dispatches to.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/expr.h"
#include "ops/civil_time.h"

namespace basin {

// An evaluated operand: a full column, or one value broadcast to every row.
struct Operand {
  Column col;
  bool scalar = false;
  int64_t at(int64_t i) const { return scalar ? 0 : i; }
  bool valid(int64_t i) const { return col.valid(at(i)); }
  double f64(int64_t i) const {
    switch (col.type) {
      case DType::Float64: return col.values<double>()[at(i)];
      case DType::Bool: return col.values<uint8_t>()[at(i)];
      case DType::Date: return col.values<int32_t>()[at(i)];
      default: return double(col.values<int64_t>()[at(i)]);
    }
  }
  int64_t i64(int64_t i) const {
    switch (col.type) {
      case DType::Float64: return int64_t(std::llrint(col.values<double>()[at(i)]));  // half to even, as DuckDB
      case DType::Bool: return col.values<uint8_t>()[at(i)];
      case DType::Date: return col.values<int32_t>()[at(i)];
      default: return col.values<int64_t>()[at(i)];
    }
  }
  bool b(int64_t i) const { return col.values<uint8_t>()[at(i)] != 0; }
  std::string_view s(int64_t i) const { return col.str(at(i)); }
};

// A binary operator on numbers, dates or null-free bools in one tight loop
// (expr_vector.cc); false when it leaves the operands to the general loops.
bool FastBinary(const std::string& op, const Operand& l, const Operand& r, DType type, int64_t n, Column* out);

// ASCII whitespace, as str.strip and strptime see it.
inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Options of a function node, as resolve_fn.ts normalized them (missing → BASIN_INTERNAL).
const FnOption& Opt(const Expr& e, const char* name);
inline double OptNum(const Expr& e, const char* name) { return Opt(e, name).num; }
inline int64_t OptInt(const Expr& e, const char* name) { return int64_t(Opt(e, name).num); }
inline bool OptBool(const Expr& e, const char* name) { return Opt(e, name).flag; }
inline const std::string& OptStr(const Expr& e, const char* name) { return Opt(e, name).text; }

// Each family evaluates the functions it knows over `rows` rows of `args` (a scalar
// argument broadcasts) and returns nullopt for names that are not its own.
std::optional<Column> StringFn(const Expr& e, const std::vector<Operand>& args, int64_t rows);
std::optional<Column> DateFn(const Expr& e, const std::vector<Operand>& args, int64_t rows);
std::optional<Column> MathFn(const Expr& e, const std::vector<Operand>& args, int64_t rows);
std::optional<Column> CondFn(const Expr& e, const std::vector<Operand>& args, int64_t rows);

}  // namespace basin
