// Join matching on the GPU: the right side's keys sorted with their row numbers (a
// stable radix sort, so equal keys keep right input order), each left row's matches
// found by binary search, counted, offset by a scan and written as row pairs in the
// order HashJoin outputs them. One fixed-width key; nulls never match.
#pragma once
#include "cuda/device_table.cuh"
#include "ops/join.h"

namespace basin {
namespace gpu {

// A join's row pairs left on the device: int32 row numbers (-1, kJoinNone: no right
// row), n of them; r is null for semi and anti joins.
struct DevicePairs {
  DBuf l, r;
  int64_t n = 0;
};

// The row pairs of an inner, left, semi or anti join of l and r on key columns lkey/rkey.
DevicePairs MatchRows(DTable& l, int lkey, DTable& r, int rkey, JoinHow how);

}  // namespace gpu
}  // namespace basin
