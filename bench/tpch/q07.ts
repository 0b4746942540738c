// TPC-H Q7, volume shipping (NATION1 = FRANCE, NATION2 = GERMANY).
import { col, lit } from "basin";
import { table } from "./tables.js";

const pair = ["FRANCE", "GERMANY"];
const nations = table("nation").filter(col("n_name").isIn(pair));
const supplierNation = nations.select("n_nationkey", col("n_name").alias("supp_nation"));
const customerNation = nations.select("n_nationkey", col("n_name").alias("cust_nation"));
const lines = table("lineitem").filter(col("l_shipdate").between("1995-01-01", "1996-12-31"));

export default table("supplier")
  .join(supplierNation, { leftOn: "s_nationkey", rightOn: "n_nationkey" })
  .join(lines, { leftOn: "s_suppkey", rightOn: "l_suppkey" })
  .join(table("orders"), { leftOn: "l_orderkey", rightOn: "o_orderkey" })
  .join(table("customer"), { leftOn: "o_custkey", rightOn: "c_custkey" })
  .join(customerNation, { leftOn: "c_nationkey", rightOn: "n_nationkey" })
  .filter(
    col("supp_nation")
      .eq("FRANCE")
      .and(col("cust_nation").eq("GERMANY"))
      .or(col("supp_nation").eq("GERMANY").and(col("cust_nation").eq("FRANCE"))),
  )
  .withColumns({
    l_year: col("l_shipdate").dt.year(),
    volume: col("l_extendedprice").mul(lit(1).sub(col("l_discount"))),
  })
  .groupBy("supp_nation", "cust_nation", "l_year")
  .agg(col("volume").sum().alias("revenue"))
  .sort(["supp_nation", "cust_nation", "l_year"]);
