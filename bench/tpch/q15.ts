// TPC-H Q15, top supplier (DATE = 1996-01-01).
import { col, lit } from "basin";
import { table } from "./tables.js";

const revenue = table("lineitem")
  .filter(col("l_shipdate").ge("1996-01-01").and(col("l_shipdate").lt("1996-04-01")))
  .groupBy("l_suppkey")
  .agg(
    col("l_extendedprice")
      .mul(lit(1).sub(col("l_discount")))
      .sum()
      .alias("total_revenue"),
  );
const best = revenue.agg(col("total_revenue").max().alias("max_revenue")).withColumns({ one: lit(1) });

export default table("supplier")
  .join(revenue, { leftOn: "s_suppkey", rightOn: "l_suppkey" })
  .withColumns({ one: lit(1) })
  .join(best, { on: "one" })
  .filter(col("total_revenue").eq(col("max_revenue")))
  .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
  .sort("s_suppkey");
