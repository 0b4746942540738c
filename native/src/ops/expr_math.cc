// Math functions: abs, round (half away from zero, DuckDB's formula), sqrt, log, exp,
// pow. Results that are not finite numbers (sqrt(-1), log(0), overflow) are null.
#include "ops/expr_fn.h"

namespace basin {
namespace {

// Integer rounding to a negative number of decimals, half away from zero.
int64_t RoundInt(int64_t x, int64_t decimals) {
  if (decimals >= 0) return x;
  if (decimals < -18) return 0;
  int64_t p = 1;
  for (int64_t k = 0; k < -decimals; k++) p *= 10;
  int64_t q = x / p, r = x % p;
  if (r >= 0 ? 2 * r >= p : -2 * r >= p) q += r >= 0 ? 1 : -1;
  return int64_t(uint64_t(q) * uint64_t(p));
}

// As DuckDB's RoundOperatorPrecision.
double RoundDouble(double x, int64_t decimals) {
  if (decimals < 0) {
    double m = std::pow(10.0, double(-decimals));
    double r = std::round(x / m) * m;
    return std::isfinite(r) ? r : 0;
  }
  double m = std::pow(10.0, double(decimals));
  double r = std::round(x * m) / m;
  return std::isfinite(r) ? r : x;
}

template <typename F>
Column MapDoubles(const std::vector<Operand>& args, int64_t rows, F f) {
  ColumnBuilder b(DType::Float64, rows);
  for (int64_t i = 0; i < rows; i++) {
    bool valid = true;
    for (const auto& a : args) valid = valid && a.valid(i);
    double v = valid ? f(i) : 0;
    if (!valid || !std::isfinite(v)) b.appendNull();
    else b.appendDouble(v);
  }
  return b.finish();
}

}  // namespace

std::optional<Column> MathFn(const Expr& e, const std::vector<Operand>& args, int64_t rows) {
  const std::string& name = e.op;
  if (args.empty()) return std::nullopt;
  const Operand& a = args[0];
  if (name == "abs" || name == "round") {
    const bool isAbs = name == "abs";
    const int64_t decimals = isAbs ? 0 : OptInt(e, "decimals");
    ColumnBuilder b(e.type, rows);
    for (int64_t i = 0; i < rows; i++) {
      if (!a.valid(i)) b.appendNull();
      else if (e.type == DType::Float64) b.appendDouble(isAbs ? std::fabs(a.f64(i)) : RoundDouble(a.f64(i), decimals));
      else {
        int64_t x = a.i64(i);
        b.appendInt(isAbs ? (x < 0 ? int64_t(0 - uint64_t(x)) : x) : RoundInt(x, decimals));
      }
    }
    return b.finish();
  }
  if (name == "sqrt") return MapDoubles(args, rows, [&](int64_t i) { return std::sqrt(a.f64(i)); });
  if (name == "exp") return MapDoubles(args, rows, [&](int64_t i) { return std::exp(a.f64(i)); });
  if (name == "pow") return MapDoubles(args, rows, [&](int64_t i) { return std::pow(a.f64(i), args[1].f64(i)); });
  if (name == "log") {
    const FnOption& base = Opt(e, "base");
    if (base.kind == FnOption::Kind::Null) return MapDoubles(args, rows, [&](int64_t i) { return std::log(a.f64(i)); });
    if (base.num == 10) return MapDoubles(args, rows, [&](int64_t i) { return std::log10(a.f64(i)); });
    if (base.num == 2) return MapDoubles(args, rows, [&](int64_t i) { return std::log2(a.f64(i)); });
    const double lb = std::log(base.num);
    return MapDoubles(args, rows, [&](int64_t i) { return std::log(a.f64(i)) / lb; });
  }
  return std::nullopt;
}

}  // namespace basin
