// Regular expressions that are only literal text joined by `.*` (optionally anchored
// with ^ and $), matched with substring searches instead of std::regex: the shape of
// SQL's LIKE '%a%b%' and of most filters users write ("special.*requests", "ich$").
// std::regex backtracks per character and is 20-50x slower on such patterns.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace basin {

class LiteralPattern {
 public:
  /**
   * The pattern as pieces, or nothing when it uses any other regex feature.
   * Example: Parse("^ab.*c\\.d$") has pieces {"ab", "c.d"}, anchored at both ends.
   */
  static std::optional<LiteralPattern> Parse(std::string_view pattern) {
    LiteralPattern p;
    std::string piece;
    size_t i = 0;
    if (i < pattern.size() && pattern[i] == '^') p.start_ = true, i++;
    bool gap = false;  // a `.*` came before the current piece
    for (; i < pattern.size(); i++) {
      char c = pattern[i];
      if (c == '.' && i + 1 < pattern.size() && pattern[i + 1] == '*') {
        if (i + 2 < pattern.size() && (pattern[i + 2] == '?' || pattern[i + 2] == '+' || pattern[i + 2] == '*'))
          return std::nullopt;
        p.push(piece, gap);
        gap = true;
        i++;
      } else if (c == '$' && i + 1 == pattern.size()) {
        p.end_ = true;
      } else if (c == '\\') {
        // An escaped punctuation character is itself; \d, \b, \n etc. are not literal.
        if (i + 1 >= pattern.size()) return std::nullopt;
        char n = pattern[++i];
        if ((n >= '0' && n <= '9') || (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z') || static_cast<unsigned char>(n) >= 0x80)
          return std::nullopt;
        piece += n;
      } else if (std::string_view("^$.|?*+()[]{}").find(c) != std::string_view::npos) {
        return std::nullopt;
      } else {
        piece += c;
      }
    }
    // A trailing `.*` lets the match end anywhere, as if the pattern stopped before it.
    if (gap && piece.empty() && p.end_) p.end_ = false;
    p.push(piece, gap);
    return p;
  }

  // The pieces and anchors (the GPU kernel matches the patterns without `.*` itself).
  const std::vector<std::string>& pieces() const { return pieces_; }
  bool anchoredStart() const { return start_; }
  bool anchoredEnd() const { return end_; }
  bool hasGaps() const { return gaps_; }

  /**
   * Whether `s` matches, as std::regex_search would; nothing when only the regex can
   * say (`.` does not match \n or \r, so a string with one goes to it).
   */
  std::optional<bool> Matches(std::string_view s) const {
    if (gaps_ && HasLineTerminator(s)) return std::nullopt;
    if (pieces_.empty()) return !(start_ && end_ && !gaps_) || s.empty();
    size_t lo = 0, hi = pieces_.size(), pos = 0;
    if (firstFixed_) {
      if (s.compare(0, pieces_[0].size(), pieces_[0]) != 0) return false;
      if (hi == 1 && end_) return s.size() == pieces_[0].size();
      pos = pieces_[0].size();
      lo = 1;
    }
    if (end_) hi--;  // the last piece ends the string: checked after the others
    for (size_t k = lo; k < hi; k++) {
      size_t at = Find(s, pieces_[k], pos);
      if (at == std::string_view::npos) return false;
      pos = at + pieces_[k].size();
    }
    if (!end_) return true;
    const std::string& last = pieces_.back();
    return s.size() >= pos + last.size() && s.compare(s.size() - last.size(), last.size(), last) == 0;
  }

 private:
  void push(std::string& piece, bool gap) {
    if (gap) gaps_ = true;
    if (piece.empty()) return;
    if (pieces_.empty() && start_ && !gap) firstFixed_ = true;
    pieces_.push_back(piece);
    piece.clear();
  }

  // std::regex on bytes: `.` stops at \n and \r only (U+2028 is three bytes to it).
  // Two vectorised memchr scans (find_first_of tests each byte against the set).
  static bool HasLineTerminator(std::string_view s) {
    return !s.empty() && (std::memchr(s.data(), '\n', s.size()) || std::memchr(s.data(), '\r', s.size()));
  }

  // s.find(piece, from) by the C library's substring search (glibc's is vectorised;
  // string_view::find stops at every occurrence of the piece's first byte).
  static size_t Find(std::string_view s, const std::string& piece, size_t from) {
    if (from > s.size()) return std::string_view::npos;
#if defined(__GLIBC__) || defined(__APPLE__)
    const void* at = memmem(s.data() + from, s.size() - from, piece.data(), piece.size());
    return at ? size_t(static_cast<const char*>(at) - s.data()) : std::string_view::npos;
#else
    return s.find(piece, from);
#endif
  }

  std::vector<std::string> pieces_;
  bool start_ = false, end_ = false;
  bool gaps_ = false;        // some `.*` in the pattern
  bool firstFixed_ = false;  // the first piece sits at offset 0 (^ then text)
};

}  // namespace basin
