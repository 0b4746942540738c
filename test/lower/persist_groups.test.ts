// persist() keeps a frame's partitions, concatenated into `partitions` adjacent groups
// by one task per group (no whole-result concatenation, no copies of slices).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { col, readCsv } from "../../engine/api/index.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { optimize } from "../../engine/plan/optimizer.js";

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
    const t = await p.select(col("a").sum().alias("sum"), col("a").count().alias("n"), col("s").max().alias("m")).compute();
    expect(t.toRows()).toEqual([{ sum: (3000 * 2999) / 2, n: 3000, m: "s999" }]);
    expect((await p.head(3).compute()).column("a")).toEqual([0, 1, 2]);
    p.unpersist();
  });

  it("persist() over fewer partitions than asked slices the result", async () => {
    const p = await readCsv(csv(10)).persist({ partitions: 4 });
    expect((await p.compute()).column("a")).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    p.unpersist();
  });
});
