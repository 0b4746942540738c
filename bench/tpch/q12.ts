// TPC-H Q12, shipping modes and order priority (SHIPMODE1 = MAIL, SHIPMODE2 = SHIP, DATE = 1994-01-01).
import { col, when } from "basin";
import { table } from "./tables.js";

const lines = table("lineitem").filter(
  col("l_shipmode")
    .isIn(["MAIL", "SHIP"])
    .and(col("l_commitdate").lt(col("l_receiptdate")))
    .and(col("l_shipdate").lt(col("l_commitdate")))
    .and(col("l_receiptdate").ge("1994-01-01"))
    .and(col("l_receiptdate").lt("1995-01-01")),
);
const urgent = col("o_orderpriority").isIn(["1-URGENT", "2-HIGH"]);

export default table("orders")
  .join(lines, { leftOn: "o_orderkey", rightOn: "l_orderkey" })
  .groupBy("l_shipmode")
  .agg(
    when(urgent).then(1).otherwise(0).sum().alias("high_line_count"),
    when(urgent).then(0).otherwise(1).sum().alias("low_line_count"),
  )
  .sort("l_shipmode");
