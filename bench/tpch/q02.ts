// TPC-H Q2, minimum cost supplier (SIZE = 15, TYPE = BRASS, REGION = EUROPE).
import { col } from "basin";
import { table } from "./tables.js";

const europe = table("region").filter(col("r_name").eq("EUROPE"));
const suppliers = table("supplier")
  .join(table("nation"), { leftOn: "s_nationkey", rightOn: "n_nationkey" })
  .join(europe, { leftOn: "n_regionkey", rightOn: "r_regionkey", how: "semi" });
const parts = table("part").filter(col("p_size").eq(15).and(col("p_type").str.endsWith("BRASS")));

const offers = parts
  .join(table("partsupp"), { leftOn: "p_partkey", rightOn: "ps_partkey" })
  .join(suppliers, { leftOn: "ps_suppkey", rightOn: "s_suppkey" });
const cheapest = offers.groupBy("p_partkey").agg(col("ps_supplycost").min().alias("min_cost"));

export default offers
  .join(cheapest, { on: "p_partkey" })
  .filter(col("ps_supplycost").eq(col("min_cost")))
  .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment")
  .sort(["s_acctbal", "n_name", "s_name", "p_partkey"], { descending: [true, false, false, false] })
  .head(100);
