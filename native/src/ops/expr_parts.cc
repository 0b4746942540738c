#include "ops/expr_parts.h"

#include <algorithm>

namespace basin {

void Conjuncts(const Expr& e, std::vector<const Expr*>* out) {
  if (e.kind == ExprKind::Binary && e.op == "and") {
    Conjuncts(e.args[0], out);
    Conjuncts(e.args[1], out);
  } else {
    out->push_back(&e);
  }
}

bool ReadsPerValue(const Expr& e, std::vector<int>* cols) {
  if (e.kind == ExprKind::Col && std::find(cols->begin(), cols->end(), e.index) == cols->end()) cols->push_back(e.index);
  bool perValue = !(e.kind == ExprKind::Cast && e.strict);
  for (const auto& a : e.args) perValue = ReadsPerValue(a, cols) && perValue;  // every argument's columns
  return perValue;
}

Expr AllOf(const std::vector<const Expr*>& parts) {
  Expr all = *parts[0];
  for (size_t k = 1; k < parts.size(); k++) {
    Expr both;
    both.kind = ExprKind::Binary;
    both.op = "and";
    both.type = DType::Bool;
    both.args = {std::move(all), *parts[k]};
    all = std::move(both);
  }
  return all;
}

Expr Renumbered(const Expr& e, const std::map<int, int>& to) {
  Expr c = e;
  if (c.kind == ExprKind::Col) c.index = to.at(c.index);
  for (auto& a : c.args) a = Renumbered(a, to);
  return c;
}

}  // namespace basin
