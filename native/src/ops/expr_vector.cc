// Tight loops for the binary operators on numbers, dates and bools, and for string
// comparisons: the operands' storage types are matched once per column, not per row,
// values are written straight into the output buffer and the null mask is the AND of
// the inputs'. expr.cc falls back to its row-at-a-time loops for Kleene logic with
// nulls and anything else this does not take.
#include <cstring>
#include <string_view>
#include <type_traits>

#include "ops/expr_fn.h"
#include "ops/float_order.h"

namespace basin {
namespace {

bool Numeric(DType t) {
  return t == DType::Int64 || t == DType::Float64 || t == DType::Date || t == DType::Timestamp;
}

// Calls f with the operand's values as a typed pointer (its storage type).
template <typename F>
void WithValues(const Operand& o, F f) {
  switch (o.col.type) {
    case DType::Float64: return f(o.col.values<double>());
    case DType::Date: return f(o.col.values<int32_t>());
    case DType::Bool: return f(o.col.values<uint8_t>());
    default: return f(o.col.values<int64_t>());
  }
}

// The rows valid in both operands; null when every row is.
BufferPtr BothValid(const Operand& l, const Operand& r, int64_t n) {
  if (!l.col.validity && !r.col.validity) return nullptr;
  auto v = MakeBufferNoInit(size_t(n));
  uint8_t* out = v->data();
  for (int64_t i = 0; i < n; i++) out[i] = uint8_t(l.valid(i) && r.valid(i));
  return v;
}

// out[i] = f(x, y) for the operands' values converted to X; null rows get 0.
template <typename X, typename Out, typename F>
Column Map(const Operand& l, const Operand& r, int64_t n, DType type, F f) {
  Column c;
  c.type = type;
  c.length = n;
  c.data = MakeBufferNoInit(size_t(n) * sizeof(Out));
  c.validity = BothValid(l, r, n);
  Out* const out = c.data->as<Out>();
  WithValues(l, [&](const auto* a) {
    WithValues(r, [&](const auto* b) {
      // Locals, not the captured references: a byte store may alias anything, so the
      // compiler would reload n and out after each byte written (a scalar loop).
      const int64_t m = n;
      Out* __restrict o = out;
      // One loop per operand shape, a scalar hoisted: a stride of 0 or 1 known only at
      // run time kept these loops from vectorising.
      if (!l.scalar && !r.scalar) {
        for (int64_t i = 0; i < m; i++) o[i] = f(X(a[i]), X(b[i]));
      } else if (!l.scalar) {
        const X y = X(b[0]);
        for (int64_t i = 0; i < m; i++) o[i] = f(X(a[i]), y);
      } else if (!r.scalar) {
        const X x = X(a[0]);
        for (int64_t i = 0; i < m; i++) o[i] = f(x, X(b[i]));
      } else {
        for (int64_t i = 0; i < m; i++) o[i] = f(X(a[0]), X(b[0]));
      }
    });
  });
  if (c.validity) {
    const uint8_t* v = c.validity->data();
    for (int64_t i = 0; i < n; i++)
      if (!v[i]) out[i] = Out(0);
  }
  return c;
}

// As the general loop, each test written with < and > alone, branch-free, for
// integers; doubles compare in DuckDB's order (ops/float_order.h: NaN above all).
template <typename X>
bool CompareAs(const std::string& op, const Operand& l, const Operand& r, int64_t n, Column* out) {
  auto run = [&](auto test) { *out = Map<X, uint8_t>(l, r, n, DType::Bool, test); };
  if constexpr (std::is_floating_point_v<X>) {
    if (op == "eq") run([](X x, X y) { return uint8_t(DoubleEqual(x, y)); });
    else if (op == "ne") run([](X x, X y) { return uint8_t(!DoubleEqual(x, y)); });
    else if (op == "lt") run([](X x, X y) { return uint8_t(DoubleBelow(x, y)); });
    else if (op == "le") run([](X x, X y) { return uint8_t(!DoubleAbove(x, y)); });
    else if (op == "gt") run([](X x, X y) { return uint8_t(DoubleAbove(x, y)); });
    else if (op == "ge") run([](X x, X y) { return uint8_t(!DoubleBelow(x, y)); });
    else return false;
    return true;
  }
  if (op == "eq") run([](X x, X y) { return uint8_t(!(x < y) & !(x > y)); });
  else if (op == "ne") run([](X x, X y) { return uint8_t((x < y) | (x > y)); });
  else if (op == "lt") run([](X x, X y) { return uint8_t(x < y); });
  else if (op == "le") run([](X x, X y) { return uint8_t(!(x > y)); });
  else if (op == "gt") run([](X x, X y) { return uint8_t(x > y); });
  else if (op == "ge") run([](X x, X y) { return uint8_t(!(x < y)); });
  else return false;
  return true;
}

// A comparison of strings (byte order, as the general loop), written straight into the
// column: equality tests the lengths before the bytes.
bool CompareStrings(const std::string& op, const Operand& l, const Operand& r, int64_t n, Column* out) {
  auto run = [&](auto test) {
    Column c;
    c.type = DType::Bool;
    c.length = n;
    c.data = MakeBufferNoInit(size_t(n));
    c.validity = BothValid(l, r, n);
    uint8_t* o = c.data->data();
    const uint8_t* v = c.validity ? c.validity->data() : nullptr;
    for (int64_t i = 0; i < n; i++) o[i] = (!v || v[i]) && test(l.s(i), r.s(i));
    *out = std::move(c);
  };
  auto same = [](std::string_view x, std::string_view y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
  };
  if (op == "eq") run(same);
  else if (op == "ne") run([&](std::string_view x, std::string_view y) { return !same(x, y); });
  else if (op == "lt") run([](std::string_view x, std::string_view y) { return x.compare(y) < 0; });
  else if (op == "le") run([](std::string_view x, std::string_view y) { return x.compare(y) <= 0; });
  else if (op == "gt") run([](std::string_view x, std::string_view y) { return x.compare(y) > 0; });
  else if (op == "ge") run([](std::string_view x, std::string_view y) { return x.compare(y) >= 0; });
  else return false;
  return true;
}

}  // namespace

bool FastBinary(const std::string& op, const Operand& l, const Operand& r, DType type, int64_t n, Column* out) {
  const DType lt = l.col.type, rt = r.col.type;
  if (op == "and" || op == "or") {
    // Without nulls Kleene logic is plain logic.
    if (lt != DType::Bool || rt != DType::Bool || l.col.validity || r.col.validity) return false;
    if (op == "and") *out = Map<uint8_t, uint8_t>(l, r, n, DType::Bool, [](uint8_t x, uint8_t y) { return uint8_t(x & y); });
    else *out = Map<uint8_t, uint8_t>(l, r, n, DType::Bool, [](uint8_t x, uint8_t y) { return uint8_t(x | y); });
    return true;
  }
  if (lt == DType::String && rt == DType::String) return CompareStrings(op, l, r, n, out);
  if (!Numeric(lt) || !Numeric(rt)) return false;
  if (op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge")
    return lt == DType::Float64 || rt == DType::Float64 ? CompareAs<double>(op, l, r, n, out)
                                                        : CompareAs<int64_t>(op, l, r, n, out);
  if (type == DType::Float64) {
    if (op == "add") *out = Map<double, double>(l, r, n, type, [](double x, double y) { return x + y; });
    else if (op == "sub") *out = Map<double, double>(l, r, n, type, [](double x, double y) { return x - y; });
    else if (op == "mul") *out = Map<double, double>(l, r, n, type, [](double x, double y) { return x * y; });
    else return false;  // div and mod turn zero divisors into nulls: the general loop
    return true;
  }
  if (type == DType::Int64 && lt == DType::Int64 && rt == DType::Int64) {
    // Two's complement wrap, as the general loop.
    using U = uint64_t;
    if (op == "add") *out = Map<int64_t, int64_t>(l, r, n, type, [](int64_t x, int64_t y) { return int64_t(U(x) + U(y)); });
    else if (op == "sub") *out = Map<int64_t, int64_t>(l, r, n, type, [](int64_t x, int64_t y) { return int64_t(U(x) - U(y)); });
    else if (op == "mul") *out = Map<int64_t, int64_t>(l, r, n, type, [](int64_t x, int64_t y) { return int64_t(U(x) * U(y)); });
    else return false;
    return true;
  }
  return false;
}

}  // namespace basin
