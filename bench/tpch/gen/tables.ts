// The eight tables, generated chunk by chunk (TPC-H v3, clause 4.2.3). A task is one
// chunk of one group of tables (orders come with their lineitems, since an order's
// status and total price follow from its lines); each task has its own PRNG stream.
import { chunk, Int64Column, type Builder, type Chunk } from "./columns.js";
import {
  CONTAINERS,
  COLORS,
  CURRENT_DATE,
  END_DATE,
  INSTRUCTIONS,
  MODES,
  NATIONS,
  PRIORITIES,
  REGIONS,
  SEGMENTS,
  START_DATE,
  TYPES,
} from "./dists.js";
import { chunkSeed, Random } from "./random.js";
import { StringColumn } from "./strings.js";
import { pushComment } from "./text.js";

/** Row counts at a scale factor. */
export interface Scale {
  sf: number;
  suppliers: number;
  customers: number;
  parts: number;
  orders: number;
  clerks: number;
}

export function scaleOf(sf: number): Scale {
  const n = (base: number) => Math.max(1, Math.floor(sf * base));
  return {
    sf,
    suppliers: n(10_000),
    customers: n(150_000),
    parts: n(200_000),
    orders: n(1_500_000),
    clerks: n(1_000),
  };
}

export type Group = "nation" | "supplier" | "customer" | "part" | "partsupp" | "orders";

/** The tables each group's tasks produce, in order. */
export const GROUP_TABLES: Record<Group, readonly string[]> = {
  nation: ["region", "nation"],
  supplier: ["supplier"],
  customer: ["customer"],
  part: ["part"],
  partsupp: ["partsupp"],
  orders: ["orders", "lineitem"],
};

export const GROUPS = Object.keys(GROUP_TABLES) as Group[];

/** Rows of the group's driving entity per chunk (partsupp: parts; orders: orders). Fixed: it decides the output. */
const CHUNK: Record<Group, number> = {
  nation: 25,
  supplier: 100_000,
  customer: 100_000,
  part: 100_000,
  partsupp: 25_000,
  orders: 50_000,
};

function entities(g: Group, s: Scale): number {
  return {
    nation: 25,
    supplier: s.suppliers,
    customer: s.customers,
    part: s.parts,
    partsupp: s.parts,
    orders: s.orders,
  }[g];
}

/** How many chunks group `g` has at scale `s`. */
export function chunkCount(g: Group, s: Scale): number {
  return Math.ceil(entities(g, s) / CHUNK[g]);
}

/** One task: chunk `index` of group `group`. */
export interface Task {
  group: Group;
  index: number;
}

/** The chunks of one task (one per table of its group), from the shared text pool. */
export function generate(t: Task, s: Scale, pool: Uint8Array): Chunk[] {
  const first = t.index * CHUNK[t.group];
  const n = Math.min(CHUNK[t.group], entities(t.group, s) - first);
  const r = new Random(chunkSeed(GROUPS.indexOf(t.group) + 1, t.index));
  const ctx: Ctx = { s, r, pool, first, n };
  switch (t.group) {
    case "nation":
      return nationRegion(ctx);
    case "supplier":
      return [supplier(ctx)];
    case "customer":
      return [customer(ctx)];
    case "part":
      return [part(ctx)];
    case "partsupp":
      return [partsupp(ctx)];
    case "orders":
      return ordersLineitem(ctx);
  }
}

interface Ctx {
  s: Scale;
  r: Random;
  pool: Uint8Array;
  /** Index (0-based) of the chunk's first entity. */
  first: number;
  n: number;
}

const ADDRESS_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ, ";

const cents = (r: Random, lo: number, hi: number) => r.int(lo, hi) / 100;

function phone(r: Random, nation: number): string {
  return `${nation + 10}-${r.int(100, 999)}-${r.int(100, 999)}-${r.int(1000, 9999)}`;
}

function nationRegion({ r, pool }: Ctx): Chunk[] {
  const rk = new Int64Column(5);
  const rname = new StringColumn(5, 8);
  const rcomment = new StringColumn(5, 80);
  REGIONS.forEach((name, i) => {
    rk.set(i, i);
    rname.push(name);
    pushComment(rcomment, r, pool, 31, 115);
  });
  const nk = new Int64Column(25);
  const nname = new StringColumn(25, 10);
  const nrk = new Int64Column(25);
  const ncomment = new StringColumn(25, 80);
  NATIONS.forEach(([name, region], i) => {
    nk.set(i, i);
    nname.push(name);
    nrk.set(i, region);
    pushComment(ncomment, r, pool, 31, 114);
  });
  return [
    chunk("region", 5, [
      ["r_regionkey", rk],
      ["r_name", rname],
      ["r_comment", rcomment],
    ]),
    chunk("nation", 25, [
      ["n_nationkey", nk],
      ["n_name", nname],
      ["n_regionkey", nrk],
      ["n_comment", ncomment],
    ]),
  ];
}

/**
 * The suppliers whose comments hold "Customer … Complaints" (Q16 leaves them out) and
 * "Customer … Recommends": SF × 5 of each (at least one), the same at any chunking.
 */
export function pressKeys(s: Scale): { complaints: Set<number>; recommends: Set<number> } {
  const r = new Random(chunkSeed(97, 0));
  const n = Math.min(Math.max(1, Math.round(s.sf * 5)), Math.floor(s.suppliers / 2));
  const taken = new Set<number>();
  const draw = () => {
    const out = new Set<number>();
    while (out.size < n) {
      const k = r.int(1, s.suppliers);
      if (!taken.has(k)) (taken.add(k), out.add(k));
    }
    return out;
  };
  const complaints = draw();
  return { complaints, recommends: draw() };
}

/** Writes "Customer " and `word` into the comment just pushed, `noise` random bytes apart (as dbgen). */
function plantPress(col: StringColumn, row: number, r: Random, word: string): void {
  const at = col.offsets[row];
  const len = col.offsets[row + 1] - at;
  const noise = r.int(0, len - 19);
  const off = r.int(0, len - 19 - noise);
  const put = (text: string, p: number) => {
    for (let i = 0; i < text.length; i++) col.chars[at + p + i] = text.charCodeAt(i);
  };
  put("Customer ", off);
  put(word, off + 9 + noise);
}

/**
 * The columns suppliers and customers share (key, "<prefix>#%09d" name, address,
 * nation, phone, account balance), then the table's own ones from `rest`, row by row.
 */
function party(
  { r, first, n }: Ctx,
  prefix: "s" | "c",
  label: string,
  rest: [string, StringColumn][],
  row: (i: number, key: number) => void,
): [string, Builder][] {
  const key = new Int64Column(n);
  const name = new StringColumn(n, 18);
  const address = new StringColumn(n, 25);
  const nation = new Int64Column(n);
  const phones = new StringColumn(n, 15);
  const bal = new Float64Array(n);
  const draw = () => r.next();
  for (let i = 0; i < n; i++) {
    const k = first + i + 1;
    key.set(i, k);
    name.pushPadded(label, k, 9);
    address.pushRandom(draw, ADDRESS_CHARS, r.int(10, 40));
    const nk = r.int(0, 24);
    nation.set(i, nk);
    phones.push(phone(r, nk));
    bal[i] = cents(r, -99_999, 999_999);
    row(i, k);
  }
  return [
    [`${prefix}_${prefix === "s" ? "supp" : "cust"}key`, key],
    [`${prefix}_name`, name],
    [`${prefix}_address`, address],
    [`${prefix}_nationkey`, nation],
    [`${prefix}_phone`, phones],
    [`${prefix}_acctbal`, bal],
    ...rest,
  ];
}

function supplier(ctx: Ctx): Chunk {
  const { s, r, pool, n } = ctx;
  const comment = new StringColumn(n, 63);
  const press = pressKeys(s);
  const columns = party(ctx, "s", "Supplier#", [["s_comment", comment]], (i, k) => {
    pushComment(comment, r, pool, 25, 100);
    if (press.complaints.has(k)) plantPress(comment, i, r, "Complaints");
    else if (press.recommends.has(k)) plantPress(comment, i, r, "Recommends");
  });
  return chunk("supplier", n, columns);
}

function customer(ctx: Ctx): Chunk {
  const { r, pool, n } = ctx;
  const segment = new StringColumn(n, 10);
  const comment = new StringColumn(n, 73);
  const rest: [string, StringColumn][] = [
    ["c_mktsegment", segment],
    ["c_comment", comment],
  ];
  const columns = party(ctx, "c", "Customer#", rest, () => {
    segment.push(r.pick(SEGMENTS));
    pushComment(comment, r, pool, 29, 116);
  });
  return chunk("customer", n, columns);
}

/** p_retailprice in cents (clause 4.2.3): a function of the key alone. */
export function retailCents(partkey: number): number {
  return 90_000 + (Math.floor(partkey / 10) % 20_001) + 100 * (partkey % 1000);
}

/** The i-th (0..3) supplier of a part (clause 4.2.3, PS_SUPPKEY). */
export function partSupplier(partkey: number, i: number, suppliers: number): number {
  const step = Math.floor(suppliers / 4) + Math.floor((partkey - 1) / suppliers);
  return ((partkey + i * step) % suppliers) + 1;
}

function part({ r, pool, first, n }: Ctx): Chunk {
  const key = new Int64Column(n);
  const name = new StringColumn(n, 33);
  const mfgr = new StringColumn(n, 14);
  const brand = new StringColumn(n, 8);
  const type = new StringColumn(n, 21);
  const size = new Int64Column(n);
  const container = new StringColumn(n, 8);
  const price = new Float64Array(n);
  const comment = new StringColumn(n, 14);
  const words: number[] = [];
  for (let i = 0; i < n; i++) {
    const k = first + i + 1;
    key.set(i, k);
    words.length = 0;
    while (words.length < 5) {
      const w = r.int(0, COLORS.length - 1);
      if (!words.includes(w)) words.push(w);
    }
    name.push(words.map((w) => COLORS[w]).join(" "));
    const m = r.int(1, 5);
    mfgr.push(`Manufacturer#${m}`);
    brand.push(`Brand#${m}${r.int(1, 5)}`);
    type.push(r.pick(TYPES));
    size.set(i, r.int(1, 50));
    container.push(r.pick(CONTAINERS));
    price[i] = retailCents(k) / 100;
    pushComment(comment, r, pool, 5, 22);
  }
  return chunk("part", n, [
    ["p_partkey", key],
    ["p_name", name],
    ["p_mfgr", mfgr],
    ["p_brand", brand],
    ["p_type", type],
    ["p_size", size],
    ["p_container", container],
    ["p_retailprice", price],
    ["p_comment", comment],
  ]);
}

function partsupp({ s, r, pool, first, n }: Ctx): Chunk {
  const rows = 4 * n;
  const pk = new Int64Column(rows);
  const sk = new Int64Column(rows);
  const qty = new Int64Column(rows);
  const cost = new Float64Array(rows);
  const comment = new StringColumn(rows, 124);
  for (let i = 0; i < n; i++) {
    const k = first + i + 1;
    for (let j = 0; j < 4; j++) {
      const row = 4 * i + j;
      pk.set(row, k);
      sk.set(row, partSupplier(k, j, s.suppliers));
      qty.set(row, r.int(1, 9999));
      cost[row] = cents(r, 100, 100_000);
      pushComment(comment, r, pool, 49, 198);
    }
  }
  return chunk("partsupp", rows, [
    ["ps_partkey", pk],
    ["ps_suppkey", sk],
    ["ps_availqty", qty],
    ["ps_supplycost", cost],
    ["ps_comment", comment],
  ]);
}

/** The sparse key of the i-th order (1-based): only the first 8 of every 32 keys are used. */
export function orderKey(i: number): number {
  return Math.floor(i / 8) * 32 + (i % 8);
}

const byte = (s: string) => s.charCodeAt(0);
const F = byte("F"),
  O = byte("O"),
  P = byte("P"),
  N = byte("N"),
  R = byte("R"),
  A = byte("A");

function ordersLineitem({ s, r, pool, first, n }: Ctx): Chunk[] {
  const okey = new Int64Column(n);
  const cust = new Int64Column(n);
  const ostatus = new StringColumn(n, 1);
  const total = new Float64Array(n);
  const odate = new Int32Array(n);
  const prio = new StringColumn(n, 9);
  const clerk = new StringColumn(n, 15);
  const shipprio = new Int64Column(n);
  const ocomment = new StringColumn(n, 49);

  const cap = 7 * n;
  const lkey = new Int64Column(cap);
  const lpart = new Int64Column(cap);
  const lsupp = new Int64Column(cap);
  const lnum = new Int64Column(cap);
  const lqty = new Float64Array(cap);
  const lprice = new Float64Array(cap);
  const ldisc = new Float64Array(cap);
  const ltax = new Float64Array(cap);
  const lflag = new StringColumn(cap, 1);
  const lstatus = new StringColumn(cap, 1);
  const lship = new Int32Array(cap);
  const lcommit = new Int32Array(cap);
  const lreceipt = new Int32Array(cap);
  const linstruct = new StringColumn(cap, 12);
  const lmode = new StringColumn(cap, 5);
  const lcomment = new StringColumn(cap, 27);

  // Customers whose key is a multiple of 3 place no orders: draw among the others.
  const active = s.customers - Math.floor(s.customers / 3);
  const lastOrderDate = END_DATE - 151;
  const one = new Uint8Array(1);
  let l = 0;
  for (let i = 0; i < n; i++) {
    const key = orderKey(first + i + 1);
    okey.set(i, key);
    const c = r.int(0, active - 1);
    cust.set(i, c + Math.floor(c / 2) + 1);
    const date = r.int(START_DATE, lastOrderDate);
    odate[i] = date;
    prio.push(r.pick(PRIORITIES));
    clerk.pushPadded("Clerk#", r.int(1, s.clerks), 9);
    shipprio.set(i, 0);
    pushComment(ocomment, r, pool, 19, 78);

    const lines = r.int(1, 7);
    let totalCents = 0;
    let shipped = 0;
    for (let j = 0; j < lines; j++, l++) {
      lkey.set(l, key);
      const pk = r.int(1, s.parts);
      lpart.set(l, pk);
      lsupp.set(l, partSupplier(pk, r.int(0, 3), s.suppliers));
      lnum.set(l, j + 1);
      const q = r.int(1, 50);
      const disc = r.int(0, 10);
      const tax = r.int(0, 8);
      const ext = q * retailCents(pk);
      lqty[l] = q;
      lprice[l] = ext / 100;
      ldisc[l] = disc / 100;
      ltax[l] = tax / 100;
      totalCents += Math.round((ext * (100 - disc) * (100 + tax)) / 10_000);
      const ship = date + r.int(1, 121);
      const commit = date + r.int(30, 90);
      const receipt = ship + r.int(1, 30);
      lship[l] = ship;
      lcommit[l] = commit;
      lreceipt[l] = receipt;
      const returned = r.int(0, 1);
      one[0] = receipt <= CURRENT_DATE ? (returned ? R : A) : N;
      lflag.pushBytes(one, 0, 1);
      const open = ship > CURRENT_DATE;
      if (!open) shipped++;
      one[0] = open ? O : F;
      lstatus.pushBytes(one, 0, 1);
      linstruct.push(r.pick(INSTRUCTIONS));
      lmode.push(r.pick(MODES));
      pushComment(lcomment, r, pool, 10, 43);
    }
    one[0] = shipped === lines ? F : shipped === 0 ? O : P;
    ostatus.pushBytes(one, 0, 1);
    total[i] = totalCents / 100;
  }
  return [
    chunk("orders", n, [
      ["o_orderkey", okey],
      ["o_custkey", cust],
      ["o_orderstatus", ostatus],
      ["o_totalprice", total],
      ["o_orderdate", odate],
      ["o_orderpriority", prio],
      ["o_clerk", clerk],
      ["o_shippriority", shipprio],
      ["o_comment", ocomment],
    ]),
    chunk("lineitem", l, [
      ["l_orderkey", lkey],
      ["l_partkey", lpart],
      ["l_suppkey", lsupp],
      ["l_linenumber", lnum],
      ["l_quantity", lqty],
      ["l_extendedprice", lprice],
      ["l_discount", ldisc],
      ["l_tax", ltax],
      ["l_returnflag", lflag],
      ["l_linestatus", lstatus],
      ["l_shipdate", lship],
      ["l_commitdate", lcommit],
      ["l_receiptdate", lreceipt],
      ["l_shipinstruct", linstruct],
      ["l_shipmode", lmode],
      ["l_comment", lcomment],
    ]),
  ];
}
