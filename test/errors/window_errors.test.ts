// Mistakes with window functions fail before anything runs, with a BASIN_PLAN error
// that names the column or argument, says what to do, and points at the line of
// this file that made the call.
import { afterAll, describe, expect, it } from "vitest";
import { col, fromColumns } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { thrown, sourceLocator } from "../helpers/errors.js";

const loc = sourceLocator(import.meta.url);

const df = () =>
  fromColumns({
    k: [1, 1, 2],
    s: ["a", "ü", null],
    x: [1.5, null, 3],
    d: [new Date("2024-01-01"), null, new Date("2024-01-03")],
  });

afterAll(() => {
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

describe("window function errors", () => {
  it("a numeric window on a string column names the column and its type", () => {
    const e = thrown(() => df().withColumns({ c: col("s").cumSum() })); // @cumsum
    expect(e.message).toContain(
      'cumSum() needs a numeric column, but col("s") is string; cast it or pick another column',
    );
    expect(e.location).toBe(loc("cumsum", "cumSum"));
    const r = thrown(() => df().select(col("d").rolling(2).mean())); // @mean
    expect(r.message).toContain('rolling(2).mean() needs a numeric column, but col("d") is timestamp');
    expect(r.location).toBe(loc("mean", "mean"));
    expect(thrown(() => df().select(col("s").rolling(2).max())).message).toContain(
      "needs a numeric, date or timestamp column",
    );
    expect(thrown(() => df().select(col("s").diff())).message).toContain(
      'diff() needs a numeric column, but col("s") is string',
    );
  });

  it("rolling(0) and other bad sizes say what is allowed", () => {
    const e = thrown(() => col("x").rolling(0)); // @rolling0
    expect(e.message).toContain("rolling() needs a positive integer number of rows, got 0");
    expect(e.location).toBe(loc("rolling0", "rolling"));
    expect(thrown(() => col("x").rolling(2.5)).message).toContain("got 2.5");
    expect(thrown(() => col("x").rolling(3, { minPeriods: 4 })).message).toContain(
      "minPeriods must be an integer from 1 to the window size 3, got 4",
    );
    expect(thrown(() => col("x").rolling(3, { minPeriods: 0 })).message).toContain("got 0");
    expect(thrown(() => col("x").shift(1.5)).message).toContain("shift() needs an integer number of rows, got 1.5");
    expect(thrown(() => col("x").diff(Number.NaN)).message).toContain(
      "diff() needs an integer number of rows, got NaN",
    );
  });

  it("over() on an unknown column lists the columns", () => {
    const e = thrown(() => df().withColumns({ c: col("x").cumSum().over("nope") })); // @over
    expect(e.message).toContain('column "nope" does not exist; the columns are: k, s, x, d');
    expect(e.location).toBe(loc("over", "over"));
    expect(thrown(() => col("x").cumSum().over()).message).toContain(
      'over() needs at least one key column, as in over("g")',
    );
  });

  it("over() on something that is not a window function points to groupBy().agg()", () => {
    const e = thrown(() => col("x").sum().over("k")); // @notwindow
    expect(e.message).toContain(
      "over() applies to window functions (cumSum, cumMin, cumMax, cumCount, shift, diff, rolling); for a per-group aggregate use groupBy(...).agg(...)",
    );
    expect(e.location).toBe(loc("notwindow", "over"));
  });

  it("a window inside filter, agg or a group key says to compute it with withColumns() first", () => {
    const hint =
      "is a window function; compute it with withColumns() or select() first, then filter, group or aggregate the new column";
    const f = thrown(() => df().filter(col("x").cumSum().gt(1))); // @filter
    expect(f.message).toContain(`cumSum() ${hint}`);
    expect(f.location).toBe(loc("filter", "cumSum"));
    expect(thrown(() => df().groupBy("k").agg(col("x").shift().sum())).message).toContain(`shift() ${hint}`);
    expect(thrown(() => df().select(col("x").rolling(2).sum().mean())).message).toContain(`rolling(2).sum() ${hint}`);
    expect(thrown(() => df().groupBy(col("x").cumMax().alias("m"))).message).toContain(`cumMax() ${hint}`);
  });
});
