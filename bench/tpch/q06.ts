// TPC-H Q6, forecasting revenue change (DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24).
import { col } from "basin";
import { table } from "./tables.js";

export default table("lineitem")
  .filter(
    col("l_shipdate")
      .ge("1994-01-01")
      .and(col("l_shipdate").lt("1995-01-01"))
      .and(col("l_discount").between(0.05, 0.07))
      .and(col("l_quantity").lt(24)),
  )
  .agg(col("l_extendedprice").mul(col("l_discount")).sum().alias("revenue"));
