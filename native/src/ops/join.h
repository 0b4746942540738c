// Hash joins over native tables (no N-API here).
//
// The hash table is built on the right side: one slot per distinct key (open addressing,
// linear probing) holding the key (or its hash) and a [start, count) range of right row
// numbers grouped by key in right input order (CSR layout). Left rows probe it in order.
// A key with a null in any key column never matches, but its row still appears unmatched
// in left/right/outer/anti joins. Row hashes come from hash.h, as in group-by and
// hashPartition.
//
// Output row order: inner/left/semi/anti: left rows in input order, the matches of one
// left row in right input order. right/outer: that part first, then the right rows that
// matched nothing, in right input order.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "store/column.h"

namespace basin {

enum class JoinHow { Inner, Left, Right, Outer, Semi, Anti };
JoinHow JoinHowFromName(const std::string& s);

struct JoinOutput {
  // Key: coalesce(left key `column`, right key `column`), `column` indexing the key lists.
  enum class Side { Left, Right, Key };
  Side side = Side::Left;
  int column = 0;
  std::string name;
};

struct JoinSpec {
  JoinHow how = JoinHow::Inner;
  std::vector<int> leftKeys;   // column indices of the left table
  std::vector<int> rightKeys;  // same count and types as leftKeys
  std::vector<JoinOutput> output;
};

TablePtr HashJoin(const Table& left, const Table& right, const JoinSpec& spec);

// HashJoin with the right side given as parts (concatenated), whose hash table is built
// once per process and reused by every call with the same right tables while they
// live: the join of each left partition with a broadcast right side.
TablePtr BroadcastJoin(const Table& left, const std::vector<TablePtr>& rights, const JoinSpec& spec);
// Frees the reused tables of right sides the store has let go; how many are kept.
size_t PurgeBroadcastBuilds();

// The pieces of HashJoin, for callers that match rows elsewhere (the GPU): argument
// checks; and the output from the matched row pairs, in the order described above.
// l[i]/r[i] are row numbers (kJoinNone: no row, nulls in the output); `split` is where
// the right rows that matched nothing start (right/outer joins; else l.size()).
constexpr uint32_t kJoinNone = 0xFFFFFFFFu;
struct JoinPairs {
  std::vector<uint32_t> l, r;
  size_t split = 0;
};
void CheckJoin(const Table& left, const Table& right, const JoinSpec& spec);
TablePtr AssembleJoin(const Table& left, const Table& right, const JoinSpec& spec, const JoinPairs& p);
// How AssembleJoin reads one output column: column `column` of the left (else the
// right) table at pair positions [start, start + n) of that side's rows (kJoinNone: a
// null, when maybeMissing). The host gathers from the tables; the GPU on the device.
using JoinGather = std::function<Column(bool left, int column, int64_t start, int64_t n, bool maybeMissing)>;
// Where one output column comes from: `column` of the left (else the right) table at
// pair positions [start, start + n) of that side's rows, nulls allowed with maybeMissing.
struct JoinPiece {
  bool left;
  int column;
  int64_t start, n;
  bool maybeMissing;
};
// Each output column (spec.output) over n pairs as one piece, or two concatenated (a
// key of a join whose rows after `split` have no left row: the right row's key there).
std::vector<std::vector<JoinPiece>> JoinColumnPieces(const JoinSpec& spec, int64_t n, int64_t split);
// The join's output columns (spec.output) over n pairs; before `split` every pair has a left row.
TablePtr AssembleJoin(const JoinSpec& spec, int64_t n, int64_t split, const JoinGather& gather);

}  // namespace basin
