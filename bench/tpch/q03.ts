// TPC-H Q3, shipping priority (SEGMENT = BUILDING, DATE = 1995-03-15).
import { col, lit } from "basin";
import { table } from "./tables.js";

const customers = table("customer").filter(col("c_mktsegment").eq("BUILDING"));
const orders = table("orders").filter(col("o_orderdate").lt("1995-03-15"));
const lines = table("lineitem").filter(col("l_shipdate").gt("1995-03-15"));

export default customers
  .join(orders, { leftOn: "c_custkey", rightOn: "o_custkey" })
  .join(lines, { leftOn: "o_orderkey", rightOn: "l_orderkey" })
  .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
  .agg(
    col("l_extendedprice")
      .mul(lit(1).sub(col("l_discount")))
      .sum()
      .alias("revenue"),
  )
  .select("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
  .sort(["revenue", "o_orderdate"], { descending: [true, false] })
  .head(10);
