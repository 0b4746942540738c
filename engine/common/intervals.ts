// Value intervals of a column's parts (row groups, partitions): whether they are
// disjoint says each value lies in one part (see lower/keyed.ts).

/** The smallest and largest value a partition (or row group) holds of a column. */
export interface Interval {
  min: number;
  max: number;
}

/**
 * Whether no two intervals share a value: each value then lies in one partition.
 *
 * @example
 * disjoint([{ min: 5, max: 9 }, { min: 0, max: 4 }]) // true
 */
export function disjoint(intervals: readonly Interval[]): boolean {
  const sorted = [...intervals].sort((a, b) => a.min - b.min);
  return sorted.every((r, i) => i === 0 || sorted[i - 1].max < r.min);
}
