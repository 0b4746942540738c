// The demo pipeline: tips by payment type and borough over taxi-like trips.
// `basin demo` generates the data and points BASIN_DEMO_DATA at it.
import { readCsv, col, count } from "basin";

const dir = process.env.BASIN_DEMO_DATA ?? "demo-data";
const trips = readCsv(`${dir}/trips-*.csv`, { blocksize: "8MB", parseDates: ["tpep_pickup_datetime"] });

export default trips
  .filter(col("fare_amount").gt(0).and(col("passenger_count").isNotNull()))
  .withColumns({ tip_fraction: col("tip_amount").div(col("fare_amount")) })
  .groupBy("payment_type", "pickup_borough")
  .agg(
    count().alias("trips"),
    col("tip_fraction").mean().alias("mean_tip_fraction"),
    col("fare_amount").median().alias("median_fare"),
    col("trip_distance").sum().alias("total_miles"),
  );
