// Mistakes in scalar expressions: wrong types and bad literals fail when the pipeline
// is written (BASIN_PLAN, located at the call); values that do not parse fail the
// compute (BASIN_CAST) naming the value, the expression and the way out.
import { afterAll, describe, expect, it } from "vitest";
import { closeDefaultCluster, col, fromColumns, when } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { thrown, rejected, sourceLocator } from "../helpers/errors.js";

const loc = sourceLocator(import.meta.url);

afterAll(async () => {
  await closeDefaultCluster();
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

const frame = () =>
  fromColumns(
    {
      s: ["2024-01-05", "05/01/2024", null, "x"],
      fare: [1.5, 2, null, 4],
      d: [new Date("2024-01-05T00:00:00Z"), null, null, null],
    },
    { partitions: 2, types: { d: "date" } },
  );

describe("type errors when the pipeline is written", () => {
  it("a string function on a float column names the column and its type, at the call", () => {
    const e = thrown(() => frame().select(col("fare").str.lower())); // @lower
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toMatch(/str\.lower\(\) needs a string column, but col\("fare"\) is float64/);
    expect(e.location).toBe(loc("lower", "lower()"));
  });

  it("a date function on a string column says to parse it", () => {
    const e = thrown(() => frame().withColumns({ y: col("s").dt.year() }));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toMatch(/dt\.year\(\) needs a date or timestamp column, but col\("s"\) is string/);
  });

  it("a value that is no scalar (an array, an object, an Invalid Date) names what it got, at the call", () => {
    const arr = thrown(() => col("fare").gt([1, 2] as unknown as number)); // @arr
    expect(arr.code).toBe("BASIN_PLAN");
    expect(arr.detail).toBe("expected an expression or a number, BigInt, string, boolean, Date or null, got an array");
    expect(arr.location).toBe(loc("arr", "gt("));
    expect(thrown(() => col("fare").gt({} as unknown as number)).detail).toMatch(/got object$/);
    expect(thrown(() => col("d").ge(new Date("no date"))).detail).toBe(
      "an Invalid Date given as a value; pass a valid Date",
    );
  });

  it("math on a string column", () => {
    const e = thrown(() => frame().select(col("s").sqrt()));
    expect(e.detail).toMatch(/sqrt\(\) needs a number, but col\("s"\) is string/);
  });

  it("a regex that does not compile names the pattern and the reason, at the call", () => {
    const e = thrown(() => frame().filter(col("s").str.contains("(20"))); // @regex
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toContain('the regular expression "(20" does not compile');
    expect(e.detail).toMatch(/literal: true/);
    expect(e.location).toBe(loc("regex", "contains("));
    const r = thrown(() => frame().select(col("s").str.replace("[a-", "")));
    expect(r.detail).toContain('"[a-"');
    // The same text as a literal is fine.
    expect(() => frame().filter(col("s").str.contains("(20", { literal: true }))).not.toThrow();
  });

  it("an unsupported strptime specifier lists the supported ones", () => {
    const e = thrown(() => frame().select(col("s").str.toDate("%Y-%m-%d %Z")));
    expect(e.detail).toMatch(/uses %Z; the supported specifiers are %Y %y %m %d %j %b %B %H %M %S %f %%/);
  });

  it("a bad duration, a sub-day floor of a date, an unknown diff unit", () => {
    expect(thrown(() => frame().select(col("d").dt.offsetBy("15x"))).detail).toMatch(
      /"15x" is not a duration.*us, ms, s, m, h, d, w/,
    );
    expect(thrown(() => frame().select(col("d").dt.floor("1h"))).detail).toMatch(
      /of a date needs whole days.*cast the date to timestamp/,
    );
    expect(thrown(() => frame().select(col("d").dt.floor("0s"))).detail).toMatch(/positive duration/);
    expect(thrown(() => frame().select(col("d").dt.diff(col("d"), "fortnight" as never))).detail).toMatch(
      /unknown unit "fortnight"; use one of day, hour/,
    );
    expect(thrown(() => frame().select(col("d").dt.diff(col("fare"), "day"))).detail).toMatch(
      /col\("fare"\) is float64/,
    );
  });

  it("when() values of different types, and a non-bool condition", () => {
    const e = thrown(() => frame().select(when(col("fare").gt(2)).then("big").otherwise(col("fare"))));
    expect(e.detail).toMatch(/one type.*"big" is string, col\("fare"\) is float64/);
    expect(thrown(() => frame().select(when(col("fare")).then(1))).detail).toMatch(
      /needs a bool condition, but col\("fare"\) is float64/,
    );
  });

  it("isIn values of the wrong type, str options of the wrong kind", () => {
    expect(thrown(() => frame().select(col("fare").isIn(["a"]))).detail).toMatch(
      /isIn\(\) values must be float64 like col\("fare"\), but "a" is string/,
    );
    expect(thrown(() => frame().select(col("d").isIn(["2024-13-45"]))).detail).toMatch(
      /"2024-13-45" is not a valid date/,
    );
    expect(thrown(() => frame().select(col("s").str.slice(0, -1))).detail).toMatch(/length of at least 0/);
    expect(thrown(() => frame().select(col("fare").log(1))).detail).toMatch(/positive base other than 1/);
  });
});

// Partitions run in parallel: the first bad value met may be in either partition.
describe("values that do not parse fail the compute", () => {
  it("toDate: BASIN_CAST naming the expression, the value, the format and strict: false", async () => {
    const df = frame().select(col("s").str.toDate("%Y-%m-%d").alias("d")); // @todate
    const e = await rejected(df.compute());
    expect(e.code).toBe("BASIN_CAST");
    expect(e.detail).toMatch(/cannot parse "(05\/01\/2024|x)" in col\("s"\) as a date with format "%Y-%m-%d"/);
    expect(e.detail).toContain("{ strict: false }");
    expect(e.location).toBe(loc("todate", "select("));
    const t = await frame()
      .select(col("s").str.toDate("%Y-%m-%d", { strict: false }).alias("d"))
      .compute();
    expect(t.column("d")).toEqual([new Date("2024-01-05T00:00:00Z"), null, null, null]);
  });

  it("cast: BASIN_CAST naming the value and the cast expression; strict: false gives null", async () => {
    const e = await rejected(
      frame()
        .withColumns({ n: col("s").cast("int64") })
        .compute(),
    );
    expect(e.code).toBe("BASIN_CAST");
    expect(e.detail).toMatch(/cannot cast "(2024-01-05|x)" to int64 in cast\(col\("s"\) as int64\)/);
    expect(e.detail).toContain("{ strict: false }");
    const b = await rejected(frame().select(col("s").cast("bool")).compute());
    expect(b.detail).toMatch(/cannot cast "(2024-01-05|x)" to bool/);
    const t = await frame()
      .select(col("s").cast("date", { strict: false }))
      .compute();
    expect(t.column("s")).toEqual([new Date("2024-01-05T00:00:00Z"), null, null, null]);
  });
});
