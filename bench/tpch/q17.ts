// TPC-H Q17, small-quantity-order revenue (BRAND = Brand#23, CONTAINER = MED BOX).
import { col } from "basin";
import { table } from "./tables.js";

const lines = table("part")
  .filter(col("p_brand").eq("Brand#23").and(col("p_container").eq("MED BOX")))
  .join(table("lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" });
const average = lines.groupBy("p_partkey").agg(col("l_quantity").mean().alias("avg_quantity"));

export default lines
  .join(average, { on: "p_partkey" })
  .filter(col("l_quantity").lt(col("avg_quantity").mul(0.2)))
  .agg(col("l_extendedprice").sum().div(7).alias("avg_yearly"));
