// TPC-H Q20, potential part promotion (COLOR = forest, DATE = 1994-01-01, NATION = CANADA).
import { col } from "basin";
import { table } from "./tables.js";

const shipped = table("lineitem")
  .filter(col("l_shipdate").ge("1994-01-01").and(col("l_shipdate").lt("1995-01-01")))
  .groupBy("l_partkey", "l_suppkey")
  .agg(col("l_quantity").sum().alias("shipped"));
const forest = table("part").filter(col("p_name").str.startsWith("forest"));
const excess = table("partsupp")
  .join(forest, { leftOn: "ps_partkey", rightOn: "p_partkey", how: "semi" })
  .join(shipped, { leftOn: ["ps_partkey", "ps_suppkey"], rightOn: ["l_partkey", "l_suppkey"] })
  .filter(col("ps_availqty").gt(col("shipped").mul(0.5)));
const canada = table("nation").filter(col("n_name").eq("CANADA"));

export default table("supplier")
  .join(canada, { leftOn: "s_nationkey", rightOn: "n_nationkey", how: "semi" })
  .join(excess, { leftOn: "s_suppkey", rightOn: "ps_suppkey", how: "semi" })
  .select("s_name", "s_address")
  .sort("s_name");
