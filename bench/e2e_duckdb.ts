/**
 * DuckDB's side of the e2e suite (bench/e2e.ts), run as a fresh process:
 * `node dist/bench/e2e_duckdb.js "<COPY statement>"`.
 */
import { DuckDBInstance } from "@duckdb/node-api";

const statement = process.argv[2];
if (!statement) throw new Error("usage: e2e_duckdb.js <sql>");
const conn = await (await DuckDBInstance.create(":memory:")).connect();
await conn.run(statement);
conn.closeSync();
