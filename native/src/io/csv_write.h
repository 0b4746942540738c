// CSV output: a table's rows as RFC 4180 text, formatted exactly as the TypeScript
// writer did (engine/io/write.ts csvLines, kept as the reference): numbers as JS's
// Number#toString (shortest round-trip digits), dates and timestamps in ISO form,
// null as an empty field, the empty string as "".
//
// PartSink assembles a file from parts formatted on any thread, in part order: each
// part arrives in pieces (appendPart); the thread whose piece completes the next
// run writes it (pwrite at the running offset) while others go on formatting, so the
// file is written as it is made. Pieces of parts ahead of their turn wait in the store
// (a one-row table each): they count against the memory limit like any table and
// spill to disk under it, and are read back when their turn comes.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/column.h"

namespace basin {

// Bytes to write made of the writer's own bytes and views of a table's buffers (kept
// alive by `keep`), in order: written with pwritev, never copied into one message.
struct Gather {
  struct Segment {
    const uint8_t* view;  // null: own[at, at + length)
    size_t at, length;
  };
  std::string own;
  std::vector<Segment> segments;
  TablePtr keep;
  size_t size = 0;
  void addOwn(const void* p, size_t n) {
    segments.push_back({nullptr, own.size(), n});
    own.append(static_cast<const char*>(p), n);
    size += n;
  }
  void addView(const void* p, size_t n) {
    segments.push_back({static_cast<const uint8_t*>(p), 0, n});
    size += n;
  }
  // Every segment's bytes, in order, copied to `out` (`size` bytes).
  void copyTo(uint8_t* out) const;
};
// Writes all of `g` at `offset`; returns 0 or the errno.
int WriteGatherAt(int fd, const Gather& g, int64_t offset);
// An errno as the reason a write failed ("no space left on the device").
std::string IoWhy(int err);

// Rows [from, to) of `t` as CSV lines appended to `out` (no header).
void FormatCsvRows(const Table& t, int64_t from, int64_t to, std::string& out);
// One double as JS's String(x) writes it ("NaN", "Infinity", "1e+21", "0" for -0).
void FormatJsNumber(double x, std::string& out);

class PartSink {
 public:
  // Writes to `fd` from byte `offset` on; owns the fd and closes it when the last
  // thread holding the sink lets go (a task still writing when the sink is closed
  // never writes into a reused descriptor).
  PartSink(int fd, int64_t offset) : fd_(fd), offset_(offset) { starts_[0] = offset; }
  ~PartSink();
  PartSink(const PartSink&) = delete;
  PartSink& operator=(const PartSink&) = delete;
  // Adds the next piece of part `part`; `last` marks its end. Throws BASIN_IO once a
  // write has failed (the failure's message), here or on another thread.
  void appendPart(int64_t part, std::string piece, bool last);
  // The same for a piece that views a table's buffers: written from them with pwritev
  // when its part's turn has come, copied into the store when it is ahead of its turn.
  void appendPart(int64_t part, Gather piece, bool last);
  struct Status {
    int64_t partsWritten, bytes, pendingBytes;
    std::string error;
  };
  Status status();
  // Bytes a part leaves for the end (a Parquet part's footer), kept until the writer asks.
  void setTrailer(int64_t part, std::string bytes);
  // Where each part written so far starts in the file, and its trailer (empty if none).
  std::vector<std::pair<int64_t, std::string>> trailers();

 private:
  // A piece waiting: its bytes, views of a table's (gather), or (a part ahead of its
  // turn) a store handle to them.
  struct Piece {
    std::string bytes;
    Gather gather;
    uint64_t stored = 0;
    int64_t size = 0;
  };
  void append(int64_t part, Piece piece, bool last);
  struct Pending {
    std::vector<Piece> pieces;
    bool done = false;
  };
  // With mu_ held: queues `piece` of `part`, then writes what is due unless another
  // thread is writing (it takes the piece when its turn comes).
  void add(int64_t part, Piece piece, bool last, std::unique_lock<std::mutex>& lock);
  void drain(std::unique_lock<std::mutex>& lock);
  // With mu_ held: fails the sink with `why`, dropping every piece still waiting.
  [[noreturn]] void fail(const std::string& why);
  void dropPending();
  int fd_;
  int64_t offset_;
  std::mutex mu_;
  std::map<int64_t, Pending> pending_;
  int64_t next_ = 0, written_ = 0, pendingBytes_ = 0;
  std::map<int64_t, int64_t> starts_;
  std::map<int64_t, std::string> trailers_;
  bool writing_ = false;
  std::string error_;
};

// Sinks by id, shared by every thread of the process (workers name them in steps).
int64_t OpenSink(int fd, int64_t offset);
std::shared_ptr<PartSink> GetSink(int64_t id);  // throws BASIN_IO on an unknown id
PartSink::Status CloseSink(int64_t id);

// Formats rows of `t` as CSV into part `part` of sink `sink`, in pieces of about 4 MiB.
void WriteCsvPart(PartSink& sink, int64_t part, const Table& t);
// Writes `t` as a whole CSV file at `path` (created, must not exist), with a header
// line when `header`; returns the bytes written. Throws BASIN_IO naming the file.
int64_t WriteCsvFile(const std::string& path, const Table& t, bool header);

}  // namespace basin
