// Group keys packed into one integer per row: several key columns, or one column of
// short strings, whose values fit 64 bits together become one integer key. Grouping
// then hashes one integer (a bijection: no key is ever compared) or, when the packed
// values span few, indexes an array by them (TPC-H Q1's two one-letter flags: 4 groups
// from a 16-bit span). Integers, dates and bools pack as their offset from the
// column's smallest value; strings of up to 7 bytes as their bytes and length, offset
// the same way; a null as one value past the largest. Floats never pack (NaN, -0.0).
#pragma once
#include <cstdint>
#include <vector>

#include "store/column.h"

namespace basin {

// Row i's packed keys in (*out)[i] (a buffer of t.rows uint64), and in *span the
// largest packed value there can be; false when the keys do not fit 64 bits (or one
// is a float).
bool PackKeys(const Table& t, const std::vector<int>& keys, BufferPtr* out, uint64_t* span);

}  // namespace basin
