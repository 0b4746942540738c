// TPC-H Q13, customer distribution (WORD1 = special, WORD2 = requests).
import { col, count } from "basin";
import { table } from "./tables.js";

const orders = table("orders").filter(col("o_comment").str.contains("special.*requests").not());

export default table("customer")
  .join(orders, { leftOn: "c_custkey", rightOn: "o_custkey", how: "left" })
  .groupBy("c_custkey")
  .agg(col("o_orderkey").count().alias("c_count"))
  .groupBy("c_count")
  .agg(count().alias("custdist"))
  .sort(["custdist", "c_count"], { descending: true });
