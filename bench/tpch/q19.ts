// TPC-H Q19, discounted revenue (QUANTITY1 = 1, QUANTITY2 = 10, QUANTITY3 = 20, BRAND1 = Brand#12, BRAND2 = Brand#23, BRAND3 = Brand#34).
import { col, lit, type Expr } from "basin";
import { table } from "./tables.js";

function kind(brand: string, containers: string[], quantity: number, maxSize: number): Expr {
  return col("p_brand")
    .eq(brand)
    .and(col("p_container").isIn(containers))
    .and(col("l_quantity").between(quantity, quantity + 10))
    .and(col("p_size").between(1, maxSize));
}

const lines = table("lineitem").filter(
  col("l_shipmode").isIn(["AIR", "AIR REG"]).and(col("l_shipinstruct").eq("DELIVER IN PERSON")),
);

export default lines
  .join(table("part"), { leftOn: "l_partkey", rightOn: "p_partkey" })
  .filter(
    kind("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
      .or(kind("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10))
      .or(kind("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)),
  )
  .agg(
    col("l_extendedprice")
      .mul(lit(1).sub(col("l_discount")))
      .sum()
      .alias("revenue"),
  );
