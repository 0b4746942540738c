// Taking resolved expressions apart and putting them together: the conjuncts of a
// predicate, the columns an expression reads, renumbering its columns for a table of
// fewer, a conjunction. Used where a predicate is
// split between places that evaluate it (io/parquet_decode.cc: dictionary entries,
// decoded columns, the rows kept).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "ops/expr.h"

namespace basin {

// The conjuncts of `e` (itself when it is not an AND), pointing into it.
void Conjuncts(const Expr& e, std::vector<const Expr*>* out);

// The columns `e` reads, every one added to *cols once (callers decode them); false when
// its value may depend on more than each row's values (a strict cast can fail on a value
// no kept row has).
bool ReadsPerValue(const Expr& e, std::vector<int>* cols);

// The conjunction of `parts` (at least one).
Expr AllOf(const std::vector<const Expr*>& parts);

// `e` reading column to[c] where it read column c (every column it reads is in `to`).
Expr Renumbered(const Expr& e, const std::map<int, int>& to);

}  // namespace basin
