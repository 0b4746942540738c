// The 22 TPC-H queries in Polars' lazy API (nodejs-polars), written as the Polars
// "PDS-H" benchmark writes them: joins in the order the query text implies,
// correlated subqueries as group-bys joined back, EXISTS / NOT EXISTS / IN as semi
// and anti joins. Result columns are named and ordered as in the SQL (sql.ts).
import pl from "nodejs-polars";
import type { Tables } from "../questions.js";

type Frames = Tables<pl.LazyDataFrame>;
type Query = (t: Frames, sf: number) => pl.LazyDataFrame;

const c = pl.col;
const lit = pl.lit;
/** A DATE literal. */
const date = (s: string): pl.Expr => lit(new Date(`${s}T00:00:00Z`)).cast(pl.Date);
/** l_extendedprice * (1 - l_discount). */
const revenue = (): pl.Expr => c("l_extendedprice").mul(lit(1).minus(c("l_discount")));
const between = (e: pl.Expr, lo: pl.Expr | number, hi: pl.Expr | number): pl.Expr => e.gtEq(lo).and(e.ltEq(hi));
/** from <= e < to. */
const within = (e: pl.Expr, from: string, to: string): pl.Expr => e.gtEq(date(from)).and(e.lt(date(to)));

const t = (f: Frames, name: string): pl.LazyDataFrame => {
  const x = f[name];
  if (!x) throw new Error(`polars: no table ${name}`);
  return x;
};

/** Query n (1–22) as a Polars lazy frame. */
export const TPCH_POLARS: readonly Query[] = [
  // Q1
  (f) =>
    t(f, "lineitem")
      .filter(c("l_shipdate").ltEq(date("1998-09-02")))
      .groupBy(["l_returnflag", "l_linestatus"])
      .agg(
        c("l_quantity").sum().alias("sum_qty"),
        c("l_extendedprice").sum().alias("sum_base_price"),
        revenue().sum().alias("sum_disc_price"),
        revenue()
          .mul(lit(1).plus(c("l_tax")))
          .sum()
          .alias("sum_charge"),
        c("l_quantity").mean().alias("avg_qty"),
        c("l_extendedprice").mean().alias("avg_price"),
        c("l_discount").mean().alias("avg_disc"),
        pl.len().alias("count_order"),
      )
      .sort(["l_returnflag", "l_linestatus"]),

  // Q2
  (f) => {
    const europe = t(f, "region")
      .filter(c("r_name").eq(lit("EUROPE")))
      .join(t(f, "nation"), { leftOn: "r_regionkey", rightOn: "n_regionkey" })
      .join(t(f, "supplier"), { leftOn: "n_nationkey", rightOn: "s_nationkey" })
      .join(t(f, "partsupp"), { leftOn: "s_suppkey", rightOn: "ps_suppkey" });
    const brass = t(f, "part")
      .filter(c("p_size").eq(15).and(c("p_type").str.endsWith("BRASS")))
      .join(europe, { leftOn: "p_partkey", rightOn: "ps_partkey" });
    const cheapest = brass.groupBy("p_partkey").agg(c("ps_supplycost").min().alias("ps_supplycost"));
    return brass
      .join(cheapest, { on: ["p_partkey", "ps_supplycost"] })
      .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment")
      .sort(["s_acctbal", "n_name", "s_name", "p_partkey"], [true, false, false, false])
      .head(100);
  },

  // Q3
  (f) =>
    t(f, "customer")
      .filter(c("c_mktsegment").eq(lit("BUILDING")))
      .join(t(f, "orders"), { leftOn: "c_custkey", rightOn: "o_custkey" })
      .join(t(f, "lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
      .filter(
        c("o_orderdate")
          .lt(date("1995-03-15"))
          .and(c("l_shipdate").gt(date("1995-03-15"))),
      )
      .groupBy(["o_orderkey", "o_orderdate", "o_shippriority"])
      .agg(revenue().sum().alias("revenue"))
      .select(c("o_orderkey").alias("l_orderkey"), c("revenue"), c("o_orderdate"), c("o_shippriority"))
      .sort(["revenue", "o_orderdate"], [true, false])
      .head(10),

  // Q4
  (f) => {
    const late = t(f, "lineitem").filter(c("l_commitdate").lt(c("l_receiptdate")));
    return t(f, "orders")
      .filter(within(c("o_orderdate"), "1993-07-01", "1993-10-01"))
      .join(late, { leftOn: "o_orderkey", rightOn: "l_orderkey", how: "semi" })
      .groupBy("o_orderpriority")
      .agg(pl.len().alias("order_count"))
      .sort("o_orderpriority");
  },

  // Q5
  (f) =>
    t(f, "region")
      .filter(c("r_name").eq(lit("ASIA")))
      .join(t(f, "nation"), { leftOn: "r_regionkey", rightOn: "n_regionkey" })
      .join(t(f, "customer"), { leftOn: "n_nationkey", rightOn: "c_nationkey" })
      .join(t(f, "orders"), { leftOn: "c_custkey", rightOn: "o_custkey" })
      .join(t(f, "lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
      .join(t(f, "supplier"), { leftOn: ["l_suppkey", "n_nationkey"], rightOn: ["s_suppkey", "s_nationkey"] })
      .filter(within(c("o_orderdate"), "1994-01-01", "1995-01-01"))
      .groupBy("n_name")
      .agg(revenue().sum().alias("revenue"))
      .sort("revenue", true),

  // Q6
  (f) =>
    t(f, "lineitem")
      .filter(
        within(c("l_shipdate"), "1994-01-01", "1995-01-01")
          .and(between(c("l_discount"), 0.05, 0.07))
          .and(c("l_quantity").lt(24)),
      )
      .select(c("l_extendedprice").mul(c("l_discount")).sum().alias("revenue")),

  // Q7
  (f) => {
    const pair = t(f, "nation").filter(c("n_name").isIn(["FRANCE", "GERMANY"]));
    const supp = pair
      .select(c("n_nationkey"), c("n_name").alias("supp_nation"))
      .join(t(f, "supplier"), { leftOn: "n_nationkey", rightOn: "s_nationkey" })
      .join(t(f, "lineitem"), { leftOn: "s_suppkey", rightOn: "l_suppkey" })
      .filter(between(c("l_shipdate"), date("1995-01-01"), date("1996-12-31")));
    const cust = pair
      .select(c("n_nationkey"), c("n_name").alias("cust_nation"))
      .join(t(f, "customer"), { leftOn: "n_nationkey", rightOn: "c_nationkey" })
      .join(t(f, "orders"), { leftOn: "c_custkey", rightOn: "o_custkey" })
      .select("o_orderkey", "cust_nation");
    return supp
      .join(cust, { leftOn: "l_orderkey", rightOn: "o_orderkey" })
      .filter(c("supp_nation").neq(c("cust_nation")))
      .withColumns(c("l_shipdate").dt.year().alias("l_year"))
      .groupBy(["supp_nation", "cust_nation", "l_year"])
      .agg(revenue().sum().alias("revenue"))
      .sort(["supp_nation", "cust_nation", "l_year"]);
  },

  // Q8
  (f) => {
    const america = t(f, "region")
      .filter(c("r_name").eq(lit("AMERICA")))
      .join(t(f, "nation"), { leftOn: "r_regionkey", rightOn: "n_regionkey" })
      .select("n_nationkey");
    const suppNation = t(f, "nation").select(c("n_nationkey").alias("s_nation"), c("n_name").alias("nation"));
    return t(f, "part")
      .filter(c("p_type").eq(lit("ECONOMY ANODIZED STEEL")))
      .join(t(f, "lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" })
      .join(t(f, "supplier"), { leftOn: "l_suppkey", rightOn: "s_suppkey" })
      .join(t(f, "orders"), { leftOn: "l_orderkey", rightOn: "o_orderkey" })
      .join(t(f, "customer"), { leftOn: "o_custkey", rightOn: "c_custkey" })
      .join(america, { leftOn: "c_nationkey", rightOn: "n_nationkey" })
      .join(suppNation, { leftOn: "s_nationkey", rightOn: "s_nation" })
      .filter(between(c("o_orderdate"), date("1995-01-01"), date("1996-12-31")))
      .withColumns(c("o_orderdate").dt.year().alias("o_year"), revenue().alias("volume"))
      .groupBy("o_year")
      .agg(
        pl
          .when(c("nation").eq(lit("BRAZIL")))
          .then(c("volume"))
          .otherwise(lit(0))
          .sum()
          .div(c("volume").sum())
          .alias("mkt_share"),
      )
      .sort("o_year");
  },

  // Q9
  (f) =>
    t(f, "part")
      .filter(c("p_name").str.contains("green"))
      .join(t(f, "partsupp"), { leftOn: "p_partkey", rightOn: "ps_partkey" })
      .join(t(f, "supplier"), { leftOn: "ps_suppkey", rightOn: "s_suppkey" })
      .join(t(f, "lineitem"), { leftOn: ["p_partkey", "ps_suppkey"], rightOn: ["l_partkey", "l_suppkey"] })
      .join(t(f, "orders"), { leftOn: "l_orderkey", rightOn: "o_orderkey" })
      .join(t(f, "nation"), { leftOn: "s_nationkey", rightOn: "n_nationkey" })
      .select(
        c("n_name").alias("nation"),
        c("o_orderdate").dt.year().alias("o_year"),
        revenue()
          .minus(c("ps_supplycost").mul(c("l_quantity")))
          .alias("amount"),
      )
      .groupBy(["nation", "o_year"])
      .agg(c("amount").sum().alias("sum_profit"))
      .sort(["nation", "o_year"], [false, true]),

  // Q10
  (f) =>
    t(f, "customer")
      .join(t(f, "orders"), { leftOn: "c_custkey", rightOn: "o_custkey" })
      .join(t(f, "lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
      .join(t(f, "nation"), { leftOn: "c_nationkey", rightOn: "n_nationkey" })
      .filter(within(c("o_orderdate"), "1993-10-01", "1994-01-01").and(c("l_returnflag").eq(lit("R"))))
      .groupBy(["c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment"])
      .agg(revenue().sum().alias("revenue"))
      .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
      .sort("revenue", true)
      .head(20),

  // Q11
  (f, sf) => {
    const germany = t(f, "nation")
      .filter(c("n_name").eq(lit("GERMANY")))
      .join(t(f, "supplier"), { leftOn: "n_nationkey", rightOn: "s_nationkey" })
      .join(t(f, "partsupp"), { leftOn: "s_suppkey", rightOn: "ps_suppkey" })
      .withColumns(c("ps_supplycost").mul(c("ps_availqty")).alias("value"));
    const threshold = germany.select(
      c("value")
        .sum()
        .mul(0.0001 / sf)
        .alias("threshold"),
    );
    return germany
      .groupBy("ps_partkey")
      .agg(c("value").sum().alias("value"))
      .join(threshold, { how: "cross" })
      .filter(c("value").gt(c("threshold")))
      .select("ps_partkey", "value")
      .sort("value", true);
  },

  // Q12
  (f) => {
    const high = c("o_orderpriority").isIn(["1-URGENT", "2-HIGH"]);
    return t(f, "orders")
      .join(t(f, "lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
      .filter(
        c("l_shipmode")
          .isIn(["MAIL", "SHIP"])
          .and(c("l_commitdate").lt(c("l_receiptdate")))
          .and(c("l_shipdate").lt(c("l_commitdate")))
          .and(within(c("l_receiptdate"), "1994-01-01", "1995-01-01")),
      )
      .groupBy("l_shipmode")
      .agg(
        // JS numbers are Float64 literals in Polars: the counts are integers, as in SQL.
        pl.when(high).then(lit(1)).otherwise(lit(0)).cast(pl.Int64).sum().alias("high_line_count"),
        pl.when(high).then(lit(0)).otherwise(lit(1)).cast(pl.Int64).sum().alias("low_line_count"),
      )
      .sort("l_shipmode");
  },

  // Q13
  (f) =>
    t(f, "customer")
      .join(t(f, "orders").filter(c("o_comment").str.contains("special.*requests").not()), {
        leftOn: "c_custkey",
        rightOn: "o_custkey",
        how: "left",
      })
      .groupBy("c_custkey")
      .agg(c("o_orderkey").count().alias("c_count"))
      .groupBy("c_count")
      .agg(pl.len().alias("custdist"))
      .sort(["custdist", "c_count"], [true, true]),

  // Q14
  (f) =>
    t(f, "lineitem")
      .join(t(f, "part"), { leftOn: "l_partkey", rightOn: "p_partkey" })
      .filter(within(c("l_shipdate"), "1995-09-01", "1995-10-01"))
      .select(
        lit(100.0)
          .mul(pl.when(c("p_type").str.startsWith("PROMO")).then(revenue()).otherwise(lit(0)).sum())
          .div(revenue().sum())
          .alias("promo_revenue"),
      ),

  // Q15
  (f) => {
    const revenue0 = t(f, "lineitem")
      .filter(within(c("l_shipdate"), "1996-01-01", "1996-04-01"))
      .groupBy("l_suppkey")
      .agg(revenue().sum().alias("total_revenue"))
      .select(c("l_suppkey").alias("supplier_no"), c("total_revenue"));
    return t(f, "supplier")
      .join(revenue0, { leftOn: "s_suppkey", rightOn: "supplier_no" })
      .filter(c("total_revenue").eq(c("total_revenue").max()))
      .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
      .sort("s_suppkey");
  },

  // Q16
  (f) => {
    const complaints = t(f, "supplier").filter(c("s_comment").str.contains("Customer.*Complaints")).select("s_suppkey");
    return t(f, "part")
      .filter(
        c("p_brand")
          .neq(lit("Brand#45"))
          .and(c("p_type").str.startsWith("MEDIUM POLISHED").not())
          .and(c("p_size").isIn([49, 14, 23, 45, 19, 3, 36, 9])),
      )
      .join(t(f, "partsupp"), { leftOn: "p_partkey", rightOn: "ps_partkey" })
      .join(complaints, { leftOn: "ps_suppkey", rightOn: "s_suppkey", how: "anti" })
      .groupBy(["p_brand", "p_type", "p_size"])
      .agg(c("ps_suppkey").nUnique().alias("supplier_cnt"))
      .sort(["supplier_cnt", "p_brand", "p_type", "p_size"], [true, false, false, false]);
  },

  // Q17
  (f) => {
    const lines = t(f, "part")
      .filter(
        c("p_brand")
          .eq(lit("Brand#23"))
          .and(c("p_container").eq(lit("MED BOX"))),
      )
      .join(t(f, "lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" });
    const small = lines.groupBy("p_partkey").agg(c("l_quantity").mean().mul(0.2).alias("avg_quantity"));
    return lines
      .join(small, { on: "p_partkey" })
      .filter(c("l_quantity").lt(c("avg_quantity")))
      .select(c("l_extendedprice").sum().div(7.0).alias("avg_yearly"));
  },

  // Q18
  (f) => {
    const big = t(f, "lineitem")
      .groupBy("l_orderkey")
      .agg(c("l_quantity").sum().alias("sum_quantity"))
      .filter(c("sum_quantity").gt(300));
    return t(f, "orders")
      .join(big, { leftOn: "o_orderkey", rightOn: "l_orderkey", how: "semi" })
      .join(t(f, "lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
      .join(t(f, "customer"), { leftOn: "o_custkey", rightOn: "c_custkey" })
      .groupBy(["c_name", "o_custkey", "o_orderkey", "o_orderdate", "o_totalprice"])
      .agg(c("l_quantity").sum().alias("sum_quantity"))
      .select(
        c("c_name"),
        c("o_custkey").alias("c_custkey"),
        c("o_orderkey"),
        c("o_orderdate"),
        c("o_totalprice"),
        c("sum_quantity"),
      )
      .sort(["o_totalprice", "o_orderdate"], [true, false])
      .head(100);
  },

  // Q19
  (f) => {
    const branch = (brand: string, containers: string[], qty: number, size: number) =>
      c("p_brand")
        .eq(lit(brand))
        .and(c("p_container").isIn(containers))
        .and(between(c("l_quantity"), qty, qty + 10))
        .and(between(c("p_size"), 1, size));
    return t(f, "lineitem")
      .join(t(f, "part"), { leftOn: "l_partkey", rightOn: "p_partkey" })
      .filter(
        c("l_shipmode")
          .isIn(["AIR", "AIR REG"])
          .and(c("l_shipinstruct").eq(lit("DELIVER IN PERSON")))
          .and(
            branch("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
              .or(branch("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10))
              .or(branch("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)),
          ),
      )
      .select(revenue().sum().alias("revenue"));
  },

  // Q20
  (f) => {
    const shipped = t(f, "lineitem")
      .filter(within(c("l_shipdate"), "1994-01-01", "1995-01-01"))
      .groupBy(["l_partkey", "l_suppkey"])
      .agg(c("l_quantity").sum().mul(0.5).alias("sum_quantity"));
    const forest = t(f, "part").filter(c("p_name").str.startsWith("forest")).select("p_partkey");
    const stocked = t(f, "partsupp")
      .join(forest, { leftOn: "ps_partkey", rightOn: "p_partkey", how: "semi" })
      .join(shipped, { leftOn: ["ps_partkey", "ps_suppkey"], rightOn: ["l_partkey", "l_suppkey"] })
      .filter(c("ps_availqty").gt(c("sum_quantity")))
      .select("ps_suppkey");
    return t(f, "nation")
      .filter(c("n_name").eq(lit("CANADA")))
      .join(t(f, "supplier"), { leftOn: "n_nationkey", rightOn: "s_nationkey" })
      .join(stocked, { leftOn: "s_suppkey", rightOn: "ps_suppkey", how: "semi" })
      .select("s_name", "s_address")
      .sort("s_name");
  },

  // Q21
  (f) => {
    const lineitem = t(f, "lineitem");
    const late = lineitem.filter(c("l_receiptdate").gt(c("l_commitdate")));
    const manySuppliers = lineitem.groupBy("l_orderkey").agg(c("l_suppkey").nUnique().alias("n")).filter(c("n").gt(1));
    const oneLateSupplier = late.groupBy("l_orderkey").agg(c("l_suppkey").nUnique().alias("n")).filter(c("n").eq(1));
    const saudi = t(f, "nation")
      .filter(c("n_name").eq(lit("SAUDI ARABIA")))
      .join(t(f, "supplier"), { leftOn: "n_nationkey", rightOn: "s_nationkey" });
    return late
      .join(manySuppliers, { on: "l_orderkey", how: "semi" })
      .join(oneLateSupplier, { on: "l_orderkey", how: "semi" })
      .join(saudi, { leftOn: "l_suppkey", rightOn: "s_suppkey" })
      .join(t(f, "orders").filter(c("o_orderstatus").eq(lit("F"))), { leftOn: "l_orderkey", rightOn: "o_orderkey" })
      .groupBy("s_name")
      .agg(pl.len().alias("numwait"))
      .sort(["numwait", "s_name"], [true, false])
      .head(100);
  },

  // Q22
  (f) => {
    const codes = ["13", "31", "23", "29", "30", "18", "17"];
    const customers = t(f, "customer")
      .withColumns(c("c_phone").str.slice(0, 2).alias("cntrycode"))
      .filter(c("cntrycode").isIn(codes));
    const average = customers.filter(c("c_acctbal").gt(0)).select(c("c_acctbal").mean().alias("avg_acctbal"));
    return customers
      .join(t(f, "orders"), { leftOn: "c_custkey", rightOn: "o_custkey", how: "anti" })
      .join(average, { how: "cross" })
      .filter(c("c_acctbal").gt(c("avg_acctbal")))
      .groupBy("cntrycode")
      .agg(pl.len().alias("numcust"), c("c_acctbal").sum().alias("totacctbal"))
      .sort("cntrycode");
  },
];
