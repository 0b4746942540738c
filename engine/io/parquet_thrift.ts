// The shapes of the Parquet Thrift structs Basin and parquet-wasm read (parquet.thrift):
// each known field's wire type, and which are required. The compact protocol carries a
// type with every field, and readers differ on a field of the wrong type (DuckDB skips
// it, then misses a required one; the Rust reader takes an i64 for an i32): a damaged
// type byte would be read differently by each, so it is an error here.
import { T, type TStruct, type TValue } from "./thrift.js";

type Wire = "bool" | "i8" | "i16" | "i32" | "i64" | "binary" | "struct" | "list";

interface FieldShape {
  name: string;
  wire: Wire;
  required?: boolean;
  /** A struct's fields, or the fields of a list's struct elements. */
  shape?: () => Shape;
  /** A list's element type (struct when `shape` is given). */
  elem?: Wire;
}

/** Field id → what it must be. */
export type Shape = Record<number, FieldShape>;

const WIRE: Record<Wire, number[]> = {
  bool: [T.TRUE, T.FALSE],
  i8: [T.I8],
  i16: [T.I16],
  i32: [T.I32],
  i64: [T.I64],
  binary: [T.BINARY],
  struct: [T.STRUCT],
  list: [T.LIST],
};
const WIRE_NAME: Record<number, string> = {
  1: "bool",
  2: "bool",
  3: "i8",
  4: "i16",
  5: "i32",
  6: "i64",
  7: "double",
  8: "binary",
  9: "list",
  10: "set",
  11: "map",
  12: "struct",
};

const req = (name: string, wire: Wire, more: Partial<FieldShape> = {}): FieldShape => ({
  name,
  wire,
  required: true,
  ...more,
});
const opt = (name: string, wire: Wire, more: Partial<FieldShape> = {}): FieldShape => ({ name, wire, ...more });
const structList = (shape: () => Shape) => ({ elem: "struct" as const, shape });

const EMPTY: Shape = {};
const KEY_VALUE: Shape = { 1: req("key", "binary"), 2: opt("value", "binary") };
const STATISTICS: Shape = {
  1: opt("max", "binary"),
  2: opt("min", "binary"),
  3: opt("null_count", "i64"),
  4: opt("distinct_count", "i64"),
  5: opt("max_value", "binary"),
  6: opt("min_value", "binary"),
  7: opt("is_max_value_exact", "bool"),
  8: opt("is_min_value_exact", "bool"),
};
const TIME_UNIT: Shape = { 1: opt("MILLIS", "struct"), 2: opt("MICROS", "struct"), 3: opt("NANOS", "struct") };
const TIME: Shape = { 1: req("isAdjustedToUTC", "bool"), 2: req("unit", "struct", { shape: () => TIME_UNIT }) };
const LOGICAL_TYPE: Shape = {
  ...Object.fromEntries(
    [1, 2, 3, 4, 6, 11, 12, 13, 14, 15, 16, 17, 18].map((id) => [id, opt(`member ${id}`, "struct")]),
  ),
  5: opt("DECIMAL", "struct", { shape: () => ({ 1: req("scale", "i32"), 2: req("precision", "i32") }) }),
  7: opt("TIME", "struct", { shape: () => TIME }),
  8: opt("TIMESTAMP", "struct", { shape: () => TIME }),
  10: opt("INTEGER", "struct", { shape: () => ({ 1: req("bitWidth", "i8"), 2: req("isSigned", "bool") }) }),
};
const SCHEMA_ELEMENT: Shape = {
  1: opt("type", "i32"),
  2: opt("type_length", "i32"),
  3: opt("repetition_type", "i32"),
  4: req("name", "binary"),
  5: opt("num_children", "i32"),
  6: opt("converted_type", "i32"),
  7: opt("scale", "i32"),
  8: opt("precision", "i32"),
  9: opt("field_id", "i32"),
  10: opt("logicalType", "struct", { shape: () => LOGICAL_TYPE }),
};
const COLUMN_META: Shape = {
  1: req("type", "i32"),
  2: req("encodings", "list", { elem: "i32" }),
  3: req("path_in_schema", "list", { elem: "binary" }),
  4: req("codec", "i32"),
  5: req("num_values", "i64"),
  6: req("total_uncompressed_size", "i64"),
  7: req("total_compressed_size", "i64"),
  8: opt(
    "key_value_metadata",
    "list",
    structList(() => KEY_VALUE),
  ),
  9: req("data_page_offset", "i64"),
  10: opt("index_page_offset", "i64"),
  11: opt("dictionary_page_offset", "i64"),
  12: opt("statistics", "struct", { shape: () => STATISTICS }),
  13: opt(
    "encoding_stats",
    "list",
    structList(() => ({ 1: req("page_type", "i32"), 2: req("encoding", "i32"), 3: req("count", "i32") })),
  ),
  14: opt("bloom_filter_offset", "i64"),
  15: opt("bloom_filter_length", "i32"),
  16: opt("size_statistics", "struct"),
  17: opt("geospatial_statistics", "struct"),
};
const COLUMN_CHUNK: Shape = {
  1: opt("file_path", "binary"),
  2: opt("file_offset", "i64"),
  3: opt("meta_data", "struct", { shape: () => COLUMN_META }),
  4: opt("offset_index_offset", "i64"),
  5: opt("offset_index_length", "i32"),
  6: opt("column_index_offset", "i64"),
  7: opt("column_index_length", "i32"),
  8: opt("crypto_metadata", "struct"),
  9: opt("encrypted_column_metadata", "binary"),
};
const ROW_GROUP: Shape = {
  1: req(
    "columns",
    "list",
    structList(() => COLUMN_CHUNK),
  ),
  2: opt("total_byte_size", "i64"),
  3: req("num_rows", "i64"),
  4: opt(
    "sorting_columns",
    "list",
    structList(() => ({ 1: req("column_idx", "i32"), 2: req("descending", "bool"), 3: req("nulls_first", "bool") })),
  ),
  5: opt("file_offset", "i64"),
  6: opt("total_compressed_size", "i64"),
  7: opt("ordinal", "i16"),
};

/** FileMetaData: the footer. */
export const FILE_METADATA: Shape = {
  1: req("version", "i32"),
  2: req(
    "schema",
    "list",
    structList(() => SCHEMA_ELEMENT),
  ),
  3: req("num_rows", "i64"),
  4: req(
    "row_groups",
    "list",
    structList(() => ROW_GROUP),
  ),
  5: opt(
    "key_value_metadata",
    "list",
    structList(() => KEY_VALUE),
  ),
  6: opt("created_by", "binary"),
  7: opt(
    "column_orders",
    "list",
    structList(() => ({ 1: opt("TYPE_ORDER", "struct", { shape: () => EMPTY }) })),
  ),
  8: opt("encryption_algorithm", "struct"),
  9: opt("footer_signing_key_metadata", "binary"),
};

/** PageHeader: before each page of a column chunk. */
export const PAGE_HEADER: Shape = {
  1: req("type", "i32"),
  2: req("uncompressed_page_size", "i32"),
  3: req("compressed_page_size", "i32"),
  4: opt("crc", "i32"),
  5: opt("data_page_header", "struct", {
    shape: () => ({
      1: req("num_values", "i32"),
      2: req("encoding", "i32"),
      3: req("definition_level_encoding", "i32"),
      4: req("repetition_level_encoding", "i32"),
      5: opt("statistics", "struct", { shape: () => STATISTICS }),
    }),
  }),
  6: opt("index_page_header", "struct"),
  7: opt("dictionary_page_header", "struct", {
    shape: () => ({ 1: req("num_values", "i32"), 2: req("encoding", "i32"), 3: opt("is_sorted", "bool") }),
  }),
  8: opt("data_page_header_v2", "struct", {
    shape: () => ({
      1: req("num_values", "i32"),
      2: req("num_nulls", "i32"),
      3: req("num_rows", "i32"),
      4: req("encoding", "i32"),
      5: req("definition_levels_byte_length", "i32"),
      6: req("repetition_levels_byte_length", "i32"),
      7: opt("is_compressed", "bool"),
      8: opt("statistics", "struct", { shape: () => STATISTICS }),
    }),
  }),
};

/**
 * The first field of `s` (or of a struct in it) whose wire type is not the one Parquet
 * gives it, or a required field that is missing, as words; null when it has the shape.
 *
 * @example
 * const bad = misshapen(footer, FILE_METADATA, "the footer"); // "the footer's version is an i64, not an i32"
 */
export function misshapen(s: TStruct, shape: Shape, where: string): string | null {
  for (const [key, f] of Object.entries(shape)) {
    const v = s.get(Number(key));
    if (v === undefined) {
      if (f.required) return `${where} has no ${f.name}`;
      continue;
    }
    const bad = misfit(v, f, `${where}'s ${f.name}`);
    if (bad) return bad;
  }
  return null;
}

function misfit(v: TValue, f: FieldShape, where: string): string | null {
  if (!WIRE[f.wire].includes(v.type)) return `${where} is ${WIRE_NAME[v.type] ?? "unknown"}, not ${f.wire}`;
  if (v.type === T.STRUCT) return f.shape ? misshapen(v.v, f.shape(), where) : null;
  if (v.type !== T.LIST || !f.elem) return null;
  if (v.v.length > 0 && !WIRE[f.elem].includes(v.elem))
    return `${where} holds ${WIRE_NAME[v.elem] ?? "unknown"} values, not ${f.elem}`;
  if (f.shape)
    for (const [k, x] of v.v.entries()) {
      const bad = x.type === T.STRUCT ? misshapen(x.v, f.shape(), `${where}[${k}]`) : null;
      if (bad) return bad;
    }
  return null;
}
