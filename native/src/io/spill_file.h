// The disk tier's file format: Arrow IPC files (one schema, one record batch: int64,
// float64 (double), bool, large UTF-8 strings, date32 (days), timestamp[us]), with
// Arrow's buffer compression (lz4 frame or zstd, written and read in 1 MiB pieces so
// the scratch stays small) or none. Byte-per-row validity and bools become bitmaps on
// disk. Little-endian; files never outlive the process that wrote them. Errors are
// BASIN_SPILL naming the file.
#pragma once
#include <cstdint>
#include <string>

#include "store/column.h"

namespace basin {

enum class SpillCodec : uint8_t { None = 0, Lz4 = 1, Zstd = 2 };
const char* SpillCodecName(SpillCodec c);
SpillCodec SpillCodecFromName(const std::string& name);  // throws BASIN_PLAN on an unknown name or one this build lacks
bool SpillCodecAvailable(SpillCodec c);                   // lz4 and zstd only where the build found them
SpillCodec DefaultSpillCodec();                           // lz4, else zstd, else none: the best this build has

// Writes `t` to `path`, returning the bytes written; on failure (disk full, no
// permission) removes the partial file and throws BASIN_SPILL.
int64_t WriteSpillFile(const std::string& path, const Table& t, SpillCodec codec = DefaultSpillCodec());
TablePtr ReadSpillFile(const std::string& path);
// The bytes a table holds in memory, each buffer counted once.
int64_t TableBytes(const Table& t);

}  // namespace basin
