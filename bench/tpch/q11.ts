// TPC-H Q11, important stock identification (NATION = GERMANY, FRACTION = 0.0001 / SF).
import { col, count, lit } from "basin";
import { table } from "./tables.js";

const germany = table("nation").filter(col("n_name").eq("GERMANY"));
const stock = table("partsupp")
  .join(table("supplier"), { leftOn: "ps_suppkey", rightOn: "s_suppkey" })
  .join(germany, { leftOn: "s_nationkey", rightOn: "n_nationkey", how: "semi" })
  .withColumns({ value: col("ps_supplycost").mul(col("ps_availqty")) });
// The scale factor, from the data: SF × 10,000 suppliers.
const scale = table("supplier")
  .agg(count().div(10_000).alias("sf"))
  .withColumns({ one: lit(1) });
// The threshold is one number over all of Germany's stock, joined to every part.
const threshold = stock
  .agg(col("value").sum().alias("total"))
  .withColumns({ one: lit(1) })
  .join(scale, { on: "one" })
  .withColumns({ threshold: col("total").mul(0.0001).div(col("sf")) });

export default stock
  .groupBy("ps_partkey")
  .agg(col("value").sum().alias("value"))
  .withColumns({ one: lit(1) })
  .join(threshold.select("one", "threshold"), { on: "one" })
  .filter(col("value").gt(col("threshold")))
  .select("ps_partkey", "value")
  .sort("value", { descending: true });
