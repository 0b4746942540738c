// Vectorised evaluation of resolved expressions (engine/native/addon.ts NativeExpr)
// over a table, and filtering by a predicate.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/column.h"

namespace basin {

enum class ExprKind { Col, Lit, Binary, Unary, FillNull, Cast, Fn };

// A literal parameter of a scalar function (a pattern, a format, microseconds...).
struct FnOption {
  enum class Kind { Null, Number, String, Bool, List } kind = Kind::Null;
  double num = 0;
  std::string text;
  bool flag = false;
  std::vector<FnOption> list;
};

struct Expr {
  ExprKind kind = ExprKind::Lit;
  std::string op;  // binary/unary operator name
  DType type = DType::Int64;
  int index = -1;  // Col
  // Lit: exactly one of these is meaningful, chosen by `type`; isNull for a null literal.
  bool isNull = false;
  double num = 0;
  int64_t integer = 0;
  std::string text;
  std::vector<Expr> args;
  // Cast: strict false turns unparsable values into nulls; label names the expression in errors.
  bool strict = true;
  std::string label;
  // Fn: the function's name is `op`; its literal parameters by name.
  std::map<std::string, FnOption> options;
};

Column Evaluate(const Expr& e, const Table& t);
TablePtr EvalExprs(const Table& t, const std::vector<Expr>& exprs, const std::vector<std::string>& names);
TablePtr Filter(const Table& t, const Expr& predicate);
// Why `pattern` does not compile as an ECMAScript regex, or "" when it does.
std::string RegexError(const std::string& pattern);
// Keeps rows where mask is valid and true.
TablePtr FilterByMask(const Table& t, const Column& mask);
// Keeps the rows whose `keep` byte is 1 (0/1 bytes per row, as TrueRows gives them).
TablePtr FilterByKeep(const Table& t, const std::vector<uint8_t>& keep);
// 1 for each row where the Bool `mask` is valid and true, else 0 (branch-free).
std::vector<uint8_t> TrueRows(const Column& mask);

// Text forms used by casts to string: ISO date / timestamp, shortest float.
// (Parsing text into values is the CSV scanner's: io/csv.h.)
std::string FormatDate(int32_t days);
std::string FormatTimestamp(int64_t micros);
std::string FormatDouble(double v);

}  // namespace basin
