// Join matching on the GPU, for every join type and 1..kMaxKeys key columns of any
// type: a hash table over the right rows whose keys have no null (open addressing, one
// slot per distinct key, key_compare.cuh's hashing and equality), the rows of each slot
// in right input order (a stable radix sort of (slot, row)), each left row's slot found
// by probing, its matches counted, offset by a scan and written as row pairs in the
// order HashJoin outputs them; for right and outer joins the right rows no left row
// matched follow.
#pragma once
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/join.h"

namespace basin {
namespace gpu {

// A join's row pairs left on the device: int32 row numbers (-1, kJoinNone: no row), n
// of them; r is null for semi and anti joins. The right rows that matched nothing
// (right and outer joins) start at `split` (else split == n).
struct DevicePairs {
  DBuf l, r;
  int64_t n = 0, split = 0;
};

// The row pairs of a join (spec.how) of l and r on key columns lkeys/rkeys (the same
// count, at most kMaxKeys, and types pairwise).
DevicePairs MatchRows(DTable& l, const std::vector<int>& lkeys, DTable& r, const std::vector<int>& rkeys, JoinHow how);

}  // namespace gpu
}  // namespace basin
