// peekParts: the head and tail of a stored result, without taking the rest into JS,
// row for row what taking the whole result gives at those indices, across empty,
// one-row and big partitions, with nulls and unicode; every part is released.
import { describe, expect, it } from "vitest";
import { fromColumns, type Value } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { peekParts } from "../../engine/run/peek.js";
import { takeParts } from "../../engine/run/run_plan.js";
import { computeParts } from "../../engine/run/stored.js";

function frame(partitions: number[]) {
  const n = partitions.reduce((a, b) => a + b, 0);
  return fromColumns(
    {
      i: Array.from({ length: n }, (_, k) => (k % 7 === 3 ? null : k)),
      s: Array.from({ length: n }, (_, k) => (k % 5 === 1 ? null : `zürich-東京-${k}`)),
      d: Array.from({ length: n }, (_, k) => k / 3),
    },
    { partitions },
  );
}

describe("peekParts", () => {
  it.each([[[0, 1, 0, 1, 30, 0, 1, 2]], [[25]], [[10, 10]], [[3, 0, 2]], [[0]], [[0, 0, 1]]])(
    "gives the head and tail rows of partitions %j as the whole result has them",
    async (partitions) => {
      const df = frame(partitions);
      const whole = await takeParts(await computeParts(df.toPlan()));
      const before = native().storeStats().handles;
      const stored = await computeParts(df.toPlan());
      const peeked = await peekParts(stored, 4, 3);
      expect(native().storeStats().handles).toBe(before); // every part released
      expect(peeked.numRows).toBe(whole.numRows);
      expect(peeked.schema).toEqual(whole.schema);
      const shown = (n: number) => (n <= 7 ? [...Array(n).keys()] : [0, 1, 2, 3, n - 3, n - 2, n - 1]);
      for (const name of whole.columnNames) {
        const all = whole.column(name);
        const some = peeked.column(name);
        expect(shown(whole.numRows).map((r) => some[r])).toEqual(shown(whole.numRows).map((r) => all[r]));
        // Nothing between the head and the tail was taken.
        const taken = Object.keys(some).map(Number);
        expect(taken).toEqual(shown(whole.numRows));
      }
    },
  );

  it("reads spilled parts back to peek them", async () => {
    const df = frame([40, 40]);
    const stored = await computeParts(df.toPlan());
    native().memorySpill(1e12);
    expect(stored.refs.every((h) => native().isSpilled(h))).toBe(true);
    const peeked = await peekParts(stored, 2, 2);
    const expected: Value[] = [0, 1, 78, 79];
    expect([0, 1, 78, 79].map((r) => peeked.column("d")[r])).toEqual(expected.map((k) => (k as number) / 3));
  });
});
