// TPC-H Q10, returned item reporting (DATE = 1993-10-01).
import { col, lit } from "basin";
import { table } from "./tables.js";

const orders = table("orders").filter(col("o_orderdate").ge("1993-10-01").and(col("o_orderdate").lt("1994-01-01")));
const returned = table("lineitem").filter(col("l_returnflag").eq("R"));

export default table("customer")
  .join(orders, { leftOn: "c_custkey", rightOn: "o_custkey" })
  .join(returned, { leftOn: "o_orderkey", rightOn: "l_orderkey" })
  .join(table("nation"), { leftOn: "c_nationkey", rightOn: "n_nationkey" })
  .groupBy("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
  .agg(
    col("l_extendedprice")
      .mul(lit(1).sub(col("l_discount")))
      .sum()
      .alias("revenue"),
  )
  .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
  .sort("revenue", { descending: true })
  .head(20);
