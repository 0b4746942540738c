// fromColumns and literals at the edges of int64: whole numbers int64 cannot hold are
// doubles (as DuckDB types 1e19), bigints past 2^53 keep every digit, and one past
// int64 is BASIN_PLAN naming the column.
import { afterAll, describe, expect, it } from "vitest";
import { closeDefaultCluster, col, fromColumns, lit } from "../../engine/api/index.js";
import { thrown } from "../helpers/errors.js";

afterAll(() => closeDefaultCluster());

describe("int64 edges from JS", () => {
  it("reads whole numbers past int64 as float64, not as wrapped int64", async () => {
    const df = fromColumns({ x: [1e19, 1e300, 5] }, { partitions: 2 });
    expect(df.schema).toEqual([{ name: "x", type: "float64" }]);
    expect((await df.compute()).column("x")).toEqual([1e19, 1e300, 5]);
  });

  it("keeps every digit of bigints past 2^53, to the ends of int64", async () => {
    const big = [9223372036854775807n, -9223372036854775808n, 9007199254740993n, 7n];
    const t = await fromColumns({ x: big }, { partitions: [1, 0, 3] }).compute();
    expect(t.column("x")).toEqual([9223372036854775807n, -9223372036854775808n, 9007199254740993n, 7]);
  });

  it("refuses a bigint past int64, naming the column", () => {
    const e = thrown(() => fromColumns({ big: [1n, 2n ** 63n] }));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toContain('column "big": 9223372036854775808 does not fit in int64');
  });

  it("types a literal past int64 as float64, so int64 + 1e19 is a double", async () => {
    const t = await fromColumns({ i: [1, -2] })
      .select(col("i").add(1e19).alias("a"), lit(1e19).alias("b"))
      .compute();
    expect(t.schema.map((f) => f.type)).toEqual(["float64", "float64"]);
    expect(t.column("a")).toEqual([1e19 + 1, 1e19 - 2]);
    expect(t.column("b")).toEqual([1e19, 1e19]);
  });

  it("keeps timestamps far from 1970 to the microsecond, and refuses an Invalid Date as BASIN_PLAN naming the column", async () => {
    const far = [new Date("9999-12-31T23:59:59.999Z"), new Date("0001-01-01T00:00:00.001Z"), new Date(0)];
    const t = await fromColumns({ d: far }).select(col("d").cast("string").alias("s")).compute();
    // Not 23:59:59.999008, as a product of doubles made it.
    expect(t.column("s")).toEqual(["9999-12-31 23:59:59.999", "0001-01-01 00:00:00.001", "1970-01-01 00:00:00"]);
    const e = thrown(() => fromColumns({ when: [new Date(0), new Date("garbage")] }));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toContain('column "when" holds an Invalid Date');
  });

  it("compares and computes with BigInt values exactly past 2^53; one past int64 is BASIN_PLAN", async () => {
    const big = [9007199254740992n, 9007199254740993n, 9223372036854775807n, -9223372036854775808n, 5n];
    const df = fromColumns({ x: big });
    const t = await df
      .filter(col("x").gt(9007199254740992n).or(col("x").eq(-9223372036854775808n)))
      .select(
        col("x"),
        col("x").sub(1n).alias("less"),
        lit(9007199254740993n).alias("l"),
        col("x").lt(6n).alias("small"),
      )
      .compute();
    expect(t.toRows()).toEqual([
      { x: 9007199254740993n, less: 9007199254740992n, l: 9007199254740993n, small: false },
      { x: 9223372036854775807n, less: 9223372036854775806n, l: 9007199254740993n, small: false },
      { x: -9223372036854775808n, less: 9223372036854775807n, l: 9007199254740993n, small: true }, // wraps, as documented
    ]);
    const e = thrown(() => col("x").eq(2n ** 63n));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toContain("9223372036854775808n is outside int64");
  });
});
