// The disk tier's file format: a table's columns as raw buffers behind a small
// header (little-endian, this machine only; files never outlive the process that
// wrote them). Errors are BASIN_SPILL naming the file.
#pragma once
#include <string>

#include "column.h"

namespace basin {

// Writes `t` to `path`, returning the bytes written; on failure (disk full, no
// permission) removes the partial file and throws BASIN_SPILL.
int64_t WriteSpillFile(const std::string& path, const Table& t);
TablePtr ReadSpillFile(const std::string& path);
// The bytes a table holds in memory, each buffer counted once.
int64_t TableBytes(const Table& t);

}  // namespace basin
