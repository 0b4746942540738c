// The GPU differential suite as plain functions (no vitest), so the same cases run
// under vitest (test/gpu/gpu.test.ts) and in the device runner (test/gpu/device_run.ts)
// on a machine without Node's test tools: every pipeline runs on a cluster whose only
// worker is a GPU worker and on a CPU cluster, and the answers must match row for row
// (same order; floats within 1e-9 relative, as atomics add in another order).
import {
  col,
  concat,
  concatStr,
  corr,
  count,
  fromColumns,
  lit,
  LocalCluster,
  type DataFrame,
  type Table,
} from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { makeTrips } from "../helpers/data.js";

export interface GpuCase {
  name: string;
  build: (t: DataFrame, special: DataFrame) => DataFrame;
  /** Whether some of its steps must have run on the GPU (false: it tests the CPU fallback). */
  onGpu: boolean;
}

/** Trips with nulls everywhere, unicode strings, a skewed key, empty and one-row partitions. */
export function tripsFrame(rows: number, seed: number, partitions?: number[]): DataFrame {
  const t = makeTrips(rows, seed);
  return fromColumns(
    { ...t, day: t.day.map((d) => (d === null ? null : new Date(`${d}T00:00:00Z`))) },
    {
      partitions: partitions ?? [0, 1, rows - 4, 0, 1, 2, 0],
      types: { k: "int64", v: "int64", f: "float64", day: "date" },
    },
  );
}

/** Float keys and values the hash and the comparisons must treat as the CPU does: -0, NaN, ±∞. */
export function specialFrame(): DataFrame {
  const x = [0, -0, NaN, Infinity, -Infinity, 1.5, NaN, -0, null, 1.5, 2 ** 53, -(2 ** 53)];
  return fromColumns(
    { x, i: x.map((_, k) => (k % 3 === 0 ? null : k * 1_000_000_007)), g: x.map((_, k) => k % 4) },
    { partitions: [5, 0, 7], types: { x: "float64", i: "int64", g: "int64" } },
  );
}

export const GPU_CASES: GpuCase[] = [
  { name: "filter with and / comparisons", onGpu: true, build: (t) => t.filter(col("v").gt(0).and(col("f").lt(50))) },
  { name: "filter with three-valued or", onGpu: true, build: (t) => t.filter(col("flag").or(col("v").lt(-500))) },
  { name: "filter with not and isNull", onGpu: true, build: (t) => t.filter(col("flag").not().or(col("k").isNull())) },
  { name: "filter on a date", onGpu: true, build: (t) => t.filter(col("day").ge("2024-02-01")) },
  { name: "filter that keeps nothing", onGpu: true, build: (t) => t.filter(col("v").gt(1e9)) },
  { name: "filter on a string literal", onGpu: true, build: (t) => t.filter(col("city").ne("plain")) },
  {
    name: "string comparisons with literals and columns, bytewise; isNull",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("city").eq("東京").alias("a"),
        col("city").lt("naïve").alias("b"),
        col("city").ge("Zürich").alias("c"),
        col("city").le(col("city").str.upper()).alias("d"),
        col("city").gt(col("city").str.slice(1)).alias("e"),
        col("city").isNull().alias("g"),
        col("city").fillNull("∅").eq("∅").alias("h"),
      ),
  },
  {
    name: "len, contains, startsWith, endsWith over unicode, nulls and empty strings",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("city").str.len().alias("a"),
        col("city").str.contains("ï", { literal: true }).alias("b"),
        col("city").str.contains("ich$").alias("c"),
        col("city").str.contains("^Z").alias("d"),
        col("city").str.contains("").alias("e"),
        col("city").str.startsWith("Zü").alias("g"),
        col("city").str.endsWith("mega").alias("h"),
        col("city").str.slice(40).str.startsWith("").alias("i"),
        col("city").str.slice(40).str.len().alias("j"),
        col("city").str.contains("^a,b$").alias("l"),
      ),
  },
  {
    name: "string results: lower, upper, slice, literal replace, concatStr",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("city").str.lower().alias("a"),
        col("city").str.upper().alias("b"),
        col("city").str.slice(0, 3).alias("c"),
        col("city").str.slice(-2).alias("d"),
        col("city").str.slice(-10, 8).alias("e"),
        col("city").str.slice(40).alias("g"),
        col("city").str.replace("a", "ä", { literal: true, all: true }).alias("h"),
        col("city").str.replace("i", "", { literal: true }).alias("i"),
        col("city").str.replace("", "x", { literal: true }).alias("j"),
        concatStr(col("city"), " / ", col("city").str.upper().str.slice(1, 2)).alias("l"),
        concatStr(col("city").str.slice(40), lit("")).alias("m"),
        lit("é").alias("n"),
      ),
  },
  {
    name: "a filter on a string function's result, then string results downstream",
    onGpu: true,
    build: (t) =>
      t
        .filter(col("city").str.lower().str.contains("zü", { literal: true }).or(col("city").str.len().gt(6)))
        .select("rid", col("city").str.upper().alias("u"), "city"),
  },
  { name: "a regex filter (CPU fallback)", onGpu: false, build: (t) => t.filter(col("city").str.contains("a.*e")) },
  {
    name: "date parts before 1970, on leap days and of timestamps with times",
    onGpu: true,
    build: () => {
      const iso = [
        "1969-12-31T23:59:59.999Z",
        "1970-01-01T00:00:00Z",
        "1900-02-28T12:30:15Z",
        "1900-03-01T00:00:01Z",
        "2000-02-29T23:00:00Z",
        "1600-02-29T06:07:08Z",
        "0001-01-01T00:00:00Z",
        "1968-02-29T01:02:03.004Z",
        "2024-02-29T18:45:00Z",
        null,
      ];
      const ts = iso.map((s) => (s === null ? null : new Date(s)));
      return fromColumns(
        { i: iso.map((_, k) => k), ts, d: ts },
        { partitions: [4, 0, 6], types: { d: "date" } },
      ).select(
        "i",
        col("d").dt.year().alias("dy"),
        col("d").dt.month().alias("dm"),
        col("d").dt.day().alias("dd"),
        col("d").dt.weekday().alias("dw"),
        col("d").dt.hour().alias("dh"),
        col("ts").dt.year().alias("ty"),
        col("ts").dt.month().alias("tm"),
        col("ts").dt.day().alias("td"),
        col("ts").dt.weekday().alias("tw"),
        col("ts").dt.hour().alias("th"),
        col("ts").dt.minute().alias("tmi"),
        col("ts").dt.second().alias("ts2"),
        col("ts").dt.floor("1h").alias("f1"),
        col("d").dt.floor("7d").alias("f2"),
        col("ts").dt.offsetBy("-2h").alias("o1"),
        col("d").dt.offsetBy("1d").alias("o2"),
        col("ts").dt.diff(col("d"), "minute").alias("x1"),
        col("d").dt.diff("1970-01-01", "day").alias("x2"),
      );
    },
  },
  {
    name: "filter on date parts of the trips' days (leap day included)",
    onGpu: true,
    build: (t) =>
      t
        .filter(col("day").dt.month().eq(2).and(col("day").dt.day().ge(28)))
        .select("rid", "day", col("day").dt.weekday().alias("w")),
  },
  {
    name: "arithmetic with nulls, division by zero and mixed types",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("v").add(col("f")).alias("a"),
        col("v").sub(3).alias("b"),
        col("v").mul(col("k")).alias("c"),
        col("v").div(7).alias("d"),
        col("v").mod(7).alias("e"),
        col("f").neg().alias("g"),
        col("v").div(col("k")).alias("h"),
        col("v").mod(col("k")).alias("i"),
        col("f").mod(col("k")).alias("j"),
        col("v").neg().alias("l"),
      ),
  },
  {
    name: "null tests and fillNull",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("v").isNull().alias("a"),
        col("city").isNotNull().alias("b"),
        col("f").fillNull(0).alias("c"),
        col("v").fillNull(col("f")).alias("e"),
      ),
  },
  {
    name: "casts that cannot fail",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("v").cast("float64").alias("a"),
        col("flag").cast("int64").alias("d"),
        col("day").cast("timestamp").alias("g"),
        col("f").cast("bool").alias("h"),
      ),
  },
  {
    name: "float to int cast (CPU fallback)",
    onGpu: false,
    build: (t) => t.select("rid", col("f").cast("int64").alias("b")),
  },
  {
    name: "math functions (non-finite results are null)",
    onGpu: true,
    build: (t) =>
      t.select(
        "rid",
        col("v").abs().alias("a"),
        col("f").sqrt().alias("b"),
        col("f").log().alias("c"),
        col("f").div(100).exp().alias("d"),
        col("f").pow(2).alias("e"),
        col("f").abs().alias("g"),
      ),
  },
  {
    name: "string columns pass through a filter",
    onGpu: true,
    build: (t) => t.filter(col("v").ge(0)).select("city", "rid", "day", col("v").mul(2).alias("v2")),
  },
  {
    name: "groupBy an int key with every aggregation",
    onGpu: true,
    build: (t) =>
      t
        .groupBy("k")
        .agg(
          col("v").sum().alias("s"),
          col("f").mean().alias("m"),
          col("city").min().alias("mn"),
          col("day").max().alias("mx"),
          col("v").count().alias("c"),
          count().alias("n"),
          col("f").std().alias("sd"),
          col("v").var().alias("vr"),
          col("f").median().alias("md"),
          col("city").nUnique().alias("u"),
          col("v").first().alias("fv"),
          col("city").last().alias("lc"),
          col("f").min().alias("fmin"),
          col("flag").max().alias("bmax"),
          col("flag").min().alias("bmin"),
        ),
  },
  {
    name: "corr, median and quantiles per group: nulls, one-row and constant groups, int values",
    onGpu: true,
    build: (t) =>
      t
        .withColumns({ g: col("k").mod(9), one: lit(3), big: col("v").mul(1000) })
        .groupBy("g")
        .agg(
          corr("v", "f").alias("r"),
          corr("f", "one").alias("r_const"),
          corr("big", "v").alias("r_ints"),
          col("v").median().alias("md_int"),
          col("f").quantile(0.9).alias("q90"),
          col("f").quantile(0).alias("q0"),
          col("f").quantile(1).alias("q100"),
          count().alias("n"),
        ),
  },
  {
    name: "median and corr with -0, infinities and 2^53 (NaN filtered out)",
    onGpu: true,
    build: (_, s) =>
      s
        .filter(col("x").eq(col("x")))
        .groupBy("g")
        .agg(col("x").median().alias("md"), col("i").quantile(0.25).alias("q25"), corr("i", "g").alias("r")),
  },
  {
    name: "topK per group: largest and smallest, nulls never count, ties to the earlier row",
    onGpu: true,
    build: (t) =>
      concat([
        t.groupBy("k").topK(3, "v"),
        t.groupBy("city", "flag").topK(2, "f", { descending: false }),
        t.groupBy("k").topK(1, "day"),
        t.topK(5, "f"),
      ]),
  },
  {
    name: "topK per group of floats: -0 ties with 0, NaN ranks above every number",
    onGpu: true,
    build: (_, s) => concat([s.groupBy("g").topK(2, "x"), s.groupBy("g").topK(2, "x", { descending: false })]),
  },
  {
    name: "groupBy a unicode string key",
    onGpu: true,
    build: (t) =>
      t
        .groupBy("city")
        .agg(
          col("v").sum().alias("s"),
          col("f").mean().alias("m"),
          col("v").min().alias("mn"),
          col("f").max().alias("mx"),
          count().alias("n"),
        ),
  },
  {
    name: "few groups in one pass: a string key, int sums and counts",
    onGpu: true,
    build: (t) => t.groupBy("city").agg(col("v").sum().alias("s"), count().alias("n")),
  },
  {
    name: "few groups in one pass: min and max of dates and ints, a float mean, by a bool key with nulls",
    onGpu: true,
    build: (t) =>
      t.groupBy("flag").agg(col("day").min().alias("d"), col("v").max().alias("mx"), col("f").mean().alias("m")),
  },
  {
    name: "few groups in one pass: float sums, minima and maxima over -0, NaN and infinities",
    onGpu: true,
    build: (_, s) =>
      s.groupBy("g").agg(col("x").sum().alias("s"), col("x").min().alias("mn"), col("x").max().alias("mx")),
  },
  {
    name: "distinct keys (unique) of a string and a bool column",
    onGpu: true,
    build: (t) => t.select("city", "flag").unique().sort(["city", "flag"]),
  },
  {
    name: "a group per row: past the few-groups table, grouped the general way",
    onGpu: true,
    build: (t) => t.groupBy("rid").agg(col("v").sum().alias("s"), count().alias("n")),
  },
  {
    name: "the one-pass table's limit: 1,024 groups of two keys taken in one pass, 1,025 grouped the general way",
    onGpu: true,
    build: () => {
      const frame = (groups: number) => {
        const n = 5 * groups;
        const j = (i: number) => (i * 7) % groups; // every group, first seen out of key order
        return fromColumns(
          {
            a: Array.from({ length: n }, (_, i) => j(i) % 32),
            b: Array.from({ length: n }, (_, i) => `b${Math.floor(j(i) / 32)}`),
            v: Array.from({ length: n }, (_, i) => (i % 17 === 0 ? null : (i % 13) - 6)),
            f: Array.from({ length: n }, (_, i) => (i % 19 === 0 ? null : (i % 23) / 4 - 2)),
          },
          { partitions: [n], types: { a: "int64", v: "int64", f: "float64" } },
        )
          .groupBy("a", "b")
          .agg(col("v").sum().alias("s"), col("f").max().alias("m"), count().alias("n"));
      };
      return concat([frame(1024), frame(1025)]);
    },
  },
  {
    name: "timestamps: min and max in one pass, by a timestamp key, and first, last, nUnique, min, max per group",
    onGpu: true,
    build: (t) => {
      const ts = t.withColumns({ ts: col("day").cast("timestamp") });
      return concat([
        ts
          .groupBy("flag")
          .agg(col("ts").min().alias("a"), col("ts").max().alias("b"), count().alias("n"))
          .select(col("flag").cast("int64").alias("g"), "a", "b", "n"),
        ts
          .groupBy("ts")
          .agg(col("ts").min().alias("a"), col("ts").max().alias("b"), count().alias("n"))
          .select(col("ts").cast("int64").alias("g"), "a", "b", "n"),
      ]);
    },
  },
  {
    name: "timestamps per group the general way: first, last, nUnique, min and max",
    onGpu: true,
    build: (t) =>
      t
        .withColumns({ ts: col("day").cast("timestamp") })
        .groupBy("k")
        .agg(
          col("ts").first().alias("tf"),
          col("ts").last().alias("tl"),
          col("ts").nUnique().alias("tu"),
          col("ts").min().alias("tmin"),
          col("ts").max().alias("tmax"),
        ),
  },
  {
    name: "50,000 groups in one partition: past both small hash tables, grouped in a table for every row",
    onGpu: true,
    build: () => {
      const n = 120_000;
      return fromColumns(
        {
          key: Array.from({ length: n }, (_, i) => `k${(i * 7) % 50_000}`),
          v: Array.from({ length: n }, (_, i) => i % 13),
        },
        { partitions: [n], types: { v: "int64" } },
      )
        .groupBy("key")
        .agg(col("v").sum().alias("s"), col("v").max().alias("m"), count().alias("n"));
    },
  },
  {
    name: "groupBy two keys with nulls",
    onGpu: true,
    build: (t) =>
      t.groupBy("k", "flag").agg(col("v").sum().alias("s"), col("f").var().alias("vr"), col("day").min().alias("d")),
  },
  {
    name: "groupBy a date key",
    onGpu: true,
    build: (t) => t.groupBy("day").agg(col("f").sum().alias("s"), count().alias("n")),
  },
  {
    name: "aggregation without keys",
    onGpu: true,
    build: (t) =>
      t.agg(
        col("v").sum().alias("s"),
        col("f").mean().alias("m"),
        col("f").std().alias("sd"),
        col("v").min().alias("mn"),
        col("day").max().alias("mx"),
        count().alias("n"),
      ),
  },
  {
    name: "filter, computed columns and groupBy in one chain",
    onGpu: true,
    build: (t) =>
      t
        .filter(col("f").isNotNull().and(col("v").ne(0)))
        .withColumns({ r: col("f").div(col("v")), big: col("v").gt(100) })
        .groupBy("big", "city")
        .agg(col("r").mean().alias("rm"), col("r").sum().alias("rs"), count().alias("n")),
  },
  {
    name: "groupBy over an empty filter result",
    onGpu: true,
    build: (t) => t.filter(col("v").gt(1e9)).groupBy("k").agg(col("v").sum().alias("s")),
  },
  {
    name: "float keys: -0 equals 0, NaNs are one group, nulls one group",
    onGpu: true,
    build: (_, s) => s.groupBy("x").agg(count().alias("n"), col("i").sum().alias("s"), col("i").max().alias("m")),
  },
  {
    name: "float comparisons and min/max with NaN and infinities",
    onGpu: true,
    build: (_, s) =>
      s
        .select(col("x").gt(0).alias("p"), col("x").eq(col("x")).alias("e"), col("x").mul(2).alias("d"))
        .filter(lit(true)),
  },
  {
    name: "min/max with NaN per group",
    onGpu: true,
    build: (_, s) =>
      s.groupBy("g").agg(col("x").min().alias("mn"), col("x").max().alias("mx"), col("x").mean().alias("m")),
  },
  {
    name: "first and last of every type: nulls at group starts and ends, an only-null group, partial states merged",
    onGpu: true,
    build: () =>
      picksFrame()
        .groupBy("g")
        .agg(
          ...(["s", "v", "f", "b", "d"] as const).flatMap((c) => [
            col(c).first().alias(`${c}_first`),
            col(c).last().alias(`${c}_last`),
          ]),
          count().alias("n"),
        ),
  },
  {
    name: "first, last and string min/max after a filter (read through its selection)",
    onGpu: true,
    build: (t) =>
      t
        .filter(col("v").gt(-600))
        .groupBy("flag")
        .agg(
          col("city").first().alias("cf"),
          col("city").last().alias("cl"),
          col("city").min().alias("cmin"),
          col("city").max().alias("cmax"),
          col("day").first().alias("df"),
          col("f").last().alias("fl"),
        ),
  },
  {
    name: "string min and max: bytewise over unicode, empty strings, shared 8-byte prefixes, an only-null group",
    onGpu: true,
    build: () =>
      picksFrame()
        .groupBy("g")
        .agg(col("s").min().alias("mn"), col("s").max().alias("mx"), col("s").count().alias("c")),
  },
  {
    name: "nUnique of strings, ints, bools and dates per group: nulls never count",
    onGpu: true,
    build: (t) =>
      t
        .groupBy("k")
        .agg(
          col("city").nUnique().alias("uc"),
          col("v").nUnique().alias("uv"),
          col("flag").nUnique().alias("ub"),
          col("day").nUnique().alias("ud"),
          col("f").nUnique().alias("uf"),
        ),
  },
  {
    name: "nUnique over an only-null group, long shared prefixes and a filter",
    onGpu: true,
    build: () =>
      picksFrame()
        .filter(col("v").ne(0).or(col("v").isNull()))
        .groupBy("g")
        .agg(
          col("s").nUnique().alias("us"),
          col("v").nUnique().alias("uv"),
          col("f").nUnique().alias("uf"),
          col("b").nUnique().alias("ub"),
        ),
  },
  {
    name: "nUnique of floats: -0 and 0 are one value, NaNs one value, ±∞",
    onGpu: true,
    build: (_, s) => s.groupBy("g").agg(col("x").nUnique().alias("ux"), col("i").nUnique().alias("ui")),
  },
  {
    name: "nUnique, first, last and string min/max without keys",
    onGpu: true,
    build: (t) =>
      t.agg(
        col("city").nUnique().alias("uc"),
        col("f").nUnique().alias("uf"),
        col("city").first().alias("cf"),
        col("v").last().alias("vl"),
        col("city").min().alias("cmin"),
        col("city").max().alias("cmax"),
      ),
  },
  {
    name: "pick aggregates of no rows: no groups, and the one group of no keys",
    onGpu: true,
    build: (t) => {
      const none = t.filter(col("v").gt(1e9));
      const aggs = () => [
        col("city").first().alias("cf"),
        col("day").last().alias("dl"),
        col("city").max().alias("cmax"),
        col("v").nUnique().alias("uv"),
        col("city").nUnique().alias("uc"),
      ];
      return concat([
        none
          .groupBy("k")
          .agg(...aggs())
          .drop("k"),
        none.agg(...aggs()),
      ]);
    },
  },
  {
    name: "inner join on an int key: duplicates on both sides, nulls never match",
    onGpu: true,
    build: (t) => t.join(dims(), { on: "k", how: "inner" }),
  },
  {
    name: "left join keeps unmatched and null-key rows",
    onGpu: true,
    build: (t) => t.join(dims(), { on: "k", how: "left" }),
  },
  {
    name: "semi and anti joins",
    onGpu: true,
    build: (t) => concat([t.join(dims(), { on: "k", how: "semi" }), t.join(dims(), { on: "k", how: "anti" })]),
  },
  {
    name: "inner join on a date key",
    onGpu: true,
    build: (t) =>
      t.join(t.select(col("day"), col("rid").alias("rid2")).filter(col("rid2").lt(50)), { on: "day", how: "inner" }),
  },
  {
    name: "join with an empty right side",
    onGpu: true,
    build: (t) => t.join(dims().filter(col("k").gt(1e9)), { on: "k", how: "left" }),
  },
  {
    name: "inner and left joins on a string key: unicode, nulls, duplicates on both sides",
    onGpu: true,
    build: (t) => {
      const right = t.select("city", col("rid").alias("r2")).filter(col("r2").lt(40));
      return concat([t.join(right, { on: "city", how: "inner" }), t.join(right, { on: "city", how: "left" })]);
    },
  },
  {
    name: "left join on two keys (int and string)",
    onGpu: true,
    build: (t) =>
      t.join(t.select("k", "city", col("rid").alias("r2")).filter(col("r2").lt(300)), {
        on: ["k", "city"],
        how: "left",
      }),
  },
  {
    name: "float key joins: -0 matches 0, NaN matches NaN, ±∞ (inner and outer)",
    onGpu: true,
    build: (_, s) => {
      const right = s.select("x", col("g").alias("g2")).filter(col("g2").ne(3));
      return concat([
        s.select("x", "i").join(right, { on: "x", how: "inner" }),
        s.select("x", "i").join(right, { on: "x", how: "outer" }),
      ]);
    },
  },
  {
    name: "semi and anti joins on a string key",
    onGpu: true,
    build: (t) => {
      const some = fromColumns(
        { city: ["東京", "🙂 smile", null, "plain", "東京", "nowhere"] },
        { partitions: [4, 2] },
      );
      return concat([t.join(some, { on: "city", how: "semi" }), t.join(some, { on: "city", how: "anti" })]);
    },
  },
  { name: "sort by an int key, nulls last, stable", onGpu: true, build: (t) => t.sort("k") },
  {
    name: "sort descending with nulls first",
    onGpu: true,
    build: (t) => t.sort("f", { descending: true, nullsFirst: true }),
  },
  {
    name: "sort by a date and by a bool key",
    onGpu: true,
    build: (t) => concat([t.sort("day", { descending: true }), t.sort("flag")]),
  },
  {
    name: "sort floats: -0 equals 0, NaN after every number",
    onGpu: true,
    build: (_, s) => concat([s.sort("x"), s.sort("x", { descending: true })]),
  },
  {
    name: "sort by a unicode string key: ascending nulls last, descending nulls first",
    onGpu: true,
    build: (t) => concat([t.sort("city"), t.sort("city", { descending: true, nullsFirst: true })]),
  },
  {
    name: "sort by an int and a string key in mixed directions",
    onGpu: true,
    build: (t) =>
      concat([
        t.sort(["k", "city"], { descending: [false, true], nullsFirst: [true, false] }),
        t.sort(["city", "v"], { descending: [true, false], nullsFirst: [false, true] }),
      ]),
  },
  {
    name: "sort by three keys with ties everywhere keeps input order (stable)",
    onGpu: true,
    build: (t) =>
      concat([
        t.sort(["flag", "k", "city"], { descending: [true, false, false], nullsFirst: [false, true, true] }),
        t.sort(["day", "flag", "k"], { descending: [false, true, true] }),
      ]),
  },
  {
    name: "sort floats as a second key: -0 equals 0, NaN after every number, nulls per key",
    onGpu: true,
    build: (_, s) =>
      concat([
        s.sort(["g", "x"]),
        s.sort(["g", "x"], { descending: [false, true], nullsFirst: [false, true] }),
        s.sort(["x", "i"], { descending: [true, false], nullsFirst: [true, false] }),
      ]),
  },
  {
    name: "sort strings that extend others, share 8 bytes or hold zero bytes",
    onGpu: true,
    build: () => {
      const s = [
        "abcdefgh",
        "",
        "a",
        "a\0",
        "abcdefghi",
        null,
        "a\0b",
        "abcdefgh\0",
        "abcdefghij",
        "abcdefghia",
        "ÿ",
        "é",
      ];
      const f = fromColumns(
        { s: [...s, ...s], n: [...s, ...s].map((_, i) => i % 3) },
        { partitions: [7, 0, 1, 16], types: { n: "int64" } },
      );
      return concat([
        f.sort("s"),
        f.sort(["s", "n"], { descending: [true, false], nullsFirst: [true, false] }),
        f.sort(["n", "s"], { descending: [true, true] }),
      ]);
    },
  },
  {
    name: "sort an empty frame and one-row partitions",
    onGpu: true,
    build: () => {
      const f = fromColumns(
        { s: ["b", null, "a", "b"], n: [2, 1, null, 1] },
        { partitions: [1, 0, 1, 1, 1], types: { n: "int64" } },
      );
      return concat([f.filter(col("n").gt(100)).sort(["s", "n"]), f.sort(["s", "n"], { nullsFirst: [true, false] })]);
    },
  },
  {
    name: "right join: matches, then right rows that matched nothing (null keys included)",
    onGpu: true,
    build: (t) => t.select("rid", "k").join(dims(), { on: "k", how: "right" }),
  },
  {
    name: "outer join",
    onGpu: true,
    build: (t) => t.select("rid", "k").join(dims(), { on: "k", how: "outer" }),
  },
  {
    name: "outer and right joins on a string key",
    onGpu: true,
    build: (t) => {
      const right = t.select("city", col("rid").alias("r2")).filter(col("r2").lt(40));
      const left = t.select("city", "rid").filter(col("rid").ge(2000));
      return concat([left.join(right, { on: "city", how: "outer" }), left.join(right, { on: "city", how: "right" })]);
    },
  },
  {
    name: "empty left side: inner, right and outer joins",
    onGpu: true,
    build: (t) => {
      const none = t.filter(col("v").gt(1e9)).select("rid", "k");
      return concat([
        none.join(dims(), { on: "k", how: "outer" }),
        none.join(dims(), { on: "k", how: "right" }),
        none.join(dims(), { on: "k", how: "inner" }),
      ]);
    },
  },
  {
    name: "empty right side: right and outer joins",
    onGpu: true,
    build: (t) => {
      const none = dims().filter(col("k").gt(1e9));
      return concat([
        t.select("rid", "k").join(none, { on: "k", how: "outer" }),
        t.select("rid", "k").join(none, { on: "k", how: "right" }),
      ]);
    },
  },
  {
    name: "groupBy more groups than the first small hash table takes (retried at full size): int, string and null keys",
    onGpu: true,
    build: () => {
      const m = manyGroups();
      return concat([
        m.groupBy("u").agg(count().alias("n"), col("v").sum().alias("s")).select(col("u").alias("g"), "n", "s"),
        m.groupBy("few").agg(count().alias("n"), col("v").sum().alias("s")).select(col("few").alias("g"), "n", "s"),
      ]);
    },
  },
  {
    name: "groupBy a string and an int key over 40,000 groups, and topK per one of 70,000 groups",
    onGpu: true,
    build: () => {
      const m = manyGroups();
      return concat([
        m.groupBy("s", "few").agg(count().alias("n"), col("v").min().alias("x")).select("n", "x"),
        m.groupBy("u").topK(1, "v").select(col("u").alias("n"), col("v").alias("x")),
      ]);
    },
  },
  {
    name: "right and outer joins whose right keys are all null, and an outer join on int, date and bool keys",
    onGpu: true,
    build: (t) => {
      const nulls = fromColumns(
        { k: [null, null, null], w: [1, 2, 3] },
        { partitions: [3], types: { k: "int64", w: "int64" } },
      );
      const right = t.select("k", "day", "flag", col("rid").alias("r2")).filter(col("r2").lt(500));
      return concat([
        t.select("rid", "k").join(nulls, { on: "k", how: "right" }),
        t.select("rid", "k").join(nulls, { on: "k", how: "outer" }),
        t
          .select("rid", "k", "day", "flag")
          .join(right, { on: ["k", "day", "flag"], how: "outer" })
          .select("rid", "k", col("r2").alias("w")),
      ]);
    },
  },
];

/**
 * One partition of 100,000 rows: `u` has 70,000 distinct keys (first rows scattered),
 * more than the group-by's first hash table (32,768 groups) takes, so it is retried at
 * full size; `few` has 5,000 (the first table suffices); `s` is a string key with nulls.
 */
function manyGroups(): DataFrame {
  const rows = 100_000;
  const u = Array.from({ length: rows }, (_, i) => (i * 7919) % 70_000);
  return fromColumns(
    {
      u,
      few: u.map((x) => x % 5000),
      s: u.map((x) => (x % 11 === 0 ? null : `k${x % 40_000}`)),
      v: u.map((x, i) => (i % 13 === 0 ? null : x - 35_000)),
    },
    { partitions: [rows], types: { u: "int64", few: "int64", v: "int64" } },
  );
}

/** A dimension table for joins: keys 0..24 (so some trips keys match nothing), 1 and 7 twice, a null key. */
/**
 * Groups 0..4 whose first and last rows are often null (group 4 has no values), strings
 * that are empty, bytewise-ordered unicode, or share their first 8 bytes, over four
 * partitions (one empty), so partial states are merged.
 */
function picksFrame(): DataFrame {
  const g = [1, 0, 1, 2, 0, 4, 2, 1, 3, 0, 2, 3, 1, 4, 0, 3, 2, 0, 3];
  const s = [
    null,
    "b",
    "",
    "abcdefghij",
    "a",
    null,
    "abcdefghi",
    "é",
    "z",
    "ab",
    "abcdefgh",
    "東京",
    null,
    null,
    "abcdefghiz",
    "Z",
    "abcdefghij",
    null,
    "🙂",
  ];
  const v = [null, 3, null, 7, null, null, -1, 2, 0, 0, null, 5, null, null, 4, 8, 7, null, 0];
  const f = [null, -0, NaN, 0, 1.5, null, NaN, 0, -0, Infinity, null, 1.5, null, null, 0, -Infinity, NaN, null, 2];
  const b = [
    null,
    true,
    false,
    null,
    false,
    null,
    true,
    true,
    null,
    true,
    false,
    false,
    null,
    null,
    true,
    true,
    null,
    null,
    false,
  ];
  const d = v.map((x) => (x === null ? null : new Date(Date.UTC(2024, 0, 1 + x))));
  return fromColumns(
    { g, s, v, f, b, d },
    { partitions: [6, 0, 5, 8], types: { g: "int64", s: "string", v: "int64", f: "float64", b: "bool", d: "date" } },
  );
}

function dims(): DataFrame {
  const k = [...Array.from({ length: 25 }, (_, i) => i), 1, 7, null];
  return fromColumns(
    { k, label: k.map((x) => (x === null ? "∅" : `d${x}`)) },
    { partitions: [10, 0, 18], types: { k: "int64" } },
  );
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a) && Number.isNaN(b)) return true;
    if (a === b) return true;
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  }
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a === b;
}

/**
 * Why two results differ (schema, row count, or the first differing cell), or null.
 *
 * @example
 * diffTables(await df.compute({ cluster: gpu }), await df.compute({ cluster: cpu })) // null
 */
export function diffTables(gpu: Table, cpu: Table): string | null {
  if (JSON.stringify(gpu.schema) !== JSON.stringify(cpu.schema))
    return `schema ${JSON.stringify(gpu.schema)} vs ${JSON.stringify(cpu.schema)}`;
  if (gpu.numRows !== cpu.numRows) return `${gpu.numRows} rows vs ${cpu.numRows}`;
  for (const name of cpu.columnNames) {
    const g = gpu.column(name),
      c = cpu.column(name);
    for (let r = 0; r < c.length; r++)
      if (!same(g[r], c[r])) return `column ${name}, row ${r}: GPU ${String(g[r])} vs CPU ${String(c[r])}`;
  }
  return null;
}

export interface CaseOutcome {
  name: string;
  /** null when the GPU and CPU answers agree. */
  diff: string | null;
  /** GPU chains the case ran. */
  chains: number;
  onGpu: boolean;
}

/** GPU chains run so far on device 0. */
export function gpuChains(): number {
  return (
    native()
      .gpuStats()
      .find((s) => s.device === 0)?.chains ?? 0
  );
}

/**
 * Runs one case on both clusters.
 *
 * @example
 * const out = await runCase(GPU_CASES[0], gpu, cpu, tripsFrame(3000, 7), specialFrame());
 */
export async function runCase(
  c: GpuCase,
  gpu: LocalCluster,
  cpu: LocalCluster,
  trips: DataFrame,
  special: DataFrame,
): Promise<CaseOutcome> {
  const frame = c.build(trips, special);
  const before = gpuChains();
  const onGpu = await frame.compute({ cluster: gpu });
  const chains = gpuChains() - before;
  const onCpu = await frame.compute({ cluster: cpu });
  return { name: c.name, diff: diffTables(onGpu, onCpu), chains, onGpu: c.onGpu };
}

/** A check beyond the differential cases: what it proves, whether it held, and what was seen. */
export interface CheckOutcome {
  name: string;
  ok: boolean;
  detail: string;
}

async function thrown(f: () => unknown): Promise<{ code?: string; message: string } | null> {
  try {
    await f();
    return null;
  } catch (e) {
    return { code: (e as { code?: string }).code, message: (e as Error).message };
  }
}

/** Whether a fresh GPU cluster sums [1, 2, 3, null] to 6 (null when it does; else what it got). */
async function gpuStillAnswers(): Promise<string | null> {
  const probe = new LocalCluster({ workers: 0, gpus: [0] });
  try {
    const t = await fromColumns({ a: [1, 2, 3, null] })
      .agg(col("a").sum().alias("s"))
      .compute({ cluster: probe });
    return t.column("s")[0] === 6 ? null : `sum was ${String(t.column("s")[0])}`;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await probe.close();
  }
}

/** persist() where the GPUs alone compute, on an unusable GPU: kept on the host, answered on the CPU (null), or why not. */
async function persistStillWorks(): Promise<string | null> {
  const home = new LocalCluster({ gpus: [0], cpuTasks: "reads" });
  try {
    const kept = await fromColumns({ a: [1, 2, 3, null] }).persist({ cluster: home });
    try {
      const t = await kept.agg(col("a").sum().alias("s")).compute({ cluster: home });
      return t.column("s")[0] === 6 ? null : `sum was ${String(t.column("s")[0])}`;
    } finally {
      kept.unpersist();
    }
  } catch (e) {
    return (e as Error).message;
  } finally {
    await home.close();
  }
}

/**
 * Recoverable CUDA failures surface as BASIN_CUDA naming the GPU and the operation,
 * and the GPU works afterwards; through a cluster, a GPU worker whose task failed that
 * way is replaced and the engine keeps running.
 */
export async function runFaultChecks(cpu: LocalCluster): Promise<CheckOutcome[]> {
  const out: CheckOutcome[] = [];
  const addon = native();
  for (const [kind, expect] of [
    ["bad-launch", /GPU 0 \(.+\): a test launch failed: cudaError\w+/],
    ["oom", /GPU 0 \(.+\): out of device memory allocating .* for a test allocation: more than the whole .* limit/],
  ] as const) {
    const e = await thrown(() => addon.gpuFault(0, kind));
    const after = await gpuStillAnswers();
    const ok = e?.code === "BASIN_CUDA" && expect.test(e.message) && after === null;
    out.push({
      name: `${kind}: BASIN_CUDA names the GPU and operation; the GPU works after`,
      ok,
      detail: `${e?.code}: ${e?.message}; after: ${after ?? "ok"}`,
    });
  }
  // A partition bigger than the device limit: the run fails naming the GPU; the worker is replaced.
  const tiny = new LocalCluster({ workers: 0, gpus: [0], deviceMemoryLimit: 1 << 20 });
  try {
    const n = 400_000;
    const big = fromColumns(
      { a: Array.from({ length: n }, (_, i) => i % 1000), b: Array.from({ length: n }, (_, i) => i * 0.5) },
      { partitions: [n] },
    );
    const e = await thrown(() => big.groupBy("a").agg(col("b").sum().alias("s")).compute({ cluster: tiny }));
    await new Promise((r) => setTimeout(r, 500)); // the failed worker exits; the pool starts another
    const workers = tiny.pool.names;
    const still = await fromColumns({ a: [1, 2] })
      .agg(col("a").sum().alias("s"))
      .compute({ cluster: cpu });
    const ok =
      e?.code === "BASIN_CUDA" &&
      /GPU 0 \(.+\): out of device memory/.test(e.message) &&
      workers.includes("gpu-0") &&
      still.column("s")[0] === 3;
    out.push({
      name: "out of device memory in a run: BASIN_CUDA, GPU worker replaced, engine keeps running",
      ok,
      detail: `${e?.code}: ${e?.message}; workers ${workers.join(",")}`,
    });
  } finally {
    await tiny.close();
  }
  return out;
}

/**
 * A sticky CUDA error (a kernel faulting): BASIN_CUDA saying the GPU is unusable in this
 * process (CUDA's rule), and the engine keeps answering on the GPU cluster, with the CPU
 * kernels. Run it last: the GPU stays unusable in this process afterwards.
 */
export async function runStickyFaultCheck(): Promise<CheckOutcome> {
  const e = await thrown(() => native().gpuFault(0, "illegal-address"));
  const after = await gpuStillAnswers();
  const kept = await persistStillWorks();
  const stats = native().gpuStats()[0];
  const ok =
    e?.code === "BASIN_CUDA" &&
    /GPU 0 \(.+\): a test kernel failed: cudaError\w+.*runs on the CPU from now on/.test(e.message) &&
    after === null &&
    kept === null &&
    stats.broken !== null;
  return {
    name: "a sticky CUDA error: BASIN_CUDA, the GPU is marked unusable, its work (and persist()) runs on the CPU",
    ok,
    detail: `${e?.code}: ${e?.message}; after: ${after ?? "ok (on the CPU)"}; persist: ${kept ?? "ok"}; failures ${stats.failures}`,
  };
}

/**
 * The GPU's worker as a process (`workerProcesses: "gpu"`): it answers as the CPU does
 * with its work on the GPU; a sticky CUDA fault injected into it fails that run with
 * BASIN_CUDA and ends only that process; its replacement runs the next run on the GPU
 * again (not on the CPU).
 */
export async function runProcessFaultCheck(cpu: LocalCluster): Promise<CheckOutcome> {
  const gpu = new LocalCluster({ workers: 0, gpus: [0], workerProcesses: "gpu" });
  const frame = tripsFrame(3000, 11)
    .groupBy("city")
    .agg(col("v").sum().alias("s"), col("f").mean().alias("m"))
    .sort("city");
  try {
    const expected = await frame.compute({ cluster: cpu });
    const first = diffTables(await frame.compute({ cluster: gpu }), expected);
    const chains = async () => (await gpu.pool.processStats(10_000))["gpu-0"]?.gpus[0]?.chains ?? 0;
    const chains1 = await chains();
    const before = gpu.pool.incarnation("gpu-0");
    gpu.pool.injectFault("gpu-0", "illegal-address");
    const e = await thrown(() => frame.compute({ cluster: gpu }));
    for (let i = 0; i < 50 && gpu.pool.incarnation("gpu-0") === before; i++)
      await new Promise((r) => setTimeout(r, 100));
    const replaced = gpu.pool.incarnation("gpu-0") !== before && gpu.pool.incarnation("gpu-0") !== undefined;
    const again = diffTables(await frame.compute({ cluster: gpu }), expected);
    const chains2 = await chains();
    const ok =
      first === null &&
      chains1 > 0 &&
      e?.code === "BASIN_CUDA" &&
      /GPU 0/.test(e.message) &&
      replaced &&
      again === null &&
      chains2 > 0;
    return {
      name: "a sticky fault in the GPU's worker process: BASIN_CUDA, that process replaced, the next run on the GPU again",
      ok,
      detail: `first ${first ?? "ok"} (${chains1} chains); fault ${e?.code}: ${e?.message}; replaced ${replaced}; next ${again ?? "ok"} (${chains2} chains in the new process)`,
    };
  } finally {
    await gpu.close();
  }
}

/**
 * Data twice the device memory limit: a group-by over all of it completes by spilling
 * cached columns to host (dropping device copies, least recently used first), with the
 * CPU's answer.
 */
export async function runSpillCheck(cpu: LocalCluster): Promise<CheckOutcome> {
  const limit = 16 << 20;
  const n = 2_000_000; // two 8-byte columns: 32 MB, twice the limit
  const data = fromColumns(
    {
      k: Array.from({ length: n }, (_, i) => (i * 7919) % 5000),
      v: Array.from({ length: n }, (_, i) => (i % 977) * 0.25),
    },
    { partitions: [n] },
  );
  const gpu = new LocalCluster({ workers: 0, gpus: [0], deviceMemoryLimit: limit });
  const stored = await data.persist({ cluster: cpu, partitions: 16 });
  try {
    const q = stored.groupBy("k").agg(col("v").sum().alias("s"), count().alias("n"), col("v").max().alias("m"));
    const before = native().gpuStats()[0];
    const onGpu = await q.compute({ cluster: gpu });
    const again = await q.compute({ cluster: gpu });
    const after = native().gpuStats()[0];
    const onCpu = await q.compute({ cluster: cpu });
    const diff = diffTables(onGpu, onCpu) ?? diffTables(again, onCpu);
    const evicted = after.evictions - before.evictions;
    return {
      name: "data twice the device memory limit completes through spilling, with the CPU's answer",
      ok: diff === null && evicted > 0 && after.used <= limit,
      detail: `${diff ?? "same answer"}; ${evicted} columns (${((after.evictedBytes - before.evictedBytes) / 1e6).toFixed(1)} MB) spilled to host; limit ${limit / 1e6} MB; ${after.chains - before.chains} chains`,
    };
  } finally {
    stored.unpersist();
    await gpu.close();
  }
}

/**
 * The device tier: outputs of GPU work stay on the GPU between tasks (computed columns,
 * selections, sorts) and come to the host only when read there or spilled. A pipeline
 * that mixes them with CPU steps (a sort's sampling and partitioning, a concat) gives
 * the CPU's answers, with outputs kept on the device and, under a device limit smaller
 * than those outputs, kept outputs spilled to the host; with deviceKeepResults false
 * nothing is kept; and after each run no table is left only on the device.
 */
export async function runDeviceTierCheck(cpu: LocalCluster): Promise<CheckOutcome> {
  const n = 1_200_000;
  const data = fromColumns(
    {
      k: Array.from({ length: n }, (_, i) => (i * 7919) % 30_011),
      v: Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : (i % 977) - 300)),
    },
    { partitions: [n / 6, n / 6, n / 6, n / 6, n / 6, n / 6], types: { k: "int64", v: "int64" } },
  );
  const stored = await data.persist({ cluster: cpu });
  // Computed columns: every output column is on the device, so each output stays there.
  const made = (f: DataFrame) => f.select(col("k").add(1).alias("k2"), col("v").mul(2).alias("v2"));
  const queries = [
    (f: DataFrame) => made(f),
    (f: DataFrame) => made(f).filter(col("v2").gt(10)).sort(["k2", "v2"]),
    (f: DataFrame) => made(f).filter(col("v2").ne(0)).groupBy("k2").agg(col("v2").sum().alias("s"), count().alias("c")),
  ];
  const limit = 12 << 20; // the six outputs of the first query (19 MB) do not fit
  const details: string[] = [];
  let ok = true;
  try {
    for (const keep of [true, false]) {
      const gpu = new LocalCluster({ workers: 0, gpus: [0], deviceMemoryLimit: limit, deviceKeepResults: keep });
      try {
        for (const [i, q] of queries.entries()) {
          const want = await q(stored).compute({ cluster: cpu });
          const s0 = native().gpuStats()[0]!;
          const got = await q(stored).compute({ cluster: gpu });
          const s1 = native().gpuStats()[0]!;
          const diff = diffTables(got, want);
          const kept = s1.resultTables - s0.resultTables;
          const spilled = s1.resultSpills - s0.resultSpills;
          const left = native().memoryStats().deviceBytes;
          // q1's six outputs stay on the GPU and spill; q2's per-partition sorts stay
          // there until the range split reads them; q3 aggregates in the chain that
          // computes, so its outputs are aggregates, made on the host.
          const held = !keep ? kept === 0 : i === 2 || (kept > 0 && (i > 0 || spilled > 0));
          ok = ok && diff === null && held && left === 0;
          details.push(
            `keep=${keep} q${i + 1}: ${diff ?? "same answer"}, ${kept} outputs kept on the GPU, ${spilled} spilled to host, ${left} bytes left there`,
          );
        }
      } finally {
        await gpu.close();
      }
    }
  } finally {
    stored.unpersist();
  }
  return {
    name: "outputs stay on the GPU between tasks, spill to host under its limit, and give the CPU's answers",
    ok,
    detail: details.join("; "),
  };
}

/** The device-home checks' table (400,000 rows in 4 partitions), their group-by, and its answer on the CPU. */
async function homeCheckData(
  cpu: LocalCluster,
): Promise<{ data: DataFrame; q: (f: DataFrame) => DataFrame; want: Table }> {
  const n = 400_000;
  const data = fromColumns(
    {
      k: Array.from({ length: n }, (_, i) => `key${(i * 7919) % 300}`),
      v: Array.from({ length: n }, (_, i) => i % 977),
    },
    { partitions: [n / 4, n / 4, n / 4, n / 4], types: { v: "int64" } },
  );
  const q = (f: DataFrame) => f.groupBy("k").agg(col("v").sum().alias("s"), count().alias("n"));
  return { data, q, want: await q(data).compute({ cluster: cpu }) };
}

/**
 * Where the GPUs alone compute (cpuTasks "reads"), persist() makes the GPU home to the
 * partitions: their columns are uploaded by persist(), none by the first query over them,
 * and a frame four times a small device limit is persisted in partitions that fit
 * (partitionBytes: a quarter of the limit) and answers as the CPU does.
 */
export async function runDeviceHomeCheck(cpu: LocalCluster): Promise<CheckOutcome> {
  const { data, q, want } = await homeCheckData(cpu);
  const home = new LocalCluster({ gpus: [0], cpuTasks: "reads" });
  try {
    const s0 = native().gpuStats()[0]!;
    const kept = await data.persist({ cluster: home });
    const s1 = native().gpuStats()[0]!;
    const got = await q(kept).compute({ cluster: home });
    const s2 = native().gpuStats()[0]!;
    const parts = (kept.node as { handles: number[] }).handles.length;
    kept.unpersist();
    // About 5 MB of table: a 6 MB limit gives partitions of at most 1.5 MB.
    const limit = 6_000_000;
    const small = new LocalCluster({ gpus: [0], cpuTasks: "reads", deviceMemoryLimit: limit });
    let diff2: string | null, smallParts: number;
    try {
      const split = await data.persist({ cluster: small });
      smallParts = (split.node as { handles: number[] }).handles.length;
      diff2 = diffTables(await q(split).compute({ cluster: small }), want);
      split.unpersist();
    } finally {
      await small.close();
    }
    const diff = diffTables(got, want) ?? diff2;
    const upPersist = s1.uploadBytes - s0.uploadBytes,
      upQuery = s2.uploadBytes - s1.uploadBytes;
    return {
      name: "persist() makes the GPU home to its partitions, in partitions that fit the device limit",
      ok: diff === null && parts === 1 && upPersist > 0 && upQuery === 0 && s2.chains > s1.chains && smallParts >= 4,
      detail: `${diff ?? "same answers"}; ${parts} partition(s), ${(upPersist / 1e6).toFixed(1)} MB uploaded by persist(), ${upQuery} bytes by the query; under a ${limit / 1e6} MB limit ${smallParts} partitions`,
    };
  } finally {
    await home.close();
  }
}

/**
 * The same with the GPU's worker as a process: the persisted partition, made in that
 * process, stays there and goes up to its GPU in persist(); the query uploads nothing.
 * Run with no cluster of this process holding the GPU (the process reserves its pool).
 */
export async function runProcessDeviceHomeCheck(cpu: LocalCluster): Promise<CheckOutcome> {
  const { data, q, want } = await homeCheckData(cpu);
  const proc = new LocalCluster({ gpus: [0], cpuTasks: "reads", workerProcesses: "gpu" });
  try {
    const gpuOf = async () => (await proc.memoryTotals()).gpus.find((g) => g.device === 0);
    const first = diffTables(await q(data).compute({ cluster: proc }), want); // starts the process
    const p0 = await gpuOf();
    const kept = await data.persist({ cluster: proc });
    const p1 = await gpuOf();
    const again = diffTables(await q(kept).compute({ cluster: proc }), want);
    const p2 = await gpuOf();
    kept.unpersist();
    const up = (p1?.uploadBytes ?? 0) - (p0?.uploadBytes ?? 0),
      query = (p2?.uploadBytes ?? 0) - (p1?.uploadBytes ?? 0);
    const diff = first ?? again;
    return {
      name: "persist() makes a GPU worker process home to its partitions",
      ok: diff === null && p2 !== undefined && up > 0 && query === 0 && p2.chains > p1!.chains,
      detail: `${diff ?? "same answers"}; ${(up / 1e6).toFixed(1)} MB uploaded in the process by persist(), ${query} bytes by the query`,
    };
  } finally {
    await proc.close();
  }
}

/** Why two results' columns differ byte for byte (values, validity, string bytes), or null: for answers too large to decode. */
function diffBytes(gpu: Table, cpu: Table): string | null {
  if (JSON.stringify(gpu.schema) !== JSON.stringify(cpu.schema)) return "schemas differ";
  if (gpu.numRows !== cpu.numRows) return `${gpu.numRows} rows vs ${cpu.numRows}`;
  const g = gpu.raw(),
    c = cpu.raw();
  const bytes = (v: ArrayBufferView | null | undefined) =>
    v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : Buffer.alloc(0);
  for (let i = 0; i < c.columns.length; i++) {
    const a = g.columns[i]!,
      b = c.columns[i]!;
    const parts: [string, ArrayBufferView | null | undefined, ArrayBufferView | null | undefined][] =
      b.type === "string"
        ? [
            [
              "offsets",
              (a.values as { offsets: Float64Array }).offsets,
              (b.values as { offsets: Float64Array }).offsets,
            ],
            ["bytes", (a.values as { chars: Uint8Array }).chars, (b.values as { chars: Uint8Array }).chars],
          ]
        : [["values", a.values as ArrayBufferView, b.values as ArrayBufferView]];
    parts.push(["validity", a.validity, b.validity]);
    for (const [what, x, y] of parts)
      if (Buffer.compare(bytes(x), bytes(y)) !== 0) return `column ${c.names[i]}: ${what} differ`;
  }
  return null;
}

/**
 * Copies of 8 MiB and more go through the pinned staging buffers: a table of 2M rows
 * (its string bytes ~82 MB, three 32 MiB chunks with the last one partial; its int64
 * and float columns 16 MB, one partial chunk) goes up whole and comes back through a
 * filter that keeps every row; the answer equals the CPU's byte for byte.
 */
export async function runStagedCopyCheck(cpu: LocalCluster): Promise<CheckOutcome> {
  const n = 2_000_003;
  const pad = "é".repeat(18);
  const data = fromColumns(
    {
      v: Array.from({ length: n }, (_, i) => (i * 7919) % 1_000_003),
      f: Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : i / 7)),
      s: Array.from({ length: n }, (_, i) => `${(i * 31) % 100_000}${pad}`),
    },
    { partitions: [n], types: { v: "int64" } },
  );
  // Reads every column (so each is uploaded, and comes back gathered on the device) and keeps every row.
  const q = data.filter(
    col("v")
      .ge(0)
      .and(col("s").ne(""))
      .and(col("f").isNull().or(col("f").ge(0))),
  );
  const gpu = new LocalCluster({ workers: 0, gpus: [0] });
  try {
    const s0 = native().gpuStats()[0]!;
    const got = await q.compute({ cluster: gpu });
    const s1 = native().gpuStats()[0]!;
    const want = await q.compute({ cluster: cpu });
    const diff = diffBytes(got, want);
    const up = s1.uploadBytes - s0.uploadBytes,
      down = s1.downloadBytes - s0.downloadBytes;
    return {
      name: "large copies through pinned staging give the same bytes",
      ok: diff === null && s1.chains > s0.chains && up > 64 << 20 && down > 64 << 20,
      detail:
        `${diff ?? "same bytes"}; up ${(up / 1e6).toFixed(0)} MB in ${((s1.uploadMicros - s0.uploadMicros) / 1e3).toFixed(1)} ms, ` +
        `down ${(down / 1e6).toFixed(0)} MB in ${((s1.downloadMicros - s0.downloadMicros) / 1e3).toFixed(1)} ms`,
    };
  } finally {
    await gpu.close();
  }
}
