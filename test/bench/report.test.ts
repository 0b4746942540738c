// The benchmark's report: totals of first and best runs, and the worst ratio of each
// Basin column to the fastest peer — the numbers the targets are read from.
import { describe, expect, it } from "vitest";
import {
  fastestPeerLines,
  renderTable,
  totalRow,
  type Outcome,
  type RatioSpec,
  type ResultRow,
} from "../../bench/report.js";

const t = (seconds: number, best?: number): Outcome => ({ kind: "time", seconds, best });
const row = (label: string, o: Record<string, Outcome>): ResultRow => ({
  label,
  description: "",
  outcomes: new Map(Object.entries(o)),
  check: "ok",
});
const specs: RatioSpec[] = [
  { header: "basin/duckdb", numerator: "basin", denominators: ["duckdb+scan", "duckdb"], loadDenominators: ["duckdb"] },
  { header: "basin/polars", numerator: "basin", denominators: ["polars+scan", "polars"], loadDenominators: ["polars"] },
];
const questions = [
  row("q1", { basin: t(3, 2), "duckdb+scan": t(2), "polars+scan": t(1.5, 1) }),
  row("q2", { basin: t(1, 1), "duckdb+scan": t(4), "polars+scan": t(5) }),
];

describe("bench report", () => {
  it("totals the first runs, and the best runs in a row of its own", () => {
    const names = ["basin", "duckdb+scan", "polars+scan"];
    expect(totalRow(questions, names).outcomes.get("basin")).toEqual(t(4));
    const best = totalRow(questions, names, "best of 2");
    expect(best.label).toBe("total, best of 2");
    expect(best.outcomes.get("basin")).toEqual(t(3));
    expect(best.outcomes.get("polars+scan")).toEqual(t(6));
  });

  it("gives no total to a system that missed a question", () => {
    const missing = [...questions, row("q3", { basin: { kind: "error", message: "x" }, "duckdb+scan": t(1) })];
    expect(totalRow(missing, ["basin", "duckdb+scan"]).outcomes.has("basin")).toBe(false);
  });

  it("names the question where a Basin column is furthest from the fastest peer", () => {
    expect(fastestPeerLines(questions, specs)).toBe(
      "- `basin` against the fastest of `duckdb+scan`, `polars+scan` per question: at most 2.00x (q1, against `polars+scan`).",
    );
  });

  it("renders ratios of the first runs against the first available denominator", () => {
    const table = renderTable(questions, ["basin", "duckdb+scan", "polars+scan"], specs);
    expect(table.split("\n")[2]).toMatch(/\| q1 +\| +3\.000 \| +2\.000 \| +1\.500 \| +1\.50x \| +2\.00x \| ok +\|/);
  });
});
