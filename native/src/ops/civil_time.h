// Calendar arithmetic on days and microseconds since 1970-01-01, shared by the CPU's
// expressions and writers and the GPU's expression kernel (so their dates agree).
#pragma once
#include <cstdint>

#include "ops/host_device.h"

namespace basin {

constexpr int64_t kMicrosPerDay = 86400000000LL;

// Floor division (rounds towards negative infinity), for times before 1970.
BASIN_HD inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Year, month (1–12) and day (1–31) of day z since 1970-01-01 (Howard Hinnant's
// civil_from_days), proleptic Gregorian, for any z.
BASIN_HD inline void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = unsigned(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = int64_t(yoe) + era * 400 + (*m <= 2);
}

}  // namespace basin
