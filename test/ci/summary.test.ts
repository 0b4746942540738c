// .ci/summary.mjs: CI's closing line, and which skips strict mode forgives (only the
// GPU suite's, found by its path under test/gpu/, not by a name that says "gpu").
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = makeTempDir("basin-ci-summary-");
afterAll(() => removeDir(dir));

function summarize(
  files: { name: string; tests: string[] }[],
  status = 0,
  strict = true,
): { code: number | null; lines: string[] } {
  const report = join(dir, "report.json");
  const testResults = files.map((f) => ({
    name: join(ROOT, f.name),
    status: "passed",
    assertionResults: f.tests.map((s, i) => ({ status: s, fullName: `${f.name} test ${i}` })),
  }));
  writeFileSync(report, JSON.stringify({ testResults }));
  const r = spawnSync(process.execPath, [".ci/summary.mjs", report, String(status)], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, BASIN_TEST_STRICT: strict ? "1" : "0" },
  });
  return { code: r.status, lines: r.stdout.trim().split("\n") };
}

describe("CI summary", () => {
  it("ends with passed, failed and skipped counts, forgiving skips under test/gpu/ only", () => {
    const r = summarize([
      { name: "test/gpu/gpu.test.ts", tests: ["skipped", "skipped"] },
      { name: "test/cli/run.test.ts", tests: ["passed", "passed", "passed"] },
    ]);
    expect(r.lines.at(-1)).toBe("3 passed, 0 failed, 2 skipped");
    expect(r.code).toBe(0);
  });

  it("counts a skip elsewhere as failed in strict mode, even in a file whose name says gpu", () => {
    const r = summarize([{ name: "test/memory/gpu_spill.test.ts", tests: ["passed", "skipped"] }]);
    expect(r.lines.at(-1)).toBe("1 passed, 1 failed, 0 skipped");
    expect(
      r.lines.some((l) => l.includes("skipped in strict mode counts as failed: ") && l.includes("gpu_spill")),
    ).toBe(true);
    expect(r.code).toBe(1);
    expect(
      summarize([{ name: "test/memory/gpu_spill.test.ts", tests: ["passed", "skipped"] }], 0, false).lines.at(-1),
    ).toBe("1 passed, 0 failed, 1 skipped");
  });

  it("fails when vitest failed outside any test", () => {
    const r = summarize([{ name: "test/cli/run.test.ts", tests: ["passed"] }], 1);
    expect(r.lines.at(-1)).toBe("1 passed, 1 failed, 0 skipped");
    expect(r.code).toBe(1);
  });
});
