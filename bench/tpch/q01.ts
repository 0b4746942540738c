// TPC-H Q1, pricing summary report (DELTA = 90 days: ship date up to 1998-09-02).
import { col, count, lit } from "basin";
import { table } from "./tables.js";

const price = col("l_extendedprice");
const discounted = price.mul(lit(1).sub(col("l_discount")));

export default table("lineitem")
  .filter(col("l_shipdate").le("1998-09-02"))
  .groupBy("l_returnflag", "l_linestatus")
  .agg(
    col("l_quantity").sum().alias("sum_qty"),
    price.sum().alias("sum_base_price"),
    discounted.sum().alias("sum_disc_price"),
    discounted
      .mul(lit(1).add(col("l_tax")))
      .sum()
      .alias("sum_charge"),
    col("l_quantity").mean().alias("avg_qty"),
    price.mean().alias("avg_price"),
    col("l_discount").mean().alias("avg_disc"),
    count().alias("count_order"),
  )
  .sort(["l_returnflag", "l_linestatus"]);
