// UTF-8 checks and repairs for text that comes from files: strings in the store are
// always valid UTF-8 (kernels such as str.upper decode them), so readers check what
// they are given, or transcode it when the user names another encoding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace basin {

// The offset of the first byte that does not start a valid UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF), or `n` when all are valid.
size_t FirstInvalidUtf8(const uint8_t* p, size_t n);

// Latin-1 (ISO 8859-1) bytes as UTF-8: each byte is the code point of the same value.
std::string Latin1ToUtf8(const char* p, size_t n);

// The bytes with every invalid UTF-8 sequence replaced by U+FFFD.
std::string ReplaceInvalidUtf8(const char* p, size_t n);

}  // namespace basin
