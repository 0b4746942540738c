// Parquet output: a table as a complete Parquet file in memory (format 1, data pages
// v1, RLE/bit-packed definition levels, every column OPTIONAL). A column chunk is
// dictionary-encoded (a PLAIN dictionary page, then RLE_DICTIONARY data pages) where
// that pays, else PLAIN: nearly unique values, or a dictionary over 8 MiB, fall back to
// PLAIN for the chunk, as Arrow and DuckDB do; booleans are always PLAIN. Snappy-,
// zstd- (where the build has zstd) or un-compressed. Types: int64 → INT64, float64 →
// DOUBLE, bool → BOOLEAN, string → BYTE_ARRAY (STRING), date → INT32 (DATE), timestamp →
// INT64 (TIMESTAMP micros, not adjusted to UTC: what the Arrow writer wrote before).
// Column chunks carry null counts, and min/max for the integer-like types.
//
// A result written as one file is encoded a part per worker: each part's file minus its
// leading magic and its footer goes into the part sink (csv_write.h PartSink), and the
// footers are merged at the end (engine/io/parquet_merge.ts) with offsets shifted.
#pragma once
#include <cstdint>
#include <string>

#include "store/column.h"

namespace basin {

enum class ParquetCodec : int { Uncompressed = 0, Snappy = 1, Zstd = 6 };  // Parquet's CompressionCodec numbers

// Throws BASIN_PLAN for an unknown name, or zstd where the build lacks it.
ParquetCodec ParquetCodecFromName(const std::string& name);
bool ParquetZstdAvailable();

// The whole file: "PAR1", row groups of at most `rowGroupSize` rows, footer, length, "PAR1".
std::string EncodeParquetFile(const Table& t, ParquetCodec codec, int64_t rowGroupSize);

// Snappy's raw format (for tests and the writer).
std::string SnappyCompress(const uint8_t* src, size_t n);

}  // namespace basin
