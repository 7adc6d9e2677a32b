import { celEnv, isCelError, parse, plan, type CelInput } from "@bufbuild/cel";
import { asRecord } from "../util/records.js";
import { observedGenerationValue, readinessCondition, type Condition } from "./observed-generation.js";

/**
 * When the custom resource counts as ready: the default looks at its
 * conditions, a CEL expression (what Kubernetes itself uses for validation
 * rules, so operator authors already write it) looks at anything, and
 * `quiet` has no predicate at all (convergence then rests on the operator
 * being quiet and its children existing).
 */
export type Readiness =
  | { readonly kind: "conditions" }
  | { readonly kind: "quiet" }
  | { readonly kind: "cel"; readonly expression: string; readonly evaluate: (self: unknown) => unknown };

export interface ReadinessResult {
  readonly ready: boolean;
  /** Why not (or why), for progress lines and evidence. */
  readonly reason: string;
  /**
   * Whether the answer states the generation it is about (a condition with
   * an observedGeneration): only then is a True after a spec update known
   * to be about the update, not the answer from before it.
   */
  readonly aboutGeneration?: true;
}

/** A CEL expression that does not compile, with where. */
export class CelCompileError extends Error {
  constructor(
    message: string,
    /** 1-based line and column in the expression, when the parser said. */
    readonly position?: { readonly line: number; readonly column: number },
  ) {
    super(message);
    this.name = "CelCompileError";
  }
}

/** Compiles a readiness expression once; throws CelCompileError with its position. */
export function compileCelReadiness(expression: string): Readiness {
  let program: (bindings: { self: CelInput }) => unknown;
  try {
    program = plan(celEnv(), parse(expression));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The parser reports "<input>:LINE:COL: what it found".
    const at = /<input>:(\d+):(\d+):\s*(.*)$/s.exec(message);
    throw new CelCompileError(
      at ? (at[3] ?? message) : message,
      at ? { line: Number(at[1]), column: Number(at[2]) } : undefined,
    );
  }
  return { kind: "cel", expression, evaluate: (self) => program({ self: toCel(self) }) };
}

/** Evaluates readiness on the custom resource as the API server has it now. */
export function evaluateReadiness(readiness: Readiness, object: unknown): ReadinessResult {
  switch (readiness.kind) {
    case "quiet":
      return { ready: true, reason: "no readiness predicate (quiet)" };
    case "conditions":
      return conditionsReady(object);
    case "cel": {
      const value = readiness.evaluate(object);
      if (isCelError(value)) return { ready: false, reason: `${readiness.expression}: ${value.message}` };
      if (typeof value !== "boolean") {
        return { ready: false, reason: `${readiness.expression} gave ${String(value)}, not a boolean` };
      }
      return { ready: value, reason: `${readiness.expression} is ${value}` };
    }
  }
}

/**
 * A Ready (or, failing that, Available) condition True, observed for the
 * current generation (observed-generation.ts); with no observedGeneration
 * at all, a True condition is taken as it is (an operator that reports no
 * generation at all).
 */
function conditionsReady(object: unknown): ReadinessResult {
  const generation = asRecord(asRecord(object).metadata).generation;
  const condition = readinessCondition(object);
  if (!condition) return { ready: false, reason: "no Ready or Available condition yet" };
  const name = condition.type;
  if (condition.status !== "True")
    return { ready: false, reason: `${name}=${String(condition.status)}${whyNotReady(condition)}` };
  const observed = JSON.stringify(observedGenerationValue(object));
  if (observed !== undefined && observed !== JSON.stringify(generation)) {
    return {
      ready: false,
      reason: `${name}=True for generation ${observed}, current is ${JSON.stringify(generation)}`,
    };
  }
  return {
    ready: true,
    reason: `${name}=True${observed === undefined ? "" : ` for generation ${observed}`}`,
    ...(observed === undefined ? {} : { aboutGeneration: true as const }),
  };
}

/**
 * JSON as CEL sees a Kubernetes object: objects are maps, whole numbers are
 * ints (as the API server's CEL reads integer fields), others doubles.
 */
function toCel(value: unknown): CelInput {
  if (Array.isArray(value)) return value.map(toCel);
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value === "object" && value !== null) {
    return new Map(Object.entries(value).map(([key, item]) => [key, toCel(item)]));
  }
  return value as CelInput;
}

/** The longest message a readiness reason quotes. */
const WHY_MAX = 200;

/**
 * What the operator wrote about a condition that is not True, as " (reason: message)":
 * a timeout that says "Available=False" hides why, which the operator usually said.
 */
function whyNotReady(condition: Condition): string {
  const { reason, message } = condition as Condition & { reason?: unknown; message?: unknown };
  const text = (value: unknown) => (typeof value === "string" ? value.trim() : "");
  const said = [text(reason), text(message)].filter((part) => part !== "").join(": ");
  if (said === "") return "";
  return ` (${said.length > WHY_MAX ? `${said.slice(0, WHY_MAX - 1)}…` : said})`;
}
