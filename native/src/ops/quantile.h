// How a continuous quantile reads between two neighbouring ranks, on the CPU and the
// GPU alike.
#pragma once
#include "ops/host_device.h"

namespace basin {

// The value a fraction f (0 ≤ f < 1) of the way from lo to hi, as DuckDB's
// quantile_cont gives it: lo·(1 − f) + hi·f, so that -inf and 7 give -inf and inf and
// inf give inf (lo + f·(hi − lo) made both NaN).
BASIN_HD inline double Interpolate(double lo, double hi, double f) { return lo * (1 - f) + hi * f; }

}  // namespace basin
