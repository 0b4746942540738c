// `basin demo`: generates (or reuses) sample trips under os.tmpdir()/basin-demo and
// runs examples/taxi.ts on them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alignmentProblems, errorLines, makeTempDir, parseTable, removeDir, runBasin } from "../helpers/cli.js";

let dir: string;
beforeAll(() => {
  dir = makeTempDir();
});
afterAll(() => removeDir(dir));

const PAYMENTS = ["card", "cash", "no charge", "dispute"];

describe("basin demo", () => {
  it("exits 0 within 60 s and prints tips by payment type and borough", async () => {
    const r = await runBasin(["demo"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.signal, "killed by the 60 s timeout").toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.ms).toBeLessThan(60_000);
    expect(errorLines(r.stderr)).toEqual([]);
    expect(r.stderr).toMatch(/(generated|reusing) 1,000,000 sample trips in .*basin-demo/);
    const t = parseTable(r.stdout);
    expect(t.names).toEqual([
      "payment_type",
      "pickup_borough",
      "trips",
      "mean_tip_fraction",
      "median_fare",
      "total_miles",
    ]);
    expect(t.types).toEqual(["string", "string", "int64", "float64", "float64", "float64"]);
    // 4 payment types × 8 boroughs, every pair present in a million trips.
    expect(t.footer).toBe("32 rows × 6 columns");
    const shown = t.rows.filter((row) => row[0] !== "…");
    expect(shown).toHaveLength(20);
    for (const [payment, , trips, tip, fare, miles] of shown) {
      expect(PAYMENTS).toContain(payment);
      expect(Number(trips)).toBeGreaterThan(0);
      expect(Number(fare)).toBeGreaterThan(2.5);
      expect(Number(miles)).toBeGreaterThan(0);
      // Only card trips have tips; the filter keeps fare > 0, so the fraction is finite.
      if (payment === "card") expect(Number(tip)).toBeGreaterThan(0);
      else expect(Number(tip)).toBe(0);
    }
    expect(alignmentProblems(r.stdout)).toEqual([]);
  }, 70_000);
});
