// Conditionals and membership: when/then/otherwise (SQL CASE) and isIn (SQL IN with
// its null rules: not found in a list holding a null is null).
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ops/expr_fn.h"
#include "ops/hash.h"

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

// Whether a row is in the list: a few values are compared in turn, more through a hash set.
template <typename T>
class Members {
 public:
  explicit Members(std::vector<T> values) : list_(std::move(values)) {
    if (list_.size() > kLinear) set_.insert(list_.begin(), list_.end());
  }
  bool has(const T& x) const {
    if (list_.size() > kLinear) return set_.count(x) != 0;
    for (const T& v : list_)
      if (v == x) return true;
    return false;
  }

 private:
  static constexpr size_t kLinear = 8;
  std::vector<T> list_;
  std::unordered_set<T> set_;
};

// True, false, or null (a null row; a row not found in a list holding a null), written
// straight into the column's buffers.
template <typename T, typename Get>
Column Member(const Operand& a, int64_t rows, const Members<T>& set, bool listHasNull, Get get) {
  Column c;
  c.type = DType::Bool;
  c.length = rows;
  c.data = MakeBufferNoInit(size_t(rows));
  uint8_t* out = c.data->data();
  const bool nulls = listHasNull || a.col.validity;
  if (nulls) c.validity = MakeBufferNoInit(size_t(rows));
  uint8_t* valid = nulls ? c.validity->data() : nullptr;
  for (int64_t i = 0; i < rows; i++) {
    const bool ok = a.valid(i);
    const bool in = ok && set.has(get(i));
    out[i] = uint8_t(in);
    if (valid) valid[i] = uint8_t(in || (ok && !listHasNull));
  }
  return c;
}

Column IsIn(const Expr& e, const Operand& a, int64_t rows) {
  const auto& values = Opt(e, "values").list;
  const bool hasNull = OptBool(e, "hasNull");
  switch (a.col.type) {
    case DType::String: {
      std::vector<std::string_view> list;
      for (const auto& v : values) list.push_back(v.text);
      return Member(a, rows, Members<std::string_view>(list), hasNull, [&](int64_t i) { return a.s(i); });
    }
    case DType::Float64: {
      // As equality compares doubles: -0 is 0, and NaN is one value equal to itself.
      std::vector<uint64_t> list;
      for (const auto& v : values) list.push_back(hash::CanonDouble(v.num));
      return Member(a, rows, Members<uint64_t>(list), hasNull, [&](int64_t i) { return hash::CanonDouble(a.f64(i)); });
    }
    default: {
      std::vector<int64_t> list;
      for (const auto& v : values) list.push_back(int64_t(v.num));
      return Member(a, rows, Members<int64_t>(list), hasNull, [&](int64_t i) { return a.i64(i); });
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
