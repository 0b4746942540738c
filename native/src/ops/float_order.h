// How doubles compare in expressions, as DuckDB (and Basin's sort) orders them: NaN
// equals NaN and is above every other value, +inf included; -0.0 equals 0.0. IEEE
// comparisons would make `x > 1` false and `x != 0` false for a NaN.
#pragma once
#include "ops/host_device.h"

namespace basin {

// x below, above, equal to y in that order, each without a branch (vectorised loops
// stay vectorised): a NaN is above every number, and two NaNs are equal.
BASIN_HD inline bool DoubleBelow(double x, double y) { return (x < y) | ((x == x) & (y != y)); }
BASIN_HD inline bool DoubleAbove(double x, double y) { return (x > y) | ((x != x) & (y == y)); }
BASIN_HD inline bool DoubleEqual(double x, double y) { return (x == y) | ((x != x) & (y != y)); }

// -1, 0 or 1 as x is below, equal to or above y in that order.
BASIN_HD inline int CompareDoubles(double x, double y) { return int(DoubleAbove(x, y)) - int(DoubleBelow(x, y)); }

// Whether v takes the place of a running minimum (maximum with isMax) `cur` in that
// order: a maximum that has seen a NaN stays NaN, a minimum takes every number over
// a NaN. A running minimum starts at NaN (so a group of NaNs alone keeps it), a
// maximum at -inf.
BASIN_HD inline bool ReplacesExtreme(double v, double cur, bool isMax) {
  const int c = CompareDoubles(v, cur);
  return isMax ? c > 0 : c < 0;
}

// A sum of squared deviations that rounding made negative is 0; a NaN (the data held
// NaN or an infinity) stays NaN: std::max(0.0, NaN) is 0, which made std of [1, NaN] 0.
BASIN_HD inline double NonNegative(double v) { return v < 0 ? 0.0 : v; }

}  // namespace basin
