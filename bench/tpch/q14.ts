// TPC-H Q14, promotion effect (DATE = 1995-09-01).
import { col, lit, when } from "basin";
import { table } from "./tables.js";

const lines = table("lineitem").filter(col("l_shipdate").ge("1995-09-01").and(col("l_shipdate").lt("1995-10-01")));
const revenue = col("l_extendedprice").mul(lit(1).sub(col("l_discount")));

export default lines
  .join(table("part"), { leftOn: "l_partkey", rightOn: "p_partkey" })
  .agg(
    when(col("p_type").str.startsWith("PROMO")).then(revenue).otherwise(0).sum().alias("promo"),
    revenue.sum().alias("total"),
  )
  .select(lit(100).mul(col("promo")).div(col("total")).alias("promo_revenue"));
