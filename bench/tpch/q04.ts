// TPC-H Q4, order priority checking (DATE = 1993-07-01).
import { col, count } from "basin";
import { table } from "./tables.js";

const late = table("lineitem").filter(col("l_commitdate").lt(col("l_receiptdate")));

export default table("orders")
  .filter(col("o_orderdate").ge("1993-07-01").and(col("o_orderdate").lt("1993-10-01")))
  .join(late, { leftOn: "o_orderkey", rightOn: "l_orderkey", how: "semi" })
  .groupBy("o_orderpriority")
  .agg(count().alias("order_count"))
  .sort("o_orderpriority");
