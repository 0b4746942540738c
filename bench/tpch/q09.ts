// TPC-H Q9, product type profit measure (COLOR = green).
import { col, lit } from "basin";
import { table } from "./tables.js";

const supplierNation = table("nation").select("n_nationkey", col("n_name").alias("nation"));

export default table("part")
  .filter(col("p_name").str.contains("green", { literal: true }))
  .join(table("lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" })
  .join(table("supplier"), { leftOn: "l_suppkey", rightOn: "s_suppkey" })
  .join(table("partsupp"), { leftOn: ["l_suppkey", "l_partkey"], rightOn: ["ps_suppkey", "ps_partkey"] })
  .join(table("orders"), { leftOn: "l_orderkey", rightOn: "o_orderkey" })
  .join(supplierNation, { leftOn: "s_nationkey", rightOn: "n_nationkey" })
  .withColumns({
    o_year: col("o_orderdate").dt.year(),
    amount: col("l_extendedprice")
      .mul(lit(1).sub(col("l_discount")))
      .sub(col("ps_supplycost").mul(col("l_quantity"))),
  })
  .groupBy("nation", "o_year")
  .agg(col("amount").sum().alias("sum_profit"))
  .sort(["nation", "o_year"], { descending: [false, true] });
