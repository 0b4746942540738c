// String functions (str.*, concatStr) over UTF-8 columns. Lengths and positions
// count code points; case mapping covers ASCII, Latin-1, Latin Extended-A, Greek and
// Cyrillic (the letters DuckDB and Polars agree on); regexes are std::regex ECMAScript,
// compiled once per evaluation and matched on bytes (literal text joined by `.*` by
// substring search, ops/literal_pattern.h).
#include <regex>

#include "ops/case_map.h"
#include "ops/expr_fn.h"
#include "ops/literal_pattern.h"

namespace basin {
namespace {

bool IsAscii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

int64_t CharCount(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += !IsContinuation(c);
  return n;
}

// Byte offset where character `k` starts (s.size() when k is the count).
size_t ByteOffset(std::string_view s, int64_t k) {
  size_t i = 0;
  for (; i < s.size(); i++)
    if (!IsContinuation(static_cast<unsigned char>(s[i])) && k-- == 0) return i;
  return s.size();
}

// Decodes one code point at p (advancing p); a malformed byte decodes as itself.
uint32_t Decode(const char*& p, const char* end) {
  unsigned char c = static_cast<unsigned char>(*p++);
  int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  if (extra == 0 || end - p < extra) return c;
  uint32_t cp = c & (0x3F >> extra);
  for (int i = 0; i < extra; i++) cp = (cp << 6) | (static_cast<unsigned char>(*p++) & 0x3F);
  return cp;
}

void Encode(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

template <typename F>
Column MapStrings(const Operand& a, int64_t rows, DType type, F f) {
  ColumnBuilder b(type, rows);
  for (int64_t i = 0; i < rows; i++) {
    if (!a.valid(i)) b.appendNull();
    else f(a.s(i), b);
  }
  return b.finish();
}

Column CaseMap(const Operand& a, int64_t rows, bool upper) {
  std::string buf;
  return MapStrings(a, rows, DType::String, [&](std::string_view s, ColumnBuilder& b) {
    buf.clear();
    if (IsAscii(s)) {
      buf.assign(s);
      for (char& c : buf) c = char(upper ? ToUpper(uint32_t(c)) : ToLower(uint32_t(c)));
    } else {
      const char *p = s.data(), *end = p + s.size();
      while (p < end) {
        uint32_t cp = Decode(p, end);
        Encode(upper ? ToUpper(cp) : ToLower(cp), buf);
      }
    }
    b.appendString(buf);
  });
}

std::string_view Strip(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) b++;
  while (e > b && IsSpace(s[e - 1])) e--;
  return s.substr(b, e - b);
}

// DuckDB substring semantics with a 0-based start: the window [start, start+length)
// (negative start counts from the end) clipped to the string.
std::string_view Slice(std::string_view s, int64_t start, int64_t length, bool toEnd) {
  const bool ascii = IsAscii(s);
  const int64_t n = ascii ? int64_t(s.size()) : CharCount(s);
  int64_t from = start >= 0 ? start : n + start;
  int64_t to = toEnd ? n : from + length;
  from = std::max<int64_t>(0, std::min(from, n));
  to = std::max<int64_t>(from, std::min(to, n));
  if (ascii) return s.substr(size_t(from), size_t(to - from));
  size_t b = ByteOffset(s, from), e = ByteOffset(s, to);
  return s.substr(b, e - b);
}

// Part `index` of s split at sep (negative counts from the end); false when absent.
bool SplitPart(std::string_view s, std::string_view sep, int64_t index, std::string_view* out) {
  std::vector<std::string_view> parts;
  if (sep.empty()) {
    for (size_t i = 0; i < s.size();) {
      size_t j = i + 1;
      while (j < s.size() && IsContinuation(static_cast<unsigned char>(s[j]))) j++;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
  } else {
    size_t pos = 0;
    for (;;) {
      size_t next = s.find(sep, pos);
      if (next == std::string_view::npos) break;
      parts.push_back(s.substr(pos, next - pos));
      if (index >= 0 && int64_t(parts.size()) > index) break;
      pos = next + sep.size();
    }
    if (index < 0 || int64_t(parts.size()) <= index) parts.push_back(s.substr(pos));
  }
  int64_t k = index >= 0 ? index : int64_t(parts.size()) + index;
  if (k < 0 || k >= int64_t(parts.size())) return false;
  *out = parts[size_t(k)];
  return true;
}

std::regex Compile(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& err) {
    // resolve_fn.ts checks patterns first; this is the fallback for a hand-made plan.
    throw BasinError("BASIN_PLAN", "the regular expression \"" + pattern + "\" does not compile: " + err.what());
  }
}

Column Contains(const Expr& e, const Operand& a, int64_t rows) {
  const std::string& pattern = OptStr(e, "pattern");
  if (OptBool(e, "literal"))
    return MapStrings(a, rows, DType::Bool, [&](std::string_view s, ColumnBuilder& b) { b.appendBool(s.find(pattern) != std::string_view::npos); });
  std::regex re = Compile(pattern);
  if (auto literal = LiteralPattern::Parse(pattern))
    return MapStrings(a, rows, DType::Bool, [&](std::string_view s, ColumnBuilder& b) {
      std::optional<bool> m = literal->Matches(s);
      b.appendBool(m ? *m : std::regex_search(s.begin(), s.end(), re));
    });
  return MapStrings(a, rows, DType::Bool, [&](std::string_view s, ColumnBuilder& b) { b.appendBool(std::regex_search(s.begin(), s.end(), re)); });
}

Column Replace(const Expr& e, const Operand& a, int64_t rows) {
  const std::string& pattern = OptStr(e, "pattern");
  const std::string& with = OptStr(e, "with");
  const bool all = OptBool(e, "all");
  std::string buf;
  if (OptBool(e, "literal")) {
    return MapStrings(a, rows, DType::String, [&](std::string_view s, ColumnBuilder& b) {
      if (pattern.empty()) return b.appendString(s);
      buf.clear();
      size_t pos = 0;
      for (size_t at; (at = s.find(pattern, pos)) != std::string_view::npos;) {
        buf.append(s.substr(pos, at - pos)).append(with);
        pos = at + pattern.size();
        if (!all) break;
      }
      buf.append(s.substr(pos));
      b.appendString(buf);
    });
  }
  std::regex re = Compile(pattern);
  return MapStrings(a, rows, DType::String, [&](std::string_view s, ColumnBuilder& b) {
    // As std::regex_replace, but as DuckDB (RE2) matches: an empty match inside a
    // character's UTF-8 bytes (the regex runs on bytes) or right after a match is no
    // match, so "x*" turns "é" into "-é-" and "x,y" into "-,-y-".
    buf.clear();
    size_t done = 0;
    bool matched = false;
    using It = std::regex_iterator<std::string_view::const_iterator>;
    for (It m(s.begin(), s.end(), re), end; m != end; ++m) {
      const size_t at = size_t(m->position(0));
      if (m->length(0) == 0 && ((matched && at == done) || (at < s.size() && (uint8_t(s[at]) & 0xC0) == 0x80)))
        continue;
      matched = true;
      buf.append(s.substr(done, at - done));
      m->format(std::back_inserter(buf), with);
      done = at + size_t(m->length(0));
      if (!all) break;
    }
    buf.append(s.substr(done));
    b.appendString(buf);
  });
}

Column ConcatStrings(const std::vector<Operand>& args, int64_t rows) {
  ColumnBuilder b(DType::String, rows);
  std::string buf;
  for (int64_t i = 0; i < rows; i++) {
    buf.clear();
    bool null = false;
    for (const auto& a : args) {
      if (!a.valid(i)) {
        null = true;
        break;
      }
      buf.append(a.s(i));
    }
    if (null) b.appendNull();
    else b.appendString(buf);
  }
  return b.finish();
}

}  // namespace

std::string RegexError(const std::string& pattern) {
  try {
    std::regex re(pattern, std::regex::ECMAScript);
    return "";
  } catch (const std::regex_error& err) {
    return err.what();
  }
}

std::optional<Column> StringFn(const Expr& e, const std::vector<Operand>& args, int64_t rows) {
  const std::string& name = e.op;
  if (name == "concatStr") return ConcatStrings(args, rows);
  if (name.rfind("str.", 0) != 0) return std::nullopt;
  const Operand& a = args[0];
  if (name == "str.len")
    return MapStrings(a, rows, DType::Int64, [](std::string_view s, ColumnBuilder& b) { b.appendInt(CharCount(s)); });
  if (name == "str.lower") return CaseMap(a, rows, false);
  if (name == "str.upper") return CaseMap(a, rows, true);
  if (name == "str.strip")
    return MapStrings(a, rows, DType::String, [](std::string_view s, ColumnBuilder& b) { b.appendString(Strip(s)); });
  if (name == "str.contains") return Contains(e, a, rows);
  if (name == "str.startsWith" || name == "str.endsWith") {
    const std::string& p = OptStr(e, "pattern");
    const bool start = name == "str.startsWith";
    return MapStrings(a, rows, DType::Bool, [&](std::string_view s, ColumnBuilder& b) {
      bool fits = s.size() >= p.size();
      b.appendBool(fits && (start ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0));
    });
  }
  if (name == "str.replace") return Replace(e, a, rows);
  if (name == "str.slice") {
    const int64_t start = OptInt(e, "start");
    const FnOption& len = Opt(e, "length");
    const bool toEnd = len.kind == FnOption::Kind::Null;
    const int64_t length = toEnd ? 0 : int64_t(len.num);
    return MapStrings(a, rows, DType::String, [&](std::string_view s, ColumnBuilder& b) { b.appendString(Slice(s, start, length, toEnd)); });
  }
  if (name == "str.split") {
    const std::string& sep = OptStr(e, "sep");
    const int64_t index = OptInt(e, "index");
    return MapStrings(a, rows, DType::String, [&](std::string_view s, ColumnBuilder& b) {
      std::string_view part;
      if (SplitPart(s, sep, index, &part)) b.appendString(part);
      else b.appendNull();
    });
  }
  return std::nullopt;  // str.toDate / str.toTimestamp: the date family's
}

}  // namespace basin
