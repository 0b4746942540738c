// TPC-H Q22, global sales opportunity (I1..I7 = 13, 31, 23, 29, 30, 18, 17).
import { col, count, lit } from "basin";
import { table } from "./tables.js";

const codes = ["13", "31", "23", "29", "30", "18", "17"];
const customers = table("customer")
  .withColumns({ cntrycode: col("c_phone").str.slice(0, 2) })
  .filter(col("cntrycode").isIn(codes));
const average = customers
  .filter(col("c_acctbal").gt(0))
  .agg(col("c_acctbal").mean().alias("avg_acctbal"))
  .withColumns({ one: lit(1) });

export default customers
  .withColumns({ one: lit(1) })
  .join(average, { on: "one" })
  .filter(col("c_acctbal").gt(col("avg_acctbal")))
  .join(table("orders"), { leftOn: "c_custkey", rightOn: "o_custkey", how: "anti" })
  .groupBy("cntrycode")
  .agg(count().alias("numcust"), col("c_acctbal").sum().alias("totacctbal"))
  .sort("cntrycode");
