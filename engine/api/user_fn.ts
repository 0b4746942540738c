// Captures a user function so that it can run on a worker thread: its source text,
// checked for variables it takes from outside itself. Such a function would see none
// of them on the worker (a silent wrong answer, or a ReferenceError deep in a task),
// so it is rejected where it is written unless the values are passed with `with`.
import { parse } from "acorn";
import type { FnSpec, JsonValue } from "../common/bag.js";
import { BasinError, type SourceLocation } from "../common/errors.js";

/** Outer values a user function may use on the workers, by the name it uses them under. */
export type Captured = Record<string, unknown>;

export interface UserFnOptions {
  /**
   * Outer variables the function uses, passed explicitly: JSON values, or other
   * functions (captured the same way).
   */
  with?: Captured;
}

/** Names a function may use without passing them: the language's and the platform's globals. */
const GLOBALS = new Set(
  (
    "undefined NaN Infinity globalThis Math JSON Number String Boolean Array Object Date RegExp Map Set WeakMap WeakSet WeakRef " +
    "Symbol BigInt Error TypeError RangeError SyntaxError ReferenceError EvalError URIError AggregateError Promise Proxy Reflect " +
    "Intl ArrayBuffer SharedArrayBuffer DataView Atomics Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array " +
    "Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array parseInt parseFloat isNaN isFinite encodeURI decodeURI " +
    "encodeURIComponent decodeURIComponent escape unescape console structuredClone TextEncoder TextDecoder URL URLSearchParams " +
    "atob btoa queueMicrotask setTimeout clearTimeout setInterval clearInterval performance crypto Iterator"
  ).split(" "),
);

type Node = { type: string; [key: string]: unknown };

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && typeof (v as { type?: unknown }).type === "string";
}

class Scope {
  readonly names = new Set<string>();
  constructor(readonly parent?: Scope) {}
  has(name: string): boolean {
    return this.names.has(name) || (this.parent?.has(name) ?? false);
  }
}

/** Names bound by a declaration pattern (`{ a, b: [c] = d, ...e }` binds a, c, e). */
function patternNames(p: unknown, out: Set<string>): void {
  if (!isNode(p)) return;
  switch (p.type) {
    case "Identifier":
      out.add(p.name as string);
      break;
    case "ObjectPattern":
      for (const prop of p.properties as Node[])
        patternNames(prop.type === "RestElement" ? prop.argument : prop.value, out);
      break;
    case "ArrayPattern":
      for (const e of p.elements as unknown[]) patternNames(e, out);
      break;
    case "RestElement":
      patternNames(p.argument, out);
      break;
    case "AssignmentPattern":
      patternNames(p.left, out);
      break;
  }
}

/** `var` names and function declarations hoisted to a function's scope (nested functions not entered). */
function hoisted(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) return node.forEach((n) => hoisted(n, out));
  if (!isNode(node)) return;
  if (node.type === "VariableDeclaration" && node.kind === "var")
    for (const d of node.declarations as Node[]) patternNames(d.id, out);
  if (node.type === "FunctionDeclaration") {
    if (isNode(node.id)) out.add(node.id.name as string);
    return;
  }
  if (/Function|Class/.test(node.type)) return;
  for (const [k, v] of Object.entries(node)) if (k !== "type" && typeof v === "object") hoisted(v, out);
}

/** Declarations directly in a block: let/const/class/function. */
function blockNames(statements: unknown, out: Set<string>): void {
  for (const s of (statements as Node[]) ?? []) {
    if (s.type === "VariableDeclaration" && s.kind !== "var")
      for (const d of s.declarations as Node[]) patternNames(d.id, out);
    if ((s.type === "ClassDeclaration" || s.type === "FunctionDeclaration") && isNode(s.id))
      out.add(s.id.name as string);
  }
}

/** The identifiers an ESTree expression reads or writes without declaring them. */
function freeNames(root: Node): Set<string> {
  const free = new Set<string>();
  const visitPattern = (p: unknown, scope: Scope): void => {
    if (!isNode(p)) return;
    switch (p.type) {
      case "Identifier":
        return;
      case "ObjectPattern":
        for (const prop of p.properties as Node[]) {
          if (prop.type === "RestElement") visitPattern(prop.argument, scope);
          else {
            if (prop.computed) visit(prop.key, scope);
            visitPattern(prop.value, scope);
          }
        }
        return;
      case "ArrayPattern":
        for (const e of p.elements as unknown[]) visitPattern(e, scope);
        return;
      case "RestElement":
        visitPattern(p.argument, scope);
        return;
      case "AssignmentPattern":
        visitPattern(p.left, scope);
        visit(p.right, scope);
        return;
      default:
        visit(p, scope); // a member expression as an assignment target
    }
  };
  const visitFunction = (f: Node, outer: Scope): void => {
    const scope = new Scope(outer);
    if (f.type !== "ArrowFunctionExpression") scope.names.add("arguments");
    if (f.type === "FunctionExpression" && isNode(f.id)) scope.names.add(f.id.name as string);
    for (const p of f.params as unknown[]) patternNames(p, scope.names);
    const body = f.body as Node | null;
    if (body?.type === "BlockStatement" || body?.type === "FunctionBody") {
      hoisted(body.body, scope.names);
      blockNames(body.body, scope.names);
    }
    for (const p of f.params as unknown[]) visitPattern(p, scope);
    if (body?.type === "BlockStatement" || body?.type === "FunctionBody")
      for (const s of body.body as Node[]) visit(s, scope);
    else visit(body, scope);
  };
  const visit = (node: unknown, scope: Scope): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, scope));
    if (!isNode(node)) return;
    switch (node.type) {
      case "Identifier":
        if (!scope.has(node.name as string)) free.add(node.name as string);
        return;
      case "FunctionDeclaration":
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        return visitFunction(node, scope);
      case "BlockStatement":
      case "StaticBlock": {
        const inner = new Scope(scope);
        blockNames(node.body, inner.names);
        return visit(node.body, inner);
      }
      case "SwitchStatement": {
        visit(node.discriminant, scope);
        const inner = new Scope(scope);
        for (const c of node.cases as Node[]) blockNames(c.consequent, inner.names);
        return visit(node.cases, inner);
      }
      case "ForStatement":
      case "ForInStatement":
      case "ForOfStatement": {
        const inner = new Scope(scope);
        const head = (node.type === "ForStatement" ? node.init : node.left) as Node | null;
        if (head?.type === "VariableDeclaration")
          for (const d of head.declarations as Node[]) patternNames(d.id, inner.names);
        if (head && head.type !== "VariableDeclaration") visitPattern(head, inner);
        else visit(head, inner);
        for (const k of ["test", "update", "right", "body"]) visit(node[k], inner);
        return;
      }
      case "CatchClause": {
        const inner = new Scope(scope);
        patternNames(node.param, inner.names);
        visitPattern(node.param, inner);
        return visit(node.body, inner);
      }
      case "ClassDeclaration":
      case "ClassExpression": {
        const inner = new Scope(scope);
        if (isNode(node.id)) inner.names.add(node.id.name as string);
        visit(node.superClass, inner);
        return visit(node.body, inner);
      }
      case "VariableDeclaration":
        for (const d of node.declarations as Node[]) {
          visitPattern(d.id, scope);
          visit(d.init, scope);
        }
        return;
      case "MemberExpression":
        visit(node.object, scope);
        if (node.computed) visit(node.property, scope);
        return;
      case "Property":
      case "MethodDefinition":
      case "PropertyDefinition":
      case "AccessorProperty":
        if (node.computed) visit(node.key, scope);
        return visit(node.value, scope);
      case "LabeledStatement":
        return visit(node.body, scope);
      case "BreakStatement":
      case "ContinueStatement":
      case "MetaProperty":
      case "PrivateIdentifier":
        return;
      default:
        for (const [k, v] of Object.entries(node)) if (k !== "type" && typeof v === "object") visit(v, scope);
    }
  };
  visit(root, new Scope());
  return free;
}

/** Parses a function's source; method shorthand (`f(x) { … }`) is read as an object member. */
function parseFunction(source: string, name: string): { expr: string; ast: Node } | undefined {
  for (const expr of [`(${source})`, `({ ${source} })[${JSON.stringify(name)}]`]) {
    try {
      return { expr, ast: parse(expr, { ecmaVersion: "latest", sourceType: "script" }) as unknown as Node };
    } catch {
      // not this form; try the next
    }
  }
  return undefined;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Why a value is not JSON (a path into it and what it holds), or undefined when it is. */
function notJson(v: unknown, path: string): string | undefined {
  if (v === null || typeof v === "string" || typeof v === "boolean") return undefined;
  if (typeof v === "number") return Number.isFinite(v) ? undefined : `${path} is ${v}`;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const why = notJson(v[i], `${path}[${i}]`);
      if (why) return why;
    }
    return undefined;
  }
  if (isPlain(v)) {
    for (const [k, x] of Object.entries(v)) {
      const why = notJson(x, `${path}.${k}`);
      if (why) return why;
    }
    return undefined;
  }
  if (v === undefined) return `${path} is undefined`;
  const what = typeof v === "object" ? ((v as object).constructor?.name ?? "object") : typeof v;
  return `${path} is ${what === "Object" ? "an object" : `a ${what}`}`;
}

/**
 * The travelling form of a user function, or a BasinError naming the outer variables
 * it uses. `what` names the function in messages ("the function passed to map").
 *
 * @example
 * captureFn((x: number) => x * factor, "map", loc, { with: { factor: 2 } })
 */
export function captureFn(
  fn: unknown,
  what: string,
  loc: SourceLocation | undefined,
  options: UserFnOptions = {},
): FnSpec {
  if (typeof fn !== "function")
    throw new BasinError("BASIN_PLAN", `${what} expects a function, got ${fn === null ? "null" : typeof fn}`, loc);
  const name = fn.name || "anonymous";
  const source = Function.prototype.toString.call(fn);
  const label = `${what} (function ${JSON.stringify(name)})`;
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source))
    throw new BasinError(
      "BASIN_PLAN",
      `${label} is a built-in or bound function, which cannot travel to worker threads; wrap it, e.g. (x) => Math.sqrt(x)`,
      loc,
    );
  const parsed = parseFunction(source, name);
  if (!parsed)
    throw new BasinError(
      "BASIN_PLAN",
      `${label}: its source text does not parse as a function, so it cannot travel to worker threads`,
      loc,
    );
  const given = options.with ?? {};
  if (!isPlain(given)) throw new BasinError("BASIN_PLAN", `${what}: \`with\` must be an object of name: value`, loc);
  const free = [...freeNames(parsed.ast)].filter((n) => !GLOBALS.has(n) && !(n in given));
  if (free.length > 0) {
    const vars = free.map((n) => `"${n}"`).join(", ");
    const pass = `{ with: { ${free.join(", ")} } }`;
    throw new BasinError(
      "BASIN_PLAN",
      `${label} uses ${vars} from outside the function; functions run on worker threads and see only their arguments. ` +
        `Define ${free.length === 1 ? "it" : "them"} inside the function, or pass ${free.length === 1 ? "it" : "them"} explicitly: ${pass}`,
      loc,
    );
  }
  const captured: FnSpec["captured"] = {};
  for (const [k, v] of Object.entries(given)) {
    if (typeof v === "function") {
      captured[k] = { fn: captureFn(v, `${what}: \`with.${k}\``, loc) };
      continue;
    }
    const why = notJson(v, `with.${k}`);
    if (why)
      throw new BasinError(
        "BASIN_PLAN",
        `${what}: ${why}; values passed with \`with\` must be JSON values (or functions)`,
        loc,
      );
    captured[k] = { value: v as JsonValue };
  }
  return { source: parsed.expr, name, captured };
}

export { notJson };
