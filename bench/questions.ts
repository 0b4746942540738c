/**
 * Benchmark questions as data, and the 10 db-benchmark groupby questions: DuckDB SQL
 * over a table `x`, a Polars lazy query, and a Basin query (or `null` where Basin
 * lacks the feature). Result column names are the same in all three so answers can
 * be cross-checked.
 */
import pl from "nodejs-polars";
import type * as basin from "../engine/api/index.js";

/** The Basin API module, as questions receive it. */
export type BasinApi = typeof basin;

/** A dataset's tables by name (`x`, or `x`, `small`, `medium`, `big`) in one system's form. */
export type Tables<T> = Readonly<Record<string, T>>;

/** One benchmark question over a dataset's tables. */
export interface Question {
  /** Short id, e.g. `q1`. */
  id: string;
  /** What it computes, as db-benchmark words it. */
  description: string;
  /**
   * Columns compared exactly (group keys, join ids); results are sorted by these,
   * then by all other columns, to compare. Other numbers get a relative tolerance.
   */
  keys: string[];
  /** DuckDB SQL over relations named like the dataset's tables. */
  duckdb: string;
  /** Polars lazy query over the dataset's tables. */
  polars: (t: Tables<pl.LazyDataFrame>) => pl.LazyDataFrame;
  /** Basin lazy query, or null when Basin does not support it yet. */
  basin: ((t: Tables<basin.DataFrame>, api: BasinApi) => basin.DataFrame) | null;
}

const c = pl.col;

/** The groupby questions q1–q10. */
export const GROUPBY_QUESTIONS: readonly Question[] = [
  {
    id: "q1",
    description: "sum v1 by id1",
    keys: ["id1"],
    duckdb: "SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1",
    polars: ({ x }) => x.groupBy("id1").agg(c("v1").sum().alias("v1")),
    basin: ({ x }, { col }) => x.groupBy("id1").agg(col("v1").sum().alias("v1")),
  },
  {
    id: "q2",
    description: "sum v1 by id1:id2",
    keys: ["id1", "id2"],
    duckdb: "SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2",
    polars: ({ x }) => x.groupBy(["id1", "id2"]).agg(c("v1").sum().alias("v1")),
    basin: ({ x }, { col }) => x.groupBy("id1", "id2").agg(col("v1").sum().alias("v1")),
  },
  {
    id: "q3",
    description: "sum v1 mean v3 by id3",
    keys: ["id3"],
    duckdb: "SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3",
    polars: ({ x }) => x.groupBy("id3").agg(c("v1").sum().alias("v1"), c("v3").mean().alias("v3")),
    basin: ({ x }, { col }) => x.groupBy("id3").agg(col("v1").sum().alias("v1"), col("v3").mean().alias("v3")),
  },
  {
    id: "q4",
    description: "mean v1:v3 by id4",
    keys: ["id4"],
    duckdb: "SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4",
    polars: ({ x }) =>
      x.groupBy("id4").agg(c("v1").mean().alias("v1"), c("v2").mean().alias("v2"), c("v3").mean().alias("v3")),
    basin: ({ x }, { col }) =>
      x.groupBy("id4").agg(col("v1").mean().alias("v1"), col("v2").mean().alias("v2"), col("v3").mean().alias("v3")),
  },
  {
    id: "q5",
    description: "sum v1:v3 by id6",
    keys: ["id6"],
    duckdb: "SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6",
    polars: ({ x }) =>
      x.groupBy("id6").agg(c("v1").sum().alias("v1"), c("v2").sum().alias("v2"), c("v3").sum().alias("v3")),
    basin: ({ x }, { col }) =>
      x.groupBy("id6").agg(col("v1").sum().alias("v1"), col("v2").sum().alias("v2"), col("v3").sum().alias("v3")),
  },
  {
    id: "q6",
    description: "median v3 sd v3 by id4 id5",
    keys: ["id4", "id5"],
    duckdb: "SELECT id4, id5, quantile_cont(v3, 0.5) AS median_v3, stddev(v3) AS sd_v3 FROM x GROUP BY id4, id5",
    polars: ({ x }) => x.groupBy(["id4", "id5"]).agg(c("v3").median().alias("median_v3"), c("v3").std().alias("sd_v3")),
    basin: ({ x }, { col }) =>
      x.groupBy("id4", "id5").agg(col("v3").median().alias("median_v3"), col("v3").std().alias("sd_v3")),
  },
  {
    id: "q7",
    description: "max v1 - min v2 by id3",
    keys: ["id3"],
    duckdb: "SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3",
    polars: ({ x }) => x.groupBy("id3").agg(c("v1").max().sub(c("v2").min()).alias("range_v1_v2")),
    basin: ({ x }, { col }) =>
      x
        .groupBy("id3")
        .agg(col("v1").max().alias("v1"), col("v2").min().alias("v2"))
        .withColumns({ range_v1_v2: col("v1").sub(col("v2")) })
        .select("id3", "range_v1_v2"),
  },
  {
    id: "q8",
    description: "largest two v3 by id6",
    keys: ["id6"],
    duckdb:
      "SELECT id6, largest2_v3 FROM (SELECT id6, v3 AS largest2_v3, " +
      "row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS order_v3 FROM x WHERE v3 IS NOT NULL) " +
      "WHERE order_v3 <= 2",
    polars: ({ x }) =>
      x
        .dropNulls("v3")
        .groupBy("id6")
        .agg(c("v3").sort({ descending: true }).head(2).alias("largest2_v3"))
        .explode("largest2_v3"),
    basin: ({ x }, { col }) =>
      x.dropNulls(["v3"]).groupBy("id6").topK(2, "v3").select("id6", col("v3").alias("largest2_v3")),
  },
  {
    id: "q9",
    description: "regression v1 v2 by id2 id4",
    keys: ["id2", "id4"],
    duckdb: "SELECT id2, id4, pow(corr(v1, v2), 2) AS r2 FROM x GROUP BY id2, id4",
    polars: ({ x }) => x.groupBy(["id2", "id4"]).agg(pl.pearsonCorr("v1", "v2").pow(2).alias("r2")),
    basin: ({ x }, { col, corr }) =>
      x
        .groupBy("id2", "id4")
        .agg(corr("v1", "v2").alias("r"))
        .withColumns({ r2: col("r").pow(2) })
        .select("id2", "id4", "r2"),
  },
  {
    id: "q10",
    description: "sum v3 count by id1:id6",
    keys: ["id1", "id2", "id3", "id4", "id5", "id6"],
    duckdb:
      "SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM x " +
      "GROUP BY id1, id2, id3, id4, id5, id6",
    polars: ({ x }) =>
      x
        .groupBy(["id1", "id2", "id3", "id4", "id5", "id6"])
        .agg(c("v3").sum().alias("v3"), c("v1").count().alias("count")),
    basin: ({ x }, { col }) =>
      x
        .groupBy("id1", "id2", "id3", "id4", "id5", "id6")
        .agg(col("v3").sum().alias("v3"), col("v1").count().alias("count")),
  },
];
