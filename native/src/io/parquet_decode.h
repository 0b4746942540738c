// Decodes flat Parquet column chunks straight into a store table: the pages'
// headers are walked (and checked) in TypeScript (engine/io/parquet_pages.ts), which
// hands over each page's body and counts; this file decompresses (Snappy, zstd where
// built), reads definition levels and PLAIN / dictionary values, and converts them to
// Basin's types. Everything it reads is bounds-checked: a page that contradicts its
// header is a BASIN_IO error, never a read past its bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/expr.h"
#include "store/column.h"

namespace basin {

// One page of a column chunk, as its header describes it.
struct ParquetPageIn {
  int type = 0;               // 0 DATA_PAGE, 2 DICTIONARY_PAGE, 3 DATA_PAGE_V2
  const uint8_t* body = nullptr;
  size_t size = 0;            // stored (possibly compressed) bytes
  int64_t raw = 0;            // uncompressed_page_size
  int64_t values = 0;         // values incl. nulls (data), entries (dictionary)
  int encoding = 0;           // the values' encoding
  int64_t levelBytes = 0;     // V2: repetition + definition level bytes (uncompressed)
  bool compressed = true;     // V2: whether the values section is compressed
  int group = 0;              // the row group it belongs to (for errors)
};

// One column: where its pages are and what Basin type to make of them.
struct ParquetColumnIn {
  std::string name;
  DType type = DType::Int64;
  int physical = 0;           // parquet.thrift Type
  bool optional = false;      // definition levels of bit width 1
  bool unsignedInt = false;   // INT32 read as unsigned
  int64_t timeMul = 1;        // timestamp: multiply by this (millis → micros) ...
  int64_t timeDiv = 1;        // ... or floor-divide by this (nanos → micros)
  int codec = 0;              // parquet.thrift CompressionCodec
  std::vector<ParquetPageIn> pages;  // every chunk's pages, in row order
};

// The columns as one table of `rows` rows; `path` names the file in errors. With a
// predicate (an expression over these columns, by index), only the rows it holds for;
// with outputs, only those columns (by index, named outputNames), the others read for
// the predicate alone and never cut.
TablePtr DecodeParquet(const std::vector<ParquetColumnIn>& columns, int64_t rows, const std::string& path,
                       const Expr* predicate = nullptr, const std::vector<int>* outputs = nullptr,
                       const std::vector<std::string>* outputNames = nullptr);

// Whether this build decodes `codec` (0 UNCOMPRESSED, 1 SNAPPY, 6 ZSTD when built with zstd).
bool ParquetCodecSupported(int codec);

}  // namespace basin
