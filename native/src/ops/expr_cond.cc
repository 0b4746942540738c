// Conditionals and membership: when/then/otherwise (SQL CASE) and isIn (SQL IN with
// its null rules: not found in a list holding a null is null).
#include <unordered_set>

#include "ops/expr_fn.h"

namespace basin {
namespace {

// args: cond1, value1, ..., condN, valueN, otherwise; values already have the result type.
Column When(const Expr& e, const std::vector<Operand>& args, int64_t rows) {
  const size_t branches = (args.size() - 1) / 2;
  ColumnBuilder b(e.type, rows);
  for (int64_t i = 0; i < rows; i++) {
    const Operand* pick = &args.back();
    for (size_t k = 0; k < branches; k++) {
      const Operand& c = args[2 * k];
      if (c.valid(i) && c.b(i)) {
        pick = &args[2 * k + 1];
        break;
      }
    }
    b.appendFrom(pick->col, pick->at(i));
  }
  return b.finish();
}

template <typename T, typename Get>
Column Member(const Operand& a, int64_t rows, const std::unordered_set<T>& set, bool listHasNull, Get get) {
  ColumnBuilder b(DType::Bool, rows);
  for (int64_t i = 0; i < rows; i++) {
    if (!a.valid(i)) b.appendNull();
    else if (set.count(get(i))) b.appendBool(true);
    else if (listHasNull) b.appendNull();
    else b.appendBool(false);
  }
  return b.finish();
}

Column IsIn(const Expr& e, const Operand& a, int64_t rows) {
  const auto& values = Opt(e, "values").list;
  const bool hasNull = OptBool(e, "hasNull");
  switch (a.col.type) {
    case DType::String: {
      std::unordered_set<std::string_view> set;
      for (const auto& v : values) set.insert(v.text);
      return Member(a, rows, set, hasNull, [&](int64_t i) { return a.s(i); });
    }
    case DType::Float64: {
      std::unordered_set<double> set;
      for (const auto& v : values) set.insert(v.num == 0 ? 0.0 : v.num);  // -0 and 0 hash alike
      return Member(a, rows, set, hasNull, [&](int64_t i) { return a.f64(i) == 0 ? 0.0 : a.f64(i); });
    }
    default: {
      std::unordered_set<int64_t> set;
      for (const auto& v : values) set.insert(int64_t(v.num));
      return Member(a, rows, set, hasNull, [&](int64_t i) { return a.i64(i); });
    }
  }
}

}  // namespace

std::optional<Column> CondFn(const Expr& e, const std::vector<Operand>& args, int64_t rows) {
  if (e.op == "when") return When(e, args, rows);
  if (e.op == "isIn") return IsIn(e, args[0], rows);
  return std::nullopt;
}

}  // namespace basin
