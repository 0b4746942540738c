// Date and timestamp functions (dt.*) and strptime parsing (str.toDate, str.toTimestamp).
// Dates are int32 days and timestamps int64 microseconds since 1970-01-01 UTC; all
// arithmetic floors, so times before 1970 fall in the right day, hour or bucket.
#include <cstring>

#include "io/csv.h"
#include "ops/expr_fn.h"

namespace basin {
namespace {

constexpr int64_t kMicrosPerHour = 3600000000LL, kMicrosPerMinute = 60000000LL, kMicrosPerSecond = 1000000LL;
// time_bucket's default origin, 2000-01-03 (a Monday), in days since the epoch.
constexpr int64_t kBucketOriginDays = 10959;

int64_t Micros(const Operand& a, int64_t i) {
  return a.col.type == DType::Date ? int64_t(a.col.values<int32_t>()[a.at(i)]) * kMicrosPerDay : a.col.values<int64_t>()[a.at(i)];
}

int64_t Days(const Operand& a, int64_t i) {
  return a.col.type == DType::Date ? a.col.values<int32_t>()[a.at(i)] : FloorDiv(a.col.values<int64_t>()[a.at(i)], kMicrosPerDay);
}

void AppendTemporal(ColumnBuilder& b, DType type, int64_t micros) {
  if (type == DType::Date) b.appendDate(int32_t(FloorDiv(micros, kMicrosPerDay)));
  else b.appendInt(micros);
}

// One int64 per row from a date/timestamp operand, nulls kept.
template <typename F>
Column Part(const Operand& a, int64_t rows, F f) {
  ColumnBuilder b(DType::Int64, rows);
  for (int64_t i = 0; i < rows; i++) {
    if (!a.valid(i)) b.appendNull();
    else b.appendInt(f(i));
  }
  return b.finish();
}

int64_t CivilPart(int64_t days, char which) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  return which == 'y' ? y : which == 'm' ? m : d;
}

// ---- strptime ---------------------------------------------------------------------

const char* const kMonths[12] = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"};

// Reads minDigits..maxDigits decimal digits.
bool Number(const char*& p, const char* end, int minDigits, int maxDigits, int64_t* out, int* count = nullptr) {
  int64_t v = 0;
  int n = 0;
  while (p < end && n < maxDigits && *p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0'), n++;
  if (count) *count = n;
  *out = v;
  return n >= minDigits;
}

bool MonthName(const char*& p, const char* end, bool full, int64_t* month) {
  for (int k = 0; k < 12; k++) {
    size_t len = full ? std::strlen(kMonths[k]) : 3;
    if (size_t(end - p) < len) continue;
    bool same = true;
    for (size_t i = 0; i < len && same; i++) same = (p[i] | 0x20) == kMonths[k][i];
    if (same) {
      p += len;
      *month = k + 1;
      return true;
    }
  }
  return false;
}

bool LeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Parses `s` with a strptime format into microseconds since the epoch. Whitespace in
// the format matches any run of whitespace; leading and trailing whitespace is allowed.
bool Strptime(std::string_view s, const std::string& fmt, int64_t* micros) {
  const char *p = s.data(), *end = p + s.size();
  int64_t year = 1900, month = 1, day = 1, yday = -1, hour = 0, minute = 0, second = 0, frac = 0;
  while (p < end && IsSpace(*p)) p++;
  for (size_t f = 0; f < fmt.size(); f++) {
    char c = fmt[f];
    if (IsSpace(c)) {
      while (p < end && IsSpace(*p)) p++;
      continue;
    }
    if (c != '%' || f + 1 == fmt.size()) {
      if (p == end || *p != c) return false;
      p++;
      continue;
    }
    bool ok = true;
    switch (fmt[++f]) {
      case 'Y': ok = Number(p, end, 1, 4, &year); break;
      case 'y':
        ok = Number(p, end, 1, 2, &year);
        year += year < 69 ? 2000 : 1900;
        break;
      case 'm': ok = Number(p, end, 1, 2, &month) && month >= 1 && month <= 12; break;
      case 'd': ok = Number(p, end, 1, 2, &day) && day >= 1 && day <= 31; break;
      case 'j': ok = Number(p, end, 1, 3, &yday) && yday >= 1 && yday <= 366; break;
      case 'b': ok = MonthName(p, end, false, &month); break;
      case 'B': ok = MonthName(p, end, true, &month); break;
      case 'H': ok = Number(p, end, 1, 2, &hour) && hour <= 23; break;
      case 'M': ok = Number(p, end, 1, 2, &minute) && minute <= 59; break;
      case 'S': ok = Number(p, end, 1, 2, &second) && second <= 59; break;
      case 'f': {
        int digits;
        ok = Number(p, end, 1, 6, &frac, &digits);
        for (; digits < 6; digits++) frac *= 10;
        break;
      }
      case '%': ok = p < end && *p++ == '%'; break;
      default: ok = false;  // resolve_fn.ts admits only the specifiers above
    }
    if (!ok) return false;
  }
  while (p < end && IsSpace(*p)) p++;
  if (p != end) return false;
  int64_t days;
  if (yday > 0) {
    if (yday == 366 && !LeapYear(year)) return false;
    days = CsvDaysFromCivil(year, 1, 1) + yday - 1;
  } else {
    static const int kDim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (day > kDim[month - 1] + (month == 2 && LeapYear(year))) return false;
    days = CsvDaysFromCivil(year, unsigned(month), unsigned(day));
  }
  *micros = days * kMicrosPerDay + hour * kMicrosPerHour + minute * kMicrosPerMinute + second * kMicrosPerSecond + frac;
  return true;
}

Column Parse(const Expr& e, const Operand& a, int64_t rows) {
  const std::string& format = OptStr(e, "format");
  const bool strict = OptBool(e, "strict");
  ColumnBuilder b(e.type, rows);
  for (int64_t i = 0; i < rows; i++) {
    int64_t us;
    if (!a.valid(i)) {
      b.appendNull();
    } else if (Strptime(a.s(i), format, &us)) {
      AppendTemporal(b, e.type, us);
    } else if (!strict) {
      b.appendNull();
    } else {
      std::string shown(a.s(i).substr(0, 60));
      const char* what = e.type == DType::Date ? "a date" : "a timestamp";
      throw BasinError("BASIN_CAST", "cannot parse \"" + shown + "\" in " + OptStr(e, "label") + " as " + what + " with format \"" + format +
                                         "\" (fix the format or the data, or pass { strict: false } to get null for such values)");
    }
  }
  return b.finish();
}

}  // namespace

std::optional<Column> DateFn(const Expr& e, const std::vector<Operand>& args, int64_t rows) {
  const std::string& name = e.op;
  if (name == "str.toDate" || name == "str.toTimestamp") return Parse(e, args[0], rows);
  if (name.rfind("dt.", 0) != 0) return std::nullopt;
  const Operand& a = args[0];
  if (name == "dt.year") return Part(a, rows, [&](int64_t i) { return CivilPart(Days(a, i), 'y'); });
  if (name == "dt.month") return Part(a, rows, [&](int64_t i) { return CivilPart(Days(a, i), 'm'); });
  if (name == "dt.day") return Part(a, rows, [&](int64_t i) { return CivilPart(Days(a, i), 'd'); });
  if (name == "dt.weekday") return Part(a, rows, [&](int64_t i) { return (Days(a, i) % 7 + 10) % 7 + 1; });  // 1970-01-01: Thursday
  auto timeOfDay = [&](int64_t i) { return Micros(a, i) - Days(a, i) * kMicrosPerDay; };
  if (name == "dt.hour") return Part(a, rows, [&](int64_t i) { return timeOfDay(i) / kMicrosPerHour; });
  if (name == "dt.minute") return Part(a, rows, [&](int64_t i) { return timeOfDay(i) / kMicrosPerMinute % 60; });
  if (name == "dt.second") return Part(a, rows, [&](int64_t i) { return timeOfDay(i) / kMicrosPerSecond % 60; });
  if (name == "dt.diff") {
    const int64_t unit = OptInt(e, "micros");
    const Operand& other = args[1];
    ColumnBuilder b(DType::Int64, rows);
    for (int64_t i = 0; i < rows; i++) {
      if (!a.valid(i) || !other.valid(i)) b.appendNull();
      else b.appendInt(FloorDiv(Micros(a, i), unit) - FloorDiv(Micros(other, i), unit));
    }
    return b.finish();
  }
  if (name == "dt.floor" || name == "dt.offsetBy") {
    const int64_t step = OptInt(e, "micros");
    const bool floor = name == "dt.floor";
    const int64_t origin = kBucketOriginDays * kMicrosPerDay;
    ColumnBuilder b(e.type, rows);
    for (int64_t i = 0; i < rows; i++) {
      if (!a.valid(i)) {
        b.appendNull();
        continue;
      }
      int64_t us = Micros(a, i);
      AppendTemporal(b, e.type, floor ? origin + FloorDiv(us - origin, step) * step : us + step);
    }
    return b.finish();
  }
  return std::nullopt;
}

}  // namespace basin
