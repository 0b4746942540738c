// TPC-H Q8, national market share (NATION = BRAZIL, REGION = AMERICA, TYPE = ECONOMY ANODIZED STEEL).
import { col, lit, when } from "basin";
import { table } from "./tables.js";

const america = table("region").filter(col("r_name").eq("AMERICA"));
const customers = table("customer")
  .join(table("nation"), { leftOn: "c_nationkey", rightOn: "n_nationkey" })
  .join(america, { leftOn: "n_regionkey", rightOn: "r_regionkey", how: "semi" })
  .select("c_custkey");
const supplierNation = table("nation").select("n_nationkey", col("n_name").alias("nation"));
const orders = table("orders").filter(col("o_orderdate").between("1995-01-01", "1996-12-31"));

export default table("part")
  .filter(col("p_type").eq("ECONOMY ANODIZED STEEL"))
  .join(table("lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" })
  .join(table("supplier"), { leftOn: "l_suppkey", rightOn: "s_suppkey" })
  .join(orders, { leftOn: "l_orderkey", rightOn: "o_orderkey" })
  .join(customers, { leftOn: "o_custkey", rightOn: "c_custkey" })
  .join(supplierNation, { leftOn: "s_nationkey", rightOn: "n_nationkey" })
  .withColumns({
    o_year: col("o_orderdate").dt.year(),
    volume: col("l_extendedprice").mul(lit(1).sub(col("l_discount"))),
  })
  .groupBy("o_year")
  .agg(
    when(col("nation").eq("BRAZIL")).then(col("volume")).otherwise(0).sum().alias("brazil"),
    col("volume").sum().alias("total"),
  )
  .select("o_year", col("brazil").div(col("total")).alias("mkt_share"))
  .sort("o_year");
