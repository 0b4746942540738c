// Array plan → task graph: one task per chunk per node (elementwise chains fused
// into one task per chunk), reductions as per-chunk partials combined in a tree,
// and a final task that assembles the result. Views (concatenate, dropping or
// adding length-1 axes) make no tasks: they re-address their inputs' chunks.
import { sizeOf, type ArrayNode, type Chunks } from "../common/array_plan.js";
import type { SourceLocation } from "../common/errors.js";
import { type ArrayStep, type ChunkExpr, type Piece } from "../graph/array_steps.js";
import type { Dep, Task, TaskGraph } from "../graph/tasks.js";

/** A lowered node: its chunk grid and where each chunk lives. */
interface Lowered {
  chunks: Chunks;
  dep(idx: number[]): Dep;
}

/** Partials a combine task takes at most (the tree's fan-in). */
const FAN_IN = 8;

/** Every index of a chunk grid, in C order. */
export function gridIndices(chunks: Chunks): number[][] {
  let out: number[][] = [[]];
  for (const c of chunks) out = out.flatMap((idx) => c.map((_, i) => [...idx, i]));
  return out;
}

/** Start of each chunk along an axis, plus the end. */
function starts(c: number[]): number[] {
  const s = [0];
  for (const n of c) s.push(s[s.length - 1] + n);
  return s;
}

const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

class ArrayLowering {
  readonly tasks: Task[] = [];
  private readonly memo = new Map<ArrayNode, Lowered>();
  private readonly users = new Map<ArrayNode, number>();
  /** One TSQR per input (and per QR/SVD flavour), shared by the nodes reading its parts. */
  private readonly tsqrs = new Map<string, Map<ArrayNode, Tsqr>>();
  private seq = 0;

  constructor(root: ArrayNode) {
    this.countUsers(root);
  }

  private countUsers(root: ArrayNode): void {
    const stack = [root];
    const seen = new Set<ArrayNode>([root]);
    while (stack.length) {
      const n = stack.pop()!;
      for (const c of children(n)) {
        this.users.set(c, (this.users.get(c) ?? 0) + 1);
        if (!seen.has(c)) {
          seen.add(c);
          stack.push(c);
        }
      }
    }
  }

  task(group: string, deps: Dep[], step: ArrayStep, loc?: SourceLocation): Dep {
    const key = `array-${this.seq++}`;
    this.tasks.push({ key, group: `array:${group}`, deps, steps: [{ kind: "array", step, loc }] });
    return { key, index: 0 };
  }

  lower(node: ArrayNode): Lowered {
    let l = this.memo.get(node);
    if (!l) {
      l = this.lowerNode(node);
      this.memo.set(node, l);
    }
    return l;
  }

  /** Tasks computing every chunk of `chunks` from a function of its index. */
  private perChunk(chunks: Chunks, make: (idx: number[], shape: number[]) => Dep): Lowered {
    const deps = new Map<string, Dep>();
    for (const idx of gridIndices(chunks))
      deps.set(
        idx.join(","),
        make(
          idx,
          idx.map((i, d) => chunks[d][i]),
        ),
      );
    return { chunks, dep: (idx) => deps.get(idx.join(","))! };
  }

  private lowerNode(node: ArrayNode): Lowered {
    const loc = node.loc;
    switch (node.kind) {
      case "generate": {
        const st = node.chunks.map(starts);
        return this.perChunk(node.chunks, (idx, shape) =>
          this.task(
            node.gen.kind,
            [],
            {
              op: "generate",
              gen: node.gen,
              dtype: node.dtype,
              shape,
              offset: idx.map((i, d) => st[d][i]),
              full: node.shape,
            },
            loc,
          ),
        );
      }
      case "data": {
        const whole = this.task("data", [], { op: "data", values: node.values }, loc);
        const src: Lowered = { chunks: node.shape.map((d) => [d]), dep: () => whole };
        return node.chunks.every((c) => c.length === 1) ? src : this.rechunk(src, node.shape, node.chunks, loc);
      }
      case "map":
        return this.lowerMap(node);
      case "reduce":
        return this.lowerReduce(node);
      case "transpose": {
        const input = this.lower(node.input);
        return this.perChunk(node.chunks, (idx) => {
          const inIdx = new Array<number>(idx.length);
          node.axes.forEach((a, d) => (inIdx[a] = idx[d]));
          const inShape = inIdx.map((i, d) => input.chunks[d][i]);
          return this.task("transpose", [input.dep(inIdx)], { op: "transpose", shape: inShape, axes: node.axes }, loc);
        });
      }
      case "slice":
        return this.lowerSlice(node);
      case "rechunk":
        return this.rechunk(this.lower(node.input), node.input.shape, node.chunks, loc);
      case "reshape":
        return this.lowerReshape(node);
      case "concatenate": {
        const axis = node.axis;
        const parts = node.inputs.map((inp) => {
          const target = node.chunks.map((c, d) => (d === axis ? inp.chunks[d] : c));
          const l = this.lower(inp);
          return l.chunks.every((c, d) => same(c, target[d])) ? l : this.rechunk(l, inp.shape, target, loc);
        });
        const owner: [number, number][] = [];
        parts.forEach((p, k) => p.chunks[axis].forEach((_, i) => owner.push([k, i])));
        return {
          chunks: node.chunks,
          dep: (idx) => {
            const [k, i] = owner[idx[axis]];
            return parts[k].dep(idx.map((x, d) => (d === axis ? i : x)));
          },
        };
      }
      case "matmul": {
        const a = this.lower(node.left);
        let b = this.lower(node.right);
        const kc = a.chunks[1];
        if (!same(b.chunks[0], kc)) b = this.rechunk(b, node.right.shape, [kc, b.chunks[1]], loc);
        return this.perChunk(node.chunks, ([i, j], [m, n]) => {
          const deps: Dep[] = [];
          kc.forEach((_, p) => deps.push(a.dep([i, p]), b.dep([p, j])));
          return this.task("matmul", deps, { op: "matmul", m, n, ks: kc, dtype: node.dtype }, loc);
        });
      }
      case "cumsum": {
        const input = this.lower(node.input);
        const axis = node.axis;
        const out = new Map<string, Dep>();
        for (const idx of gridIndices(node.chunks)) {
          const shape = idx.map((i, d) => node.chunks[d][i]);
          const deps = [input.dep(idx)];
          // The running sums come from the nearest chunk before this one that has any
          // (an empty chunk has no last slice to carry).
          let from = idx[axis] - 1;
          while (from >= 0 && node.chunks[axis][from] === 0) from--;
          const carry = from >= 0;
          let prevShape: number[] | undefined;
          if (carry) {
            const prev = idx.map((x, d) => (d === axis ? from : x));
            deps.push(out.get(prev.join(","))!);
            prevShape = prev.map((i, d) => node.chunks[d][i]);
          }
          out.set(
            idx.join(","),
            this.task("cumsum", deps, { op: "cumsum", shape, axis, carry, prevShape, dtype: node.dtype }, loc),
          );
        }
        return { chunks: node.chunks, dep: (idx) => out.get(idx.join(","))! };
      }
      case "linalg":
        return this.lowerLinalg(node);
      case "mask": {
        // Chunks whole along every axis but the first: their grid order is then C order.
        const target = node.input.chunks.map((c, d) => (d === 0 ? c : [node.input.shape[d]]));
        const input = this.rechunk(this.lower(node.input), node.input.shape, target, loc);
        const m = this.rechunk(this.lower(node.mask), node.mask.shape, target, loc);
        const deps = gridIndices(input.chunks).map((idx) =>
          this.task("mask", [input.dep(idx), m.dep(idx)], { op: "mask" }, loc),
        );
        // Lengths are known only after running: a one-chunk result made from the pieces by concat.
        const key = `array-${this.seq++}`;
        this.tasks.push({
          key,
          group: "array:mask",
          deps,
          steps: [{ kind: "concat", inputs: deps.map((_, i) => i), loc }],
        });
        return { chunks: node.chunks, dep: () => ({ key, index: 0 }) };
      }
    }
  }

  private lowerMap(node: ArrayNode & { kind: "map" }): Lowered {
    const R = node.shape.length;
    const leaves: { node: ArrayNode; l: Lowered }[] = [];
    // Inputs aligned to the output chunks: broadcast axes have one chunk of 1.
    const aligned = (inp: ArrayNode): Lowered => {
      const off = R - inp.shape.length;
      const target = inp.shape.map((d, i) => (d === 1 && node.shape[i + off] !== 1 ? [1] : node.chunks[i + off]));
      const l = this.lower(inp);
      return l.chunks.every((c, d) => same(c, target[d])) ? l : this.rechunk(l, inp.shape, target, inp.loc ?? node.loc);
    };
    // Fuses elementwise inputs used only here (and not broadcast) into this task's expression.
    const build = (arg: ArrayNode | number): ((idx: number[]) => ChunkExpr) => {
      if (typeof arg === "number") return () => ({ k: "scalar", value: arg });
      if (arg.kind === "map" && (this.users.get(arg) ?? 0) <= 1 && same(arg.shape, node.shape) && !this.memo.has(arg)) {
        const args = arg.args.map(build);
        return (idx) => ({ k: "op", op: arg.op, args: args.map((f) => f(idx)), dtype: arg.dtype });
      }
      const l = aligned(arg);
      const at = leaves.length;
      leaves.push({ node: arg, l });
      const off = R - arg.shape.length;
      return (idx) => {
        const own = arg.shape.map((d, i) => (d === 1 && node.shape[i + off] !== 1 ? 0 : idx[i + off]));
        return { k: "in", input: at, shape: own.map((i, d) => l.chunks[d][i]), dtype: arg.dtype };
      };
    };
    const args = node.args.map(build);
    return this.perChunk(node.chunks, (idx, shape) => {
      const expr: ChunkExpr = { k: "op", op: node.op, args: args.map((f) => f(idx)), dtype: node.dtype };
      const deps = leaves.map(({ node: n, l }) => {
        const off = R - n.shape.length;
        return l.dep(n.shape.map((d, i) => (d === 1 && node.shape[i + off] !== 1 ? 0 : idx[i + off])));
      });
      return this.task(node.op, deps, { op: "map", expr, shape }, node.loc);
    });
  }

  private lowerReduce(node: ArrayNode & { kind: "reduce" }): Lowered {
    const input = this.lower(node.input);
    const { axes, op } = node;
    const nd = node.input.shape.length;
    const st = input.chunks.map(starts);
    const keptChunks = input.chunks.map((c, d) => (axes.includes(d) ? [1] : c));
    const out = this.perChunk(keptChunks, (idx, keptShape) => {
      // Every input chunk along the reduced axes, for this output chunk.
      const reducedGrid = gridIndices(axes.map((a) => input.chunks[a]));
      let level = reducedGrid.map((r) => {
        const inIdx = idx.slice();
        axes.forEach((a, j) => (inIdx[a] = r[j]));
        const shape = inIdx.map((i, d) => input.chunks[d][i]);
        const offset = inIdx.map((i, d) => st[d][i]);
        return this.task(
          `${op}-partial`,
          [input.dep(inIdx)],
          { op: "partial", red: op, shape, axes, offset, full: node.input.shape },
          node.loc,
        );
      });
      const size = sizeOf(keptShape);
      for (;;) {
        const last = level.length <= FAN_IN;
        const next: Dep[] = [];
        for (let i = 0; i < level.length; i += FAN_IN) {
          const group = level.slice(i, i + FAN_IN);
          next.push(
            this.task(
              `${op}-combine`,
              group,
              { op: "combine", red: op, size, final: last ? { ddof: node.ddof, dtype: node.dtype } : undefined },
              node.loc,
            ),
          );
        }
        level = next;
        if (last) return level[0];
      }
    });
    // Dropping the reduced axes (no keepdims) re-addresses the same chunks.
    if (node.keepdims) return out;
    return { chunks: node.chunks, dep: (idx) => out.dep(expandIdx(idx, axes, nd)) };
  }

  private lowerSlice(node: ArrayNode & { kind: "slice" }): Lowered {
    const input = this.lower(node.input);
    // Per input axis: groups of selected positions inside one input chunk.
    const groups = node.index.map((ix, d) => {
      const st = starts(input.chunks[d]);
      const chunkOf = (p: number) => {
        let lo = 0,
          hi = input.chunks[d].length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (st[mid] <= p) lo = mid;
          else hi = mid - 1;
        }
        return lo;
      };
      const sel = "at" in ix ? { start: ix.at, step: 1, count: 1 } : ix;
      const out: { chunk: number; start: number; step: number; count: number }[] = [];
      for (let k = 0; k < sel.count;) {
        const p = sel.start + k * sel.step;
        const c = chunkOf(p);
        // How many further selected positions stay inside chunk c.
        const lo = st[c],
          hi = st[c + 1];
        const room = sel.step > 0 ? Math.floor((hi - 1 - p) / sel.step) + 1 : Math.floor((p - lo) / -sel.step) + 1;
        const n = Math.min(room, sel.count - k);
        out.push({ chunk: c, start: p - lo, step: sel.step, count: n });
        k += n;
      }
      if (out.length === 0) out.push({ chunk: 0, start: 0, step: 1, count: 0 });
      return out;
    });
    const kept = node.index.map((ix) => !("at" in ix));
    const fullChunks = groups.map((g) => g.map((x) => x.count));
    const full = this.perChunk(fullChunks, (idx, shape) => {
      const gs = idx.map((i, d) => groups[d][i]);
      const inIdx = gs.map((g) => g.chunk);
      const piece: Piece = {
        input: 0,
        shape: inIdx.map((i, d) => input.chunks[d][i]),
        start: gs.map((g) => g.start),
        step: gs.map((g) => g.step),
        count: shape,
        dst: shape.map(() => 0),
      };
      if (sizeOf(shape) === 0) return this.task("slice", [], { op: "data", values: new Float64Array(0) }, node.loc);
      return this.task("slice", [input.dep(inIdx)], { op: "assemble", shape, pieces: [piece] }, node.loc);
    });
    if (kept.every(Boolean)) return full;
    const dropped = kept.flatMap((k, d) => (k ? [] : [d]));
    return { chunks: node.chunks, dep: (idx) => full.dep(expandIdx(idx, dropped, kept.length)) };
  }

  /** Reshape: adding or removing axes of length 1 is a view; anything else goes through one chunk. */
  private lowerReshape(node: ArrayNode & { kind: "reshape" }): Lowered {
    const from = node.input.shape.filter((d) => d !== 1);
    const to = node.shape.filter((d) => d !== 1);
    const input = this.lower(node.input);
    if (same(from, to)) {
      const inChunks = input.chunks.filter((_, d) => node.input.shape[d] !== 1);
      const outChunks = node.chunks.filter((_, d) => node.shape[d] !== 1);
      if (inChunks.every((c, d) => same(c, outChunks[d]))) {
        const inAxes = node.input.shape.map((d) => d !== 1);
        return {
          chunks: node.chunks,
          dep: (idx) => {
            const core = idx.filter((_, d) => node.shape[d] !== 1);
            let k = 0;
            return input.dep(inAxes.map((keep) => (keep ? core[k++] : 0)));
          },
        };
      }
    }
    // General case: gather into one chunk, which the new shape views, then split.
    const one = this.rechunk(
      input,
      node.input.shape,
      node.input.shape.map((d) => [d]),
      node.loc,
    );
    const single = one.dep(node.input.shape.map(() => 0));
    const viewed: Lowered = { chunks: node.shape.map((d) => [d]), dep: () => single };
    return this.rechunk(viewed, node.shape, node.chunks, node.loc);
  }

  /**
   * Tall-skinny QR: each row block factored (Q_i R_i), the stacked R_i factored again
   * (R, and with `svd` the small SVD of R), then each block's Q_i times its rows of the
   * second stage's Q. Communication is one small R per block.
   */
  private tsqr(input: ArrayNode, svd: boolean, loc: SourceLocation | undefined): Tsqr {
    const flavour = svd ? "svd" : "qr";
    let memo = this.tsqrs.get(flavour);
    if (!memo) this.tsqrs.set(flavour, (memo = new Map()));
    const done = memo.get(input);
    if (done) return done;
    const [m, n] = input.shape;
    const rows = input.chunks[0];
    const a = this.rechunk(this.lower(input), input.shape, [rows, [n]], loc);
    const sizes = rows.map((mi): [number, number] => [mi, Math.min(mi, n)]);
    const blocks = sizes.map(([mi], i) => this.task("qr-block", [a.dep([i, 0])], { op: "qr", m: mi, n }, loc));
    const stage2 = this.task(svd ? "svd-r" : "qr-r", blocks, { op: "tsqr", blocks: sizes, n, svd }, loc);
    const offsets = starts(sizes.map(([, k]) => k));
    const t: Tsqr = { blocks, stage2, sizes, offsets, stacked: offsets[sizes.length], k: Math.min(m, n), n };
    memo.set(input, t);
    return t;
  }

  private lowerLinalg(node: ArrayNode & { kind: "linalg" }): Lowered {
    const loc = node.loc;
    const single = (dep: Dep): Lowered => ({ chunks: node.chunks, dep: () => dep });
    if (node.op === "solve") {
      const [a, b] = node.inputs;
      const whole = (x: ArrayNode) =>
        this.rechunk(
          this.lower(x),
          x.shape,
          x.shape.map((d) => [d]),
          loc,
        ).dep(x.shape.map(() => 0));
      const n = a.shape[0];
      const k = b.shape.length === 1 ? 1 : b.shape[1];
      return single(this.task("solve", [whole(a), whole(b)], { op: "solve", n, k }, loc));
    }
    const t = this.tsqr(node.inputs[0], node.op.startsWith("svd"), loc);
    const { k, n, stacked } = t;
    const extract = (start: number, count: number) =>
      single(this.task("extract", [t.stage2], { op: "extract", start, count }, loc));
    switch (node.op) {
      case "qr_r":
      case "svd_vt":
        return extract(stacked * k + (node.op === "svd_vt" ? k : 0), k * n);
      case "svd_s":
        return extract(stacked * k, k);
      default: {
        const deps = t.blocks.map((b, i) => {
          const [m, ki] = t.sizes[i];
          return this.task(
            node.op === "qr_q" ? "qr-q" : "svd-u",
            [b, t.stage2],
            { op: "tsqrApply", m, ki, offset: t.offsets[i], k },
            loc,
          );
        });
        return { chunks: node.chunks, dep: ([i]) => deps[i] };
      }
    }
  }

  /** New chunk boundaries: each new chunk assembled from the old chunks it overlaps. */
  rechunk(input: Lowered, _shape: number[], chunks: Chunks, loc?: SourceLocation): Lowered {
    if (input.chunks.every((c, d) => same(c, chunks[d]))) return input;
    const oldSt = input.chunks.map(starts);
    const newSt = chunks.map(starts);
    return this.perChunk(chunks, (idx, outShape) => {
      // Per axis: the old chunks overlapping this new chunk, with the overlap.
      const spans = idx.map((i, d) => {
        const lo = newSt[d][i],
          hi = newSt[d][i + 1];
        const out: { chunk: number; from: number; to: number }[] = [];
        input.chunks[d].forEach((_, c) => {
          const a = Math.max(lo, oldSt[d][c]),
            b = Math.min(hi, oldSt[d][c + 1]);
          if (b > a || (hi === lo && c === 0)) out.push({ chunk: c, from: a, to: Math.max(a, b) });
        });
        return out;
      });
      const deps: Dep[] = [];
      const pieces: Piece[] = [];
      for (const pick of gridIndices(spans.map((s) => s.map(() => 1)))) {
        const ss = pick.map((j, d) => spans[d][j]);
        const inIdx = ss.map((s) => s.chunk);
        deps.push(input.dep(inIdx));
        pieces.push({
          input: deps.length - 1,
          shape: inIdx.map((c, d) => input.chunks[d][c]),
          start: ss.map((s, d) => s.from - oldSt[d][s.chunk]),
          step: ss.map(() => 1),
          count: ss.map((s) => s.to - s.from),
          dst: ss.map((s, d) => s.from - newSt[d][idx[d]]),
        });
      }
      return this.task("rechunk", deps, { op: "assemble", shape: outShape, pieces }, loc);
    });
  }
}

/** A lowered TSQR: per-block packed QRs, the second stage, and where each block's rows sit in the stack of R factors. */
interface Tsqr {
  blocks: Dep[];
  stage2: Dep;
  /** [rows, rows of R_i] per block. */
  sizes: [number, number][];
  offsets: number[];
  /** Rows of the stacked R factors. */
  stacked: number;
  k: number;
  n: number;
}

/** A chunk index of the full-rank grid from one without the `removed` axes (those get 0). */
function expandIdx(idx: number[], removed: number[], nd: number): number[] {
  const out: number[] = [];
  let k = 0;
  for (let d = 0; d < nd; d++) out.push(removed.includes(d) ? 0 : idx[k++]);
  return out;
}

function children(n: ArrayNode): ArrayNode[] {
  switch (n.kind) {
    case "generate":
    case "data":
      return [];
    case "map":
      return n.args.filter((a): a is ArrayNode => typeof a !== "number");
    case "concatenate":
      return n.inputs;
    case "matmul":
      return [n.left, n.right];
    case "mask":
      return [n.input, n.mask];
    case "linalg":
      return n.inputs;
    default:
      return [n.input];
  }
}

/**
 * The task graph computing `root`; its output task holds the whole array, C order.
 *
 * @example
 * const graph = lowerArray(x.node); await cluster.run(graph);
 */
export function lowerArray(root: ArrayNode): TaskGraph {
  const low = new ArrayLowering(root);
  const l = low.lower(root);
  if (root.kind === "mask") return pruned(low.tasks, l.dep([0]).key);
  const st = l.chunks.map(starts);
  const deps: Dep[] = [];
  const pieces: Piece[] = [];
  for (const idx of gridIndices(l.chunks)) {
    const shape = idx.map((i, d) => l.chunks[d][i]);
    if (sizeOf(shape) === 0) continue;
    deps.push(l.dep(idx));
    pieces.push({
      input: deps.length - 1,
      shape,
      start: shape.map(() => 0),
      step: shape.map(() => 1),
      count: shape,
      dst: idx.map((i, d) => st[d][i]),
    });
  }
  const out = low.task("result", deps, { op: "assemble", shape: root.shape, pieces }, root.loc);
  return pruned(low.tasks, out.key);
}

/** Only the tasks the output needs: a slice uses some chunks of its input, and a task no one waits for would hold its output forever. */
function pruned(tasks: Task[], output: string): TaskGraph {
  const byKey = new Map(tasks.map((t) => [t.key, t]));
  const keep = new Set([output]);
  const stack = [output];
  while (stack.length)
    for (const d of byKey.get(stack.pop()!)!.deps)
      if (!keep.has(d.key)) {
        keep.add(d.key);
        stack.push(d.key);
      }
  return { tasks: tasks.filter((t) => keep.has(t.key)), output };
}
