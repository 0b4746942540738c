// str.contains with patterns that are literal text joined by `.*` (anchored or not):
// the native engine matches them by substring search, not std::regex. The answers
// must be the regex's exactly, line terminators (which `.` does not cross) included:
// the oracle is the same pattern in a group, which only std::regex runs, and
// JavaScript's RegExp where the two agree (strings without U+2028, which JavaScript
// counts as a line terminator and std::regex, matching bytes, does not).
import { expect, it } from "vitest";
import { col, fromColumns } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";

const ALPHABET = ["a", "b", "ab", "ba", ".", "x", "\n", "\r", "\u2028", "é", "東", "$", "^", " "];
const PATTERNS = [
  "ab",
  "a.*b",
  "^ab",
  "b$",
  "^a.*b$",
  "^ab$",
  "a\\.b",
  "\\.",
  "\\$",
  ".*",
  "^$",
  "^.*$",
  "a.*",
  ".*b",
  "^.*b",
  "a.*$",
  "ab.*b.*a$",
  "^ba.*a.*b",
  "é.*東",
  "^",
  "$",
  "",
  "x.*x.*x",
  "a\\^",
];

it("literal-and-.* patterns match exactly as a regular expression does", async () => {
  const r = seededRandom(5);
  const s: (string | null)[] = [];
  for (let i = 0; i < 4000; i++) {
    if (r() < 0.05) {
      s.push(null);
      continue;
    }
    const n = Math.floor(r() * 9);
    let v = "";
    for (let k = 0; k < n; k++) v += ALPHABET[Math.floor(r() * ALPHABET.length)];
    s.push(v);
  }
  const t = fromColumns({ s }, { partitions: [0, 1, 1500, 0, 2499], types: { s: "string" } });
  const got = await t
    .select(
      ...PATTERNS.map((p, i) => col("s").str.contains(p).alias(`p${i}`)),
      ...PATTERNS.map((p, i) => col("s").str.contains(`(?:${p})`).alias(`r${i}`)),
    )
    .compute();
  const rows = got.toRows();
  let matched = 0;
  PATTERNS.forEach((p, i) => {
    const have = rows.map((row) => row[`p${i}`]);
    const regex = rows.map((row) => row[`r${i}`]);
    expect(have, `pattern ${JSON.stringify(p)} against std::regex`).toEqual(regex);
    const re = new RegExp(p);
    const plain = s.map((v, k) => (v === null || v.includes("\u2028") ? undefined : [have[k], re.test(v)]));
    for (const pair of plain) if (pair) expect(pair[0], `pattern ${JSON.stringify(p)} against RegExp`).toBe(pair[1]);
    matched += have.filter((x) => x === true).length;
  });
  // The data exercises both answers of most patterns.
  expect(matched).toBeGreaterThan(PATTERNS.length * 200);
});
