// Conditional expressions: when(c1).then(v1).when(c2).then(v2).otherwise(v3).
import type { ExprNode } from "../common/expr.js";
import type { SourceLocation } from "../common/errors.js";
import { Expr, exprNode, type ExprLike } from "./expr.js";
import { callerLocation } from "./source_location.js";

type Branches = readonly ExprNode[]; // cond1, value1, cond2, value2, ...

function caseNode(branches: Branches, otherwise: ExprNode, loc: SourceLocation | undefined): ExprNode {
  return { kind: "fn", name: "when", args: [...branches, otherwise], loc };
}

/** A `when(cond)` waiting for its `then(value)`. */
export class When {
  /** @internal */
  constructor(
    private readonly branches: Branches,
    private readonly cond: ExprNode,
  ) {}

  /**
   * The value where the condition is true.
   *
   * @example
   * when(col("fare").gt(50)).then("high")
   */
  then(value: ExprLike): Then {
    const loc = callerLocation();
    return new Then([...this.branches, this.cond, exprNode(value)], loc);
  }
}

/**
 * A conditional expression with at least one branch; used as is, rows that match no
 * branch are null. The first branch whose condition is true wins; a null condition counts as false.
 */
export class Then extends Expr {
  /** @internal */
  constructor(
    private readonly branches: Branches,
    private readonly loc: SourceLocation | undefined,
  ) {
    super(caseNode(branches, { kind: "lit", value: null }, loc));
  }

  /**
   * Another branch, tried when the earlier ones are not true.
   *
   * @example
   * when(col("v").lt(0)).then("neg").when(col("v").eq(0)).then("zero").otherwise("pos")
   */
  when(cond: ExprLike): When {
    return new When(this.branches, exprNode(cond));
  }

  /**
   * The value where no branch is true.
   *
   * @example
   * when(col("v").lt(0)).then(0).otherwise(col("v"))
   */
  otherwise(value: ExprLike): Expr {
    return new Expr(caseNode(this.branches, exprNode(value), this.loc));
  }
}

/**
 * Starts a conditional expression (SQL CASE WHEN).
 *
 * @example
 * df.withColumns({ size: when(col("fare").gt(50)).then("big").otherwise("small") })
 */
export function when(cond: ExprLike): When {
  return new When([], exprNode(cond));
}
