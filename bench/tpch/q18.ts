// TPC-H Q18, large volume customer (QUANTITY = 300).
import { col } from "basin";
import { table } from "./tables.js";

const large = table("lineitem")
  .groupBy("l_orderkey")
  .agg(col("l_quantity").sum().alias("quantity"))
  .filter(col("quantity").gt(300));

export default table("customer")
  .join(table("orders"), { leftOn: "c_custkey", rightOn: "o_custkey" })
  .join(large, { leftOn: "o_orderkey", rightOn: "l_orderkey", how: "semi" })
  .join(table("lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
  .groupBy("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice")
  .agg(col("l_quantity").sum().alias("sum_quantity"))
  .sort(["o_totalprice", "o_orderdate"], { descending: [true, false] })
  .head(100);
