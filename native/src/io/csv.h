// CSV kernel: block splitting, type inference, and parsing a byte range into a Table.
// RFC 4180 quoting; no N-API here (see bind/csv_api.cc for the bindings).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "store/column.h"

namespace basin {

// How bytes become text: UTF-8 checked (an invalid byte is an error at its line and
// column), Latin-1 transcoded, or UTF-8 with invalid sequences replaced by U+FFFD.
enum class CsvEncoding : uint8_t { Utf8, Latin1, Replace };

struct CsvOptions {
  char delimiter = ',';
  CsvEncoding encoding = CsvEncoding::Utf8;
  bool header = true;
  std::vector<std::string> nullValues{""};
};

struct CsvBlock {
  int64_t start = 0, end = 0;
  int64_t line = 1;  // 1-based physical line number at `start`
};

struct CsvSchema {
  std::vector<std::string> names;
  std::vector<DType> types;
  // Whether the sample held a value (not null) of the column: a type without one is a guess.
  std::vector<bool> seen;
};

struct CsvScanOptions : CsvOptions {
  std::vector<std::string> names;  // every column of the file, in file order
  std::vector<DType> types;
  std::vector<int> columns;        // file column indices to materialize, in output order
  int64_t line = 1;                // 1-based line number at `start`
  bool skipBadLines = false;       // onBadLines: "skip"
};

struct CsvScanResult {
  TablePtr table;
  int64_t rows = 0;
  int64_t skipped = 0;
};

// Blocks [start, end) covering the whole file, each starting on a row boundary and at
// least `blocksize` bytes long except the last. An empty file gives one empty block.
std::vector<CsvBlock> CsvSplit(const std::string& path, int64_t blocksize, const CsvOptions& opts);

// Column names (header or column_<i>) and types inferred over the first `sampleBytes`.
CsvSchema CsvInfer(const std::string& path, const CsvOptions& opts, int64_t sampleBytes);

// Parses the rows in bytes [start, end) of the file.
CsvScanResult CsvScan(const std::string& path, int64_t start, int64_t end, const CsvScanOptions& opts);

// Value parsers (exposed for reuse and tests). Each returns false when `s` does not parse.
bool CsvParseInt64(const char* b, const char* e, int64_t* out);
bool CsvParseFloat64(const char* b, const char* e, double* out);
bool CsvParseDate(const char* b, const char* e, int32_t* days);
// `allowDateOnly`: "YYYY-MM-DD" alone reads as midnight.
bool CsvParseTimestamp(const char* b, const char* e, bool allowDateOnly, int64_t* micros);
// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12, day 1-31, not checked).
int64_t CsvDaysFromCivil(int64_t y, unsigned m, unsigned d);

}  // namespace basin
