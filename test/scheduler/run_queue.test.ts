// Runs on one cluster go one at a time; a run submitted while another runs says in
// its progress that it waits (a second workbench tab showed nothing until it ran), and
// that the wait is over before its own tasks report.
import { afterAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { WAITING_GROUP } from "../../engine/cluster/local.js";
import type { ProgressEvent } from "../../engine/scheduler/shell.js";

const cluster = new LocalCluster({ workers: 1 });
afterAll(() => cluster.close());

const frame = (n: number) =>
  fromColumns(
    { k: Array.from({ length: n }, (_, i) => i % 7), v: Array.from({ length: n }, (_, i) => i) },
    { partitions: 8 },
  )
    .groupBy("k")
    .agg(col("v").sum().alias("s"), count().alias("n"));

describe("runs queued on one cluster", () => {
  it("report waiting for the run before them, then their own tasks; a lone run reports no wait", async () => {
    const first: ProgressEvent[] = [];
    const second: ProgressEvent[] = [];
    const [a, b] = await Promise.all([
      frame(200_000).compute({ cluster, onProgress: (e) => first.push(e) }),
      frame(1000).compute({ cluster, onProgress: (e) => second.push(e) }),
    ]);
    expect(a.numRows).toBe(7);
    expect(b.column("n").reduce((x, y) => Number(x) + Number(y), 0)).toBe(1000);
    expect(first.some((e) => e.group === WAITING_GROUP)).toBe(false);
    expect(second[0]).toEqual({ group: WAITING_GROUP, done: 0, total: 1 });
    const over = second.findIndex((e) => e.group === WAITING_GROUP && e.done === 1);
    expect(over).toBeGreaterThan(0);
    expect(second.slice(0, over).every((e) => e.group === WAITING_GROUP)).toBe(true);
    expect(second.length).toBeGreaterThan(over + 1);
  });
});
