// The disk tier's file format: a table's columns as buffers behind a small header
// (little-endian, this machine only; files never outlive the process that wrote
// them), each buffer in 1 MiB chunks compressed with lz4 or zstd (a chunk that does
// not shrink is stored as it is). Errors are BASIN_SPILL naming the file.
#pragma once
#include <cstdint>
#include <string>

#include "column.h"

namespace basin {

enum class SpillCodec : uint8_t { None = 0, Lz4 = 1, Zstd = 2 };
const char* SpillCodecName(SpillCodec c);
SpillCodec SpillCodecFromName(const std::string& name);  // throws BASIN_PLAN on an unknown name

// Writes `t` to `path`, returning the bytes written; on failure (disk full, no
// permission) removes the partial file and throws BASIN_SPILL.
int64_t WriteSpillFile(const std::string& path, const Table& t, SpillCodec codec = SpillCodec::Lz4);
TablePtr ReadSpillFile(const std::string& path);
// The bytes a table holds in memory, each buffer counted once.
int64_t TableBytes(const Table& t);

}  // namespace basin
