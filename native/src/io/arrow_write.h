// Arrow IPC output: record batch messages (continuation, metadata, body) of a table's
// rows, as apache-arrow writes them for Basin's types: int64, float64 (double), bool
// (bitmap), Utf8 (int32 offsets), date32 (days), timestamp[us]; validity bitmaps only
// where a batch has nulls. A result written as one file is encoded a part per worker
// into the part sink (csv_write.h PartSink); the schema message and the footer are
// written around them (engine/io/write.ts writeArrowParts).
#pragma once
#include <cstdint>
#include <string>

#include "io/csv_write.h"
#include "store/column.h"

namespace basin {

// Rows of `t` as record batches of at most `rowsPerBatch` rows, part `part` of the
// sink; the part's trailer holds each batch's block (offset in the part, metadata
// length, body length: three little-endian int64). A table without rows gives one
// empty batch.
void WriteArrowPart(PartSink& sink, int64_t part, const Table& t, int64_t rowsPerBatch);

}  // namespace basin
