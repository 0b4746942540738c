// Taxi-like sample data for `basin demo`: a few CSV files, deterministic, with
// nulls, quoted fields and unicode, reused when already generated.
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { csvField } from "../common/csv_field.js";
import { seededRandom } from "../common/random.js";

const PAYMENTS = ["card", "cash", "no charge", "dispute"];
const BOROUGHS = ["Manhattan", "Brooklyn", "Queens", "Bronx", "Staten Island", "EWR", "Zürich, CH", "東京"];
const VERSION = "v1";

async function writeFile(path: string, rows: number, seed: number, onRows: (n: number) => void): Promise<void> {
  const rand = seededRandom(seed);
  const out = createWriteStream(path);
  const start = Date.UTC(2015, 0, 1);
  out.write(
    "vendor_id,tpep_pickup_datetime,passenger_count,trip_distance,payment_type,pickup_borough,fare_amount,tip_amount\n",
  );
  let chunk = "";
  for (let i = 0; i < rows; i++) {
    const t = new Date(start + Math.floor(rand() * 31 * 86_400_000)).toISOString().slice(0, 19);
    const passengers = rand() < 0.03 ? "" : String(1 + Math.floor(rand() * 4));
    const distance = (rand() * rand() * 20).toFixed(2);
    const payment = PAYMENTS[Math.min(3, Math.floor(rand() * rand() * 5))];
    const borough = BOROUGHS[Math.floor(rand() * rand() * BOROUGHS.length)];
    const fare = rand() < 0.01 ? (-rand() * 5).toFixed(2) : (2.5 + Number(distance) * 2.5 + rand() * 3).toFixed(2);
    const tip = payment === "card" ? (Number(fare) * rand() * 0.3).toFixed(2) : "0";
    chunk += `${1 + (i % 2)},${t},${passengers},${distance},${payment},${csvField(borough)},${fare},${tip}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
      chunk = "";
      onRows(i + 1);
    }
  }
  out.end(chunk);
  await new Promise((r, j) => out.on("finish", r).on("error", j));
  onRows(rows);
}

/**
 * Makes (or reuses) `files` CSV files of `rowsPerFile` trips in `dir`.
 *
 * @example
 * await generateDemoData("/tmp/basin-demo", 4, 250_000, (n) => {});
 */
export async function generateDemoData(
  dir: string,
  files: number,
  rowsPerFile: number,
  onRows: (total: number) => void,
): Promise<boolean> {
  const marker = join(dir, `.complete-${VERSION}-${files}x${rowsPerFile}`);
  if (existsSync(marker)) return false;
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < files; f++) {
    await writeFile(join(dir, `trips-${String(f + 1).padStart(2, "0")}.csv`), rowsPerFile, 1234 + f, (n) =>
      onRows(f * rowsPerFile + n),
    );
  }
  writeFileSync(marker, "");
  return true;
}
