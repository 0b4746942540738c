// How doubles compare in expressions, as DuckDB (and Basin's sort) orders them: NaN
// equals NaN and is above every other value, +inf included; -0.0 equals 0.0. IEEE
// comparisons would make `x > 1` false and `x != 0` false for a NaN.
#pragma once
#include "ops/host_device.h"

namespace basin {

// -1, 0 or 1 as x is below, equal to or above y in that order.
BASIN_HD inline int CompareDoubles(double x, double y) {
  if (x < y) return -1;
  if (x > y) return 1;
  return int(x != x) - int(y != y);  // a NaN is above every number; two NaNs are equal
}

// Whether v takes the place of a running minimum (maximum with isMax) `cur` in that
// order: a maximum that has seen a NaN stays NaN, a minimum takes every number over
// a NaN. A running minimum starts at NaN (so a group of NaNs alone keeps it), a
// maximum at -inf.
BASIN_HD inline bool ReplacesExtreme(double v, double cur, bool isMax) {
  const int c = CompareDoubles(v, cur);
  return isMax ? c > 0 : c < 0;
}

}  // namespace basin
