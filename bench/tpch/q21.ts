// TPC-H Q21, suppliers who kept orders waiting (NATION = SAUDI ARABIA).
import { col, count } from "basin";
import { table } from "./tables.js";

const late = table("lineitem").filter(col("l_receiptdate").gt(col("l_commitdate")));
// EXISTS another supplier on the order; NOT EXISTS another supplier that was late too.
const sharedOrders = table("lineitem")
  .groupBy("l_orderkey")
  .agg(col("l_suppkey").nUnique().alias("suppliers"))
  .filter(col("suppliers").gt(1));
const oneLateSupplier = late
  .groupBy("l_orderkey")
  .agg(col("l_suppkey").nUnique().alias("late_suppliers"))
  .filter(col("late_suppliers").eq(1));
const saudi = table("nation").filter(col("n_name").eq("SAUDI ARABIA"));
const failed = table("orders").filter(col("o_orderstatus").eq("F"));

export default table("supplier")
  .join(saudi, { leftOn: "s_nationkey", rightOn: "n_nationkey", how: "semi" })
  .join(late, { leftOn: "s_suppkey", rightOn: "l_suppkey" })
  .join(failed, { leftOn: "l_orderkey", rightOn: "o_orderkey", how: "semi" })
  .join(sharedOrders, { on: "l_orderkey", how: "semi" })
  .join(oneLateSupplier, { on: "l_orderkey", how: "semi" })
  .groupBy("s_name")
  .agg(count().alias("numwait"))
  .sort(["numwait", "s_name"], { descending: [true, false] })
  .head(100);
