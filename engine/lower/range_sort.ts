// The range-partitioned sort: sort every partition, choose range boundaries from
// samples of all of them, split every partition at the boundaries, and sort each
// range (the concatenation of its pieces in partition order; the sort is stable, so
// rows of equal keys keep frame order). Ranges come out in order.
//
// Splitting P partitions into n ranges makes P × n pieces, each a table the store
// holds, spills and reads back. Under a small memory limit both P and n grow with
// the data (10M rows under 16 MB: 476 × 476 = 226k pieces of about 40 rows, 145 s,
// most of it creating spill files), so past ONE_ROUND_PIECES the split takes two
// rounds: √n coarse ranges first, then each coarse range's pieces, in groups of about
// one range's bytes, into its share of the fine ranges: about 2·P·√n pieces.
//
// Out of core, rows are ordered by their frame position among equal keys (a hidden
// last key), so the boundaries can fall inside a run of equal keys: a key held by
// most rows (skew) spreads over many ranges instead of filling one range far past
// the memory limit. The order is the same: the sort is stable.
import type { SourceLocation } from "../common/errors.js";
import type { Field } from "../common/types.js";
import type { NativeExpr, SortKey } from "../graph/kernel_args.js";
import { concatAll, type Dep, type Step } from "../graph/tasks.js";
import { append, dep, withPosition, type Chain } from "./chain.js";
import type { TaskCloser } from "./lower_bag.js";

/** Boundary rows each partition offers when choosing the ranges of a sort. */
export const SAMPLES_PER_PARTITION = 32;

/** Pieces (partitions × ranges) above which the split takes two rounds. */
export const ONE_ROUND_PIECES = 32_768;

/**
 * The `n` ranges of a sort of `input` by `byKeys`, in order, as open chains (each
 * ends in the range's sort). With `positioned` (the input's fields), equal keys are
 * ordered by a hidden frame position, dropped at the end, so that no run of equal
 * keys has to stay in one range.
 *
 * @example
 * const ranges = rangeSort(builder, chains, keys, 48, node.loc); // 48 sorted ranges
 */
export function rangeSort(
  b: TaskCloser,
  input: Chain[],
  byKeys: SortKey[],
  n: number,
  loc: SourceLocation | undefined,
  positioned?: Field[],
): Chain[] {
  const width = positioned?.length ?? 0;
  const chains = positioned ? input.map((c, p) => withPosition(c, p, "__sort_position", loc)) : input;
  const keys = positioned ? [...byKeys, { column: width, descending: false, nullsFirst: false }] : byKeys;
  const sort: Step = { kind: "sort", keys, loc };
  // The last step of a range: its sort, and without the position.
  const last: Step[] = positioned
    ? [
        sort,
        {
          kind: "project",
          exprs: positioned.map((f, index): NativeExpr => ({ kind: "col", index, type: f.type })),
          names: positioned.map((f) => f.name),
          loc,
        },
      ]
    : [sort];
  // Samples and boundaries hold the key columns only, in key order.
  const keyOnly: SortKey[] = keys.map((k, i) => ({ ...k, column: i }));
  const P = chains.length;
  const samplesPer = Math.max(SAMPLES_PER_PARTITION, Math.ceil((4 * n) / P));
  const sorted = chains.map((c) => b.close(append(c, sort)));
  const samples = b.close({
    deps: sorted.map((key) =>
      dep(
        b.close({ deps: [dep(key)], steps: [concatAll(1), { kind: "sortBoundaries", keys, parts: samplesPer, loc }] }),
      ),
    ),
    steps: [concatAll(P)],
  });
  const boundaries = (from: Dep, parts: number): string =>
    b.close({ deps: [from], steps: [concatAll(1), { kind: "sortBoundaries", keys: keyOnly, parts, loc }] });
  const split = (deps: Dep[], bounds: string, parts: number, onKeys = keys): string =>
    b.close({
      deps: [...deps, dep(bounds)],
      steps: [concatAll(deps.length), { kind: "rangePartition", keys: onKeys, bounds: deps.length, parts, loc }],
    });
  const ranges = (pieces: string[], parts: number): Chain[] =>
    Array.from({ length: parts }, (_, r) => ({
      deps: pieces.map((key) => ({ key, index: r })),
      steps: [concatAll(pieces.length), ...last],
    }));

  const coarse = Math.ceil(Math.sqrt(n));
  // Pieces of one coarse range a group takes: about one fine range's bytes.
  const group = Math.floor((P * coarse) / n);
  if (P * n <= ONE_ROUND_PIECES || coarse < 2 || group < 2) {
    const bounds = boundaries(dep(samples), n);
    return ranges(
      sorted.map((key) => split([dep(key)], bounds, n)),
      n,
    );
  }
  const fine = Math.ceil(n / coarse);
  const coarseBounds = boundaries(dep(samples), coarse);
  // Each coarse range's fine boundaries come from the samples that fall in it.
  const samplesByRange = split([dep(samples)], coarseBounds, coarse, keyOnly);
  const pieces = sorted.map((key) => split([dep(key)], coarseBounds, coarse));
  return Array.from({ length: coarse }, (_, c) => {
    const fineBounds = boundaries({ key: samplesByRange, index: c }, fine);
    const groups: string[] = [];
    for (let i = 0; i < P; i += group)
      groups.push(
        split(
          pieces.slice(i, i + group).map((key) => ({ key, index: c })),
          fineBounds,
          fine,
        ),
      );
    return ranges(groups, fine);
  }).flat();
}
