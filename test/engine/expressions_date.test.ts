// Date and timestamp functions (dt.*) and strptime parsing against DuckDB, on dates
// and timestamps before and after 1970 (floor division), with nulls.
import { col, lit } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import { describeExprCases } from "../helpers/expr_cases.js";

const ROWS = 1500;
const DAY = 86_400_000;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const r = seededRandom(23);
const pad = (v: number, n = 2) => String(v).padStart(n, "0");
const cols = {
  id: [] as number[],
  d: [] as (Date | null)[],
  ts: [] as (Date | null)[],
  ts2: [] as (Date | null)[],
  a: [] as (string | null)[],
  b: [] as (string | null)[],
  c: [] as (string | null)[],
  j: [] as (string | null)[],
  e: [] as (string | null)[],
};
for (let i = 0; i < ROWS; i++) {
  const day = Math.floor(r() * 33_000) - 7_000; // 1950 .. 2060
  const ms = day * DAY + Math.floor(r() * DAY);
  const date = new Date(day * DAY);
  const ts = new Date(ms);
  const iso = ts.toISOString();
  cols.id.push(i);
  cols.d.push(r() < 0.1 ? null : date);
  cols.ts.push(r() < 0.1 ? null : ts);
  cols.ts2.push(r() < 0.1 ? null : new Date(ms + Math.floor((r() - 0.5) * 10 * DAY)));
  const y = date.getUTCFullYear(),
    m = date.getUTCMonth() + 1,
    dd = date.getUTCDate();
  cols.a.push(r() < 0.1 ? null : r() < 0.5 ? `${pad(dd)}/${pad(m)}/${y}` : `${dd}/${m}/${y}`);
  cols.b.push(r() < 0.1 ? null : `${iso.slice(0, 10)} ${iso.slice(11, 23)}`);
  cols.c.push(
    y < 1969 || y > 2068
      ? null
      : `${pad(dd)} ${r() < 0.5 ? MONTHS[m - 1] : MONTHS[m - 1].toUpperCase()} ${pad(y % 100)}`,
  );
  const jan1 = Date.UTC(y, 0, 1);
  cols.j.push(`${y} ${pad((day * DAY - jan1) / DAY + 1, 3)}`);
  cols.e.push(r() < 0.2 ? ["2024-13-01", "x", "2023-02-29", ""][Math.floor(r() * 4)] : iso.slice(0, 10));
}
const types = {
  id: "int64",
  d: "date",
  ts: "timestamp",
  ts2: "timestamp",
  a: "string",
  b: "string",
  c: "string",
  j: "string",
  e: "string",
} as const;

describeExprCases("date and timestamp functions", cols, types, [
  {
    name: "a JS Date is a timestamp value: compared with timestamps, and a literal",
    basin: (t) =>
      t.filter(col("ts").ge(new Date(Date.UTC(2000, 0, 1, 12, 30, 0, 250)))).select(
        "id",
        col("ts2")
          .lt(new Date(Date.UTC(2010, 5, 1)))
          .alias("before"),
        lit(new Date(0)).alias("epoch"),
      ),
    sql: `SELECT id, ts2 < TIMESTAMP '2010-06-01', TIMESTAMP '1970-01-01' FROM t
          WHERE ts >= TIMESTAMP '2000-01-01 12:30:00.25'`,
  },
  {
    name: "calendar parts of dates",
    basin: (t) =>
      t.select(
        "id",
        col("d").dt.year().alias("y"),
        col("d").dt.month().alias("m"),
        col("d").dt.day().alias("dd"),
        col("d").dt.weekday().alias("w"),
        col("d").dt.hour().alias("h"),
      ),
    sql: "SELECT id, year(d), month(d), day(d), isodow(d), hour(d) FROM t",
  },
  {
    name: "calendar and clock parts of timestamps",
    basin: (t) =>
      t.select(
        "id",
        col("ts").dt.year().alias("y"),
        col("ts").dt.month().alias("m"),
        col("ts").dt.day().alias("dd"),
        col("ts").dt.weekday().alias("w"),
        col("ts").dt.hour().alias("h"),
        col("ts").dt.minute().alias("mi"),
        col("ts").dt.second().alias("s"),
      ),
    sql: "SELECT id, year(ts), month(ts), day(ts), isodow(ts), hour(ts), minute(ts), second(ts) FROM t",
  },
  {
    name: "floor timestamps like time_bucket",
    basin: (t) =>
      t.select(
        "id",
        col("ts").dt.floor("1h").alias("a"),
        col("ts").dt.floor("15m").alias("b"),
        col("ts").dt.floor("30s").alias("c"),
        col("ts").dt.floor("1d").alias("d1"),
        col("ts").dt.floor("7m").alias("e"),
        col("ts").dt.floor("3d").alias("f"),
      ),
    sql: `SELECT id, time_bucket(INTERVAL 1 HOUR, ts), time_bucket(INTERVAL 15 MINUTE, ts), time_bucket(INTERVAL 30 SECOND, ts), time_bucket(INTERVAL 1 DAY, ts),
            time_bucket(INTERVAL 7 MINUTE, ts), time_bucket(INTERVAL 3 DAY, ts) FROM t`,
  },
  {
    name: "floor dates by days stays a date",
    basin: (t) =>
      t.select(
        "id",
        col("d").dt.floor("1d").alias("a"),
        col("d").dt.floor("7d").alias("b"),
        col("d").dt.floor("1w").alias("c"),
      ),
    sql: "SELECT id, time_bucket(INTERVAL 1 DAY, d), time_bucket(INTERVAL 7 DAY, d), time_bucket(INTERVAL 7 DAY, d) FROM t",
  },
  {
    name: "offsetBy on timestamps and dates",
    basin: (t) =>
      t.select(
        "id",
        col("ts").dt.offsetBy("3d").alias("a"),
        col("ts").dt.offsetBy("-2h").alias("b"),
        col("ts").dt.offsetBy("90s").alias("c"),
        col("d").dt.offsetBy("3d").alias("e"),
        col("d").dt.offsetBy("-2h").alias("f"),
      ),
    sql: "SELECT id, ts + INTERVAL 3 DAY, ts - INTERVAL 2 HOUR, ts + INTERVAL 90 SECOND, d + 3, d - INTERVAL 2 HOUR FROM t",
  },
  {
    name: "diff counts unit boundaries like date_diff",
    basin: (t) =>
      t.select(
        "id",
        col("ts").dt.diff(col("ts2"), "day").alias("a"),
        col("ts").dt.diff(col("ts2"), "hour").alias("b"),
        col("ts").dt.diff(col("ts2"), "minute").alias("c"),
        col("ts").dt.diff(col("ts2"), "second").alias("s"),
        col("d").dt.diff(col("ts"), "hour").alias("e"),
        col("d").dt.diff("2024-01-01", "day").alias("f"),
      ),
    sql: `SELECT id, date_diff('day', ts2, ts), date_diff('hour', ts2, ts), date_diff('minute', ts2, ts), date_diff('second', ts2, ts),
            date_diff('hour', ts, d::TIMESTAMP), date_diff('day', DATE '2024-01-01', d) FROM t`,
  },
  {
    name: "toDate and toTimestamp with strptime formats",
    basin: (t) =>
      t.select(
        "id",
        col("a").str.toDate("%d/%m/%Y").alias("a"),
        col("b").str.toTimestamp("%Y-%m-%d %H:%M:%S.%f").alias("b"),
        col("c").str.toDate("%d %b %y").alias("c"),
        col("j").str.toDate("%Y %j").alias("j"),
        col("b").str.toDate("%Y-%m-%d %H:%M:%S.%f").alias("bd"),
      ),
    sql: `SELECT id, strptime(a, '%d/%m/%Y')::DATE, strptime(b, '%Y-%m-%d %H:%M:%S.%f'), strptime(c, '%d %b %y')::DATE, strptime(j, '%Y %j')::DATE,
            strptime(b, '%Y-%m-%d %H:%M:%S.%f')::DATE FROM t`,
  },
  {
    name: "toDate with strict false gives null for bad values",
    basin: (t) => t.select("id", col("e").str.toDate("%Y-%m-%d", { strict: false }).alias("a")),
    sql: "SELECT id, try_strptime(e, '%Y-%m-%d')::DATE FROM t",
  },
  {
    name: "microseconds survive parsing",
    basin: (t) =>
      t.select("id", col("b").str.toTimestamp("%Y-%m-%d %H:%M:%S.%f").dt.offsetBy("7us").cast("int64").alias("a")),
    sql: "SELECT id, epoch_us(strptime(b, '%Y-%m-%d %H:%M:%S.%f')) + 7 FROM t",
  },
  {
    name: "filter and group by date parts",
    basin: (t) =>
      t
        .filter(col("d").dt.year().ge(2000))
        .groupBy(col("d").dt.weekday().alias("w"))
        .agg(col("ts").dt.hour().mean().alias("h")),
    sql: "SELECT isodow(d) AS w, avg(hour(ts)) FROM t WHERE year(d) >= 2000 GROUP BY w",
  },
]);
