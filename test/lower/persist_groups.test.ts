// persist() keeps a frame's partitions, concatenated into `partitions` adjacent groups
// by one task per group, or split into row ranges when there are fewer (never one
// whole-result concatenation).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { col, LocalCluster, readCsv } from "../../engine/api/index.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { native } from "../../engine/native/addon.js";

function csv(n: number): string {
  const f = join(mkdtempSync(join(tmpdir(), "basin-persist-")), "t.csv");
  writeFileSync(f, "a,s\n" + Array.from({ length: n }, (_, i) => `${i},s${i}`).join("\n") + "\n");
  return f;
}

describe("grouped parts", () => {
  it("lowers 7 partitions into 3 adjacent groups, each concatenated by its own task", () => {
    const df = readCsv(csv(700), { blocksize: 400 });
    const plain = lowerPlan(optimize(df.node), { parts: true });
    const chains = plain.tasks.find((t) => t.key === plain.output)!.deps.length;
    expect(chains).toBeGreaterThan(3);
    const g = lowerPlan(optimize(df.node), { parts: true, groups: 3 });
    const out = g.tasks.find((t) => t.key === g.output)!;
    expect(out.deps).toHaveLength(3);
    const members = out.deps.map((d) => g.tasks.find((t) => t.key === d.key)!);
    const sizes = members.map((t) => (t.steps[0]!.kind === "concat" ? t.deps.length : 1));
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(chains);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it("persist() over more partitions than asked keeps every row, in order", async () => {
    const f = csv(3000);
    const p = await readCsv(f, { blocksize: 1000 }).persist({ partitions: 2 });
    const t = await p
      .select(col("a").sum().alias("sum"), col("a").count().alias("n"), col("s").max().alias("m"))
      .compute();
    expect(t.toRows()).toEqual([{ sum: (3000 * 2999) / 2, n: 3000, m: "s999" }]);
    expect((await p.head(3).compute()).column("a")).toEqual([0, 1, 2]);
    p.unpersist();
  });

  it("lowers 2 partitions into 5 groups by splitting each in the task that makes it", () => {
    const df = readCsv(csv(700), { blocksize: 4000 });
    expect(
      lowerPlan(optimize(df.node), { parts: true }).tasks.find((t) => t.steps.at(-1)!.kind === "parts")!.deps,
    ).toHaveLength(2);
    const g = lowerPlan(optimize(df.node), { parts: true, groups: 5 });
    const out = g.tasks.find((t) => t.key === g.output)!;
    expect(out.deps).toHaveLength(5);
    const splits = g.tasks.map((t) => t.steps.at(-1)!).flatMap((s) => (s.kind === "split" ? [s.parts] : []));
    expect(splits.sort()).toEqual([2, 3]);
    expect(g.tasks.some((t) => t.steps.some((s) => s.kind === "concat"))).toBe(false);
  });

  it("cuts a CSV into as many blocks as persist() asks for, when its blocksize would give fewer", () => {
    const f = csv(300_000); // about 4 MiB: 1 block of 64 MiB
    const plain = lowerPlan(optimize(readCsv(f).node), { parts: true });
    expect(plain.tasks.filter((t) => t.steps[0]!.kind === "scanCsv")).toHaveLength(1);
    const g = lowerPlan(optimize(readCsv(f).node), { parts: true, groups: 3 });
    expect(g.tasks.filter((t) => t.steps[0]!.kind === "scanCsv")).toHaveLength(3);
    expect(g.tasks.some((t) => t.steps.some((s) => s.kind === "split" || s.kind === "concat"))).toBe(false);
    // Never below 1 MiB a block: a small file is split after scanning instead.
    const tiny = lowerPlan(optimize(readCsv(csv(100)).node), { parts: true, groups: 3 });
    expect(tiny.tasks.filter((t) => t.steps[0]!.kind === "scanCsv")).toHaveLength(1);
  });

  it("persist() over fewer partitions than asked splits them: every row, in order, in `partitions` tables", async () => {
    const f = csv(1000);
    for (const partitions of [4, 7]) {
      const p = await readCsv(f, { blocksize: 6000 }).persist({ partitions });
      const node = p.node as { kind: string; handles?: number[] };
      expect(node.kind).toBe("stored");
      const sizes = node.handles!.map((h) => native().tableRows(h));
      expect(sizes).toHaveLength(partitions);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(1000);
      expect(Math.min(...sizes)).toBeGreaterThan(0);
      expect((await p.compute()).column("a")).toEqual(Array.from({ length: 1000 }, (_, i) => i));
      p.unpersist();
    }
    const tiny = await readCsv(csv(3)).persist({ partitions: 8 });
    expect((await tiny.compute()).column("s")).toEqual(["s0", "s1", "s2"]);
    tiny.unpersist();
  });

  it("persist({ partitionBytes }) keeps partitions of about that size: every row, in order, none left in the store", async () => {
    const f = csv(20_000);
    const cluster = new LocalCluster({ workers: 2 });
    try {
      const before = native().storeStats().handles;
      const whole = await readCsv(f, { blocksize: 20_000 }).persist({ cluster, partitions: 1 });
      const size = native().tableBytes((whole.node as { handles: number[] }).handles[0]!);
      whole.unpersist();
      // 30% of the table a partition: 4 of them, whatever the blocks were (their sizes add
      // up to a little more than the whole: each has its own string offsets' last entry).
      const p = await readCsv(f, { blocksize: 20_000 }).persist({ cluster, partitionBytes: Math.ceil(size * 0.3) });
      const node = p.node as { handles: number[]; bytes: number };
      expect(node.handles).toHaveLength(4);
      expect(node.bytes).toBe(node.handles.reduce((n, h) => n + native().tableBytes(h), 0));
      expect(native().storeStats().handles - before).toBe(4);
      expect((await p.compute({ cluster })).column("a")).toEqual(Array.from({ length: 20_000 }, (_, i) => i));
      p.unpersist();
      // Never fewer than one per worker, however large the size given.
      const big = await readCsv(f, { blocksize: 20_000 }).persist({ cluster, partitionBytes: "1GB" });
      expect((big.node as { handles: number[] }).handles).toHaveLength(2);
      big.unpersist();
      expect(native().storeStats().handles).toBe(before);
    } finally {
      await cluster.close();
    }
  });

  it("persist() refuses partitions and partitionBytes together, and a size that is not one", async () => {
    const df = readCsv(csv(10));
    await expect(df.persist({ partitions: 2, partitionBytes: "1MB" })).rejects.toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining("persist() takes partitions or partitionBytes, not both"),
    });
    await expect(df.persist({ partitionBytes: "lots" })).rejects.toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining(`persist()'s partitionBytes must be a size such as "4GB"`),
    });
    await expect(df.persist({ partitionBytes: 0.5 })).rejects.toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining("partitionBytes must be at least one byte, got 0.5"),
    });
  });
});
