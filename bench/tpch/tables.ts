// The TPC-H tables as lazy Parquet scans, from the folder in BASIN_TPCH_DIR
// (default .bench-data/tpch-sf1, as `npm run tpch:gen` writes it).
import { readParquet, type DataFrame } from "basin";

/** The folder the queries read from. */
export const TPCH_DIR = process.env.BASIN_TPCH_DIR ?? ".bench-data/tpch-sf1";

/** The eight TPC-H tables. */
export type TableName = "region" | "nation" | "supplier" | "customer" | "part" | "partsupp" | "orders" | "lineitem";

/**
 * One table, read lazily: only the columns and row groups a query uses are read.
 *
 * @example
 * const orders = table("orders");
 */
export function table(name: TableName): DataFrame {
  return readParquet(`${TPCH_DIR}/${name}.parquet`);
}
