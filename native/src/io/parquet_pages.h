// Checks of Parquet page bodies before parquet-wasm decodes them (it trusts them): a
// Snappy block must decompress to the size its page says, and a V1 data page of a
// flat column must hold the levels and values its header counts. The page headers
// themselves are walked in engine/io/parquet_pages.ts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace basin {

// What the TS walker knows of one page.
struct ParquetPage {
  int codec = 0;            // parquet.thrift CompressionCodec: 0 UNCOMPRESSED, 1 SNAPPY (others unchecked)
  int64_t raw = 0;          // uncompressed_page_size
  int64_t levels = 0;       // a V2 page's uncompressed level bytes in front of its values
  bool checkValues = false; // a V1 data page of a flat column: check its levels and values
  int64_t numValues = 0;
  int encoding = -1;        // the values' encoding
  int physical = -1;        // parquet.thrift Type
  bool optional = false;    // definition levels of bit width 1
  int64_t dictionary = 0;   // entries of the chunk's dictionary page
};

// Why the page body [b, b+n) contradicts `p`, or "" when it does not.
std::string DamagedParquetPage(const uint8_t* b, size_t n, const ParquetPage& p);

}  // namespace basin
