// Window functions over the row order of a table (engine/native/addon.ts NativeWindow):
// cumulative sum/min/max, shift, diff and fixed-size rolling sum/mean/min/max, over
// the whole table or within groups of key columns.
//
// Null semantics are DuckDB's window aggregates: cumulative and rolling aggregates skip
// nulls (a cumulative result is null until the first non-null value); a rolling result
// is null unless its window (the current row and the n - 1 before it) holds at least
// minPeriods non-null values. shift/diff give null where the source row is outside the
// frame (or group) or null. Floats order NaN after every number (min/max), as in sort.h.
//
// Distributed use without groups (engine/lower/window.ts): each partition makes a
// small carry (its last rows, or first rows for a negative shift, with cumulative
// specs holding the partition's aggregate in the last row); WindowScan combines the
// carries into the state before (or after) every partition; WindowEval then computes
// the partition as if the carried rows were attached to it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "store/column.h"

namespace basin {

enum class WindowOp { CumSum, CumMin, CumMax, Shift, Diff, RollingSum, RollingMean, RollingMin, RollingMax };

WindowOp WindowOpFromName(const std::string& s);
bool IsCumulative(WindowOp op);

struct WindowSpec {
  WindowOp op = WindowOp::CumSum;
  int column = 0;         // input column
  int64_t n = 1;          // shift/diff offset (negative looks ahead); rolling window size
  int64_t minPeriods = 1; // rolling: non-null values needed for a result
  std::string name;       // output column name
};

// t's columns followed by one column per spec. With `keys`, each spec runs within the
// groups of those key columns (null equals null), rows in table order. `before`/`after`
// (no keys only; may be null) are carries from WindowScan: column i holds spec i's rows
// that precede / follow t.
TablePtr WindowEval(const Table& t, const std::vector<WindowSpec>& specs, const std::vector<int>& keys,
                    const Table* before, const Table* after);

// A partition's carry: column i ("c<i>") holds min(rows, t.rows) values of spec i's input
// column, the last ones (fromEnd) or the first ones; with fromEnd a cumulative spec's
// column is null but for its last row, the aggregate of the whole column.
TablePtr WindowCarry(const Table& t, const std::vector<WindowSpec>& specs, int64_t rows, bool fromEnd);

// Given the carries of partitions 0..P-1 in order, the state before each partition
// (fromEnd: combining carries 0..p-1) or after it (combining p+1..P-1), as carries.
std::vector<TablePtr> WindowScan(const std::vector<TablePtr>& carries, const std::vector<WindowSpec>& specs, int64_t rows,
                                 bool fromEnd);

// t with an int64 column `name` appended, holding start, start + 1, ...
TablePtr WithRowIndex(const Table& t, int64_t start, const std::string& name);

}  // namespace basin
