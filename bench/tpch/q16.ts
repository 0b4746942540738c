// TPC-H Q16, parts/supplier relationship (BRAND = Brand#45, TYPE = MEDIUM POLISHED, SIZES 49, 14, 23, 45, 19, 3, 36, 9).
import { col } from "basin";
import { table } from "./tables.js";

const complained = table("supplier").filter(col("s_comment").str.contains("Customer.*Complaints"));
const parts = table("part").filter(
  col("p_brand")
    .ne("Brand#45")
    .and(col("p_type").str.startsWith("MEDIUM POLISHED").not())
    .and(col("p_size").isIn([49, 14, 23, 45, 19, 3, 36, 9])),
);

export default table("partsupp")
  .join(complained, { leftOn: "ps_suppkey", rightOn: "s_suppkey", how: "anti" })
  .join(parts, { leftOn: "ps_partkey", rightOn: "p_partkey" })
  .groupBy("p_brand", "p_type", "p_size")
  .agg(col("ps_suppkey").nUnique().alias("supplier_cnt"))
  .sort(["supplier_cnt", "p_brand", "p_type", "p_size"], { descending: [true, false, false, false] });
