// TPC-H Q11, important stock identification (NATION = GERMANY, FRACTION = 0.0001).
import { col, lit } from "basin";
import { table } from "./tables.js";

const germany = table("nation").filter(col("n_name").eq("GERMANY"));
const stock = table("partsupp")
  .join(table("supplier"), { leftOn: "ps_suppkey", rightOn: "s_suppkey" })
  .join(germany, { leftOn: "s_nationkey", rightOn: "n_nationkey", how: "semi" })
  .withColumns({ value: col("ps_supplycost").mul(col("ps_availqty")) });
// The threshold is one number over all of Germany's stock, joined to every part.
const threshold = stock.agg(col("value").sum().mul(0.0001).alias("threshold")).withColumns({ one: lit(1) });

export default stock
  .groupBy("ps_partkey")
  .agg(col("value").sum().alias("value"))
  .withColumns({ one: lit(1) })
  .join(threshold, { on: "one" })
  .filter(col("value").gt(col("threshold")))
  .select("ps_partkey", "value")
  .sort("value", { descending: true });
