// Arrow IPC output: record batch messages (continuation, metadata, body) of a table's
// rows, as apache-arrow writes them for Basin's types: int64, float64 (double), bool
// (bitmap), Utf8 (int32 offsets), date32 (days), timestamp[us]; validity bitmaps only
// where a batch has nulls. A result written as one file is encoded a part per worker
// into the part sink (csv_write.h PartSink); the schema message and the footer are
// written around them (engine/io/write.ts writeArrowParts). A folder output's part is a
// whole Arrow IPC file of its own (WriteArrowFile). The values and string bytes go to
// the file straight from the table's buffers (Gather), never copied into a message.
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
void WriteArrowPart(PartSink& sink, int64_t part, const TablePtr& t, int64_t rowsPerBatch);

// `t` as a whole Arrow IPC file at `path` (created, must not exist): magic, schema,
// the record batches of WriteArrowPart, end of stream, footer. Returns the bytes
// written; throws BASIN_IO naming the file (and removes it) on failure.
int64_t WriteArrowFile(const std::string& path, const TablePtr& t, int64_t rowsPerBatch);

}  // namespace basin
