// TPC-H Q5, local supplier volume (REGION = ASIA, DATE = 1994-01-01).
import { col, lit } from "basin";
import { table } from "./tables.js";

const orders = table("orders").filter(col("o_orderdate").ge("1994-01-01").and(col("o_orderdate").lt("1995-01-01")));
const asia = table("region").filter(col("r_name").eq("ASIA"));

export default table("customer")
  .join(orders, { leftOn: "c_custkey", rightOn: "o_custkey" })
  .join(table("lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
  .join(table("supplier"), { leftOn: ["l_suppkey", "c_nationkey"], rightOn: ["s_suppkey", "s_nationkey"] })
  .join(table("nation"), { leftOn: "s_nationkey", rightOn: "n_nationkey" })
  .join(asia, { leftOn: "n_regionkey", rightOn: "r_regionkey" })
  .groupBy("n_name")
  .agg(
    col("l_extendedprice")
      .mul(lit(1).sub(col("l_discount")))
      .sum()
      .alias("revenue"),
  )
  .sort("revenue", { descending: true });
