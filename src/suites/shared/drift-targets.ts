/**
 * Drift targets: the managed fields of a child the drift suite perturbs, and
 * the perturbation itself. Pure: the suite reads the live objects and hands
 * them here.
 *
 * Defaults (docs/checks/drift/managed-field.md): a Service's selector
 * values, every port's `port` and `targetPort`; a Deployment's `replicas` (when the
 * operator wrote it), its template labels outside the selector, and each
 * container's image, args and env; for any other kind, the scalar fields
 * under `spec` or `data` that the operator's own write set. Immutable fields
 * (a Deployment's selector) are never targets: the API server would refuse
 * the perturbation.
 */

import { normalisedName } from "../../proxy/faults.js";
import { secretHash } from "../../proxy/secret-redaction.js";
import {
  fits,
  roleOf,
  type ChildRole,
  type ChildRoles,
  type NameTemplate,
} from "../../scenario/child-roles.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { asRecord, valueAt } from "../../util/records.js";

/** A path into an object: keys, and list positions. */
export type FieldPath = readonly (string | number)[];

export interface DriftTarget {
  /** "Service/hello spec.ports[0].port": stable across runs (a UID in a name reads <uid>). */
  readonly id: string;
  readonly kind: string;
  /** The child's name with UIDs normalised: the same child in every scenario. */
  readonly name: string;
  readonly path: FieldPath;
  /** The value in the reference state. */
  readonly value: unknown;
  /** A valid value of the same type that differs. */
  readonly perturbed: unknown;
}

/** "spec.ports[0].port" */
export function formatPath(path: FieldPath): string {
  return path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${part}`))
    .join("");
}

// Where a child's value is read (the role comparisons read it too): util/records.ts.
export { valueAt } from "../../util/records.js";

/** A different valid value of the same type: numbers +1, strings suffixed, lists and maps extended, booleans flipped. */
export function perturb(value: unknown): unknown {
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (typeof value === "string") return `${value}-drift`;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === "string")) return [...value, "--drift"] as unknown[];
    if (value.every((v) => typeof v === "object" && v !== null && "name" in v)) {
      return [...(value as unknown[]), { name: "RECONCILE_CONFORMANCE_DRIFT", value: "drift" }];
    }
  }
  return undefined;
}

interface Selection {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/** Field managers that are never the operator: the kit itself and the built-in controllers. */
const NOT_THE_OPERATOR = new Set([
  "reconcile-conformance",
  "kube-controller-manager",
  "kube-scheduler",
  "kubelet",
  "kwok",
]);

/**
 * The paths the operator manages in a live object, from its managedFields
 * (every manager but the kit and the built-in controllers; the operator may
 * not name its field manager). A keyed list element (`k:{"name":"web"}`) is
 * resolved to its position in the live list.
 */
export function operatorManagedPaths(object: unknown): FieldPath[] {
  const entries = valueAt(object, ["metadata", "managedFields"]);
  const paths: FieldPath[] = [];
  for (const entry of Array.isArray(entries) ? entries : []) {
    const manager = text(asRecord(entry).manager);
    if (NOT_THE_OPERATOR.has(manager) || manager.startsWith("kwok")) continue;
    walkFields(asRecord(asRecord(entry).fieldsV1), [], object, paths);
  }
  return paths;
}

function walkFields(
  fields: Record<string, unknown>,
  prefix: FieldPath,
  object: unknown,
  out: FieldPath[],
): void {
  const keys = Object.keys(fields).filter((k) => k !== ".");
  if (keys.length === 0) {
    out.push(prefix);
    return;
  }
  for (const key of keys) {
    const child = asRecord(fields[key]);
    if (key.startsWith("f:")) {
      walkFields(child, [...prefix, key.slice(2)], object, out);
    } else if (key.startsWith("k:")) {
      const list = valueAt(object, prefix);
      let wanted: Record<string, unknown>;
      try {
        wanted = asRecord(JSON.parse(key.slice(2)));
      } catch {
        continue;
      }
      const index = Array.isArray(list)
        ? list.findIndex((item) => Object.entries(wanted).every(([k, v]) => asRecord(item)[k] === v))
        : -1;
      if (index >= 0) walkFields(child, [...prefix, index], object, out);
    } else if (key.startsWith("i:")) {
      walkFields(child, [...prefix, Number(key.slice(2))], object, out);
    }
  }
}

/** The drift targets of one child, from its live object (with managedFields). */
export function driftTargets(
  child: {
    readonly kind: string;
    readonly object: unknown;
    /** The name the child goes by in every scenario (its role's: child-roles.ts); default its normalised name. */
    readonly name?: string;
    /** How that name varies with the life, when it does: a contract's target naming any life's name fits it. */
    readonly template?: NameTemplate;
  },
  selection: Selection,
): DriftTarget[] {
  const managed = operatorManagedPaths(child.object);
  const manages = (path: FieldPath) => managed.some((m) => formatPath(m) === formatPath(path));
  const name = child.name ?? normalisedName({ name: text(valueAt(child.object, ["metadata", "name"])) });
  const candidates: FieldPath[] = [];
  const spec = valueAt(child.object, ["spec"]);
  if (child.kind === "Service") {
    for (const key of Object.keys(asRecord(valueAt(spec, ["selector"]))))
      candidates.push(["spec", "selector", key]);
    const ports = valueAt(spec, ["ports"]);
    (Array.isArray(ports) ? ports : []).forEach((_port, i) => {
      candidates.push(["spec", "ports", i, "port"], ["spec", "ports", i, "targetPort"]);
    });
  } else if (child.kind === "Deployment" || child.kind === "StatefulSet" || child.kind === "DaemonSet") {
    if (child.kind !== "DaemonSet" && manages(["spec", "replicas"])) {
      candidates.push(["spec", "replicas"]);
    }
    const selector = asRecord(valueAt(spec, ["selector", "matchLabels"]));
    for (const key of Object.keys(asRecord(valueAt(spec, ["template", "metadata", "labels"])))) {
      if (!(key in selector)) candidates.push(["spec", "template", "metadata", "labels", key]);
    }
    const containers = valueAt(spec, ["template", "spec", "containers"]);
    (Array.isArray(containers) ? containers : []).forEach((container, i) => {
      const base = ["spec", "template", "spec", "containers", i];
      candidates.push([...base, "image"]);
      for (const field of ["args", "env"]) {
        if (asRecord(container)[field] !== undefined) candidates.push([...base, field]);
      }
    });
  } else {
    candidates.push(...managed.filter((path) => path[0] === "spec" || path[0] === "data"));
  }
  const targets: DriftTarget[] = [];
  // A Secret's `data` holds base64: the perturbed value must be base64 too, or the server refuses it.
  // A Service's port must stay unique among its ports of the same protocol: the next free number.
  const perturbAt = (path: FieldPath, value: unknown) =>
    child.kind === "Secret" && path[0] === "data" && typeof value === "string"
      ? Buffer.from(`${Buffer.from(value, "base64").toString("utf8")}-drift`).toString("base64")
      : child.kind === "Service" && isServicePortNumber(path) && typeof value === "number"
        ? freeServicePort(child.object, path, value)
        : perturb(value);
  for (const path of candidates) {
    const value = valueAt(child.object, path);
    const perturbed = perturbAt(path, value);
    if (value === undefined || perturbed === undefined) continue;
    targets.push({
      id: `${child.kind}/${name} ${formatPath(path)}`,
      kind: child.kind,
      name,
      path,
      value,
      perturbed,
    });
  }
  for (const extra of selection.include) {
    const parsed = parseTargetId(extra);
    if (!parsed || parsed.kind !== child.kind || !namesChild(parsed.name, name, child.template)) continue;
    if (targets.some((t) => formatPath(t.path) === formatPath(parsed.path))) continue;
    const value = valueAt(child.object, parsed.path);
    const perturbed = perturbAt(parsed.path, value);
    if (value === undefined || perturbed === undefined) continue;
    targets.push({
      id: `${child.kind}/${name} ${formatPath(parsed.path)}`,
      kind: child.kind,
      name,
      path: parsed.path,
      value,
      perturbed,
    });
  }
  return targets.filter(
    (t) => !selection.exclude.some((pattern) => matchesTarget(pattern, t, child.template)),
  );
}

/** Whether a path is a Service port's number (`spec.ports[i].port`). */
export function isServicePortNumber(path: FieldPath): boolean {
  return path.length === 4 && path[0] === "spec" && path[1] === "ports" && path[3] === "port";
}

/** The next port number after `value` no port of the Service with the same protocol uses. */
export function freeServicePort(service: unknown, path: FieldPath, value: number): number {
  const ports = valueAt(service, ["spec", "ports"]);
  const protocol = (port: unknown) => text(asRecord(port).protocol) || "TCP";
  const own = protocol(valueAt(service, path.slice(0, 3)));
  const taken = new Set(
    (Array.isArray(ports) ? ports : [])
      .filter((port) => protocol(port) === own)
      .map((port) => asRecord(port).port),
  );
  let next = value + 1;
  while (taken.has(next)) next++;
  return next;
}

/**
 * Whether a contract's target names this child: no name names every child
 * of the kind; otherwise its role's name ("orders-auth-*"), or a literal
 * name of any life ("orders-auth-1a2b3c4d", a full UID in it or not) that
 * fits the role's template.
 */
function namesChild(written: string | undefined, name: string, template: NameTemplate | undefined): boolean {
  if (written === undefined || written === name) return true;
  const normalised = normalisedName({ name: written });
  return normalised === name || (template !== undefined && fits(template, normalised));
}

/**
 * "Service/spec.selector", "Service/web spec.ports[0].port" or
 * "Deployment/spec.replicas" against a target (of a child whose name
 * varies as `template` says, when it does).
 */
export function matchesTarget(pattern: string, target: DriftTarget, template?: NameTemplate): boolean {
  const parsed = parseTargetId(pattern);
  if (!parsed || parsed.kind !== target.kind) return false;
  if (!namesChild(parsed.name, target.name, template)) return false;
  const wanted = formatPath(parsed.path);
  const actual = formatPath(target.path);
  return actual === wanted || actual.startsWith(`${wanted}.`) || actual.startsWith(`${wanted}[`);
}

/** Parses "Kind/path" or "Kind/name path" (path in the formatPath notation). */
export function parseTargetId(text: string): { kind: string; name?: string; path: FieldPath } | undefined {
  const match = /^([A-Za-z][A-Za-z0-9]*)\/(?:(\S+)\s+)?([A-Za-z][^\s]*)$/.exec(text.trim());
  if (!match) return undefined;
  const path: (string | number)[] = [];
  for (const part of (match[3] ?? "").split(".")) {
    const segment = /^([^[\]]+)((?:\[\d+\])*)$/.exec(part);
    if (!segment) return undefined;
    path.push(segment[1] ?? "");
    for (const index of (segment[2] ?? "").matchAll(/\[(\d+)\]/g)) path.push(Number(index[1]));
  }
  return { kind: match[1] ?? "", ...(match[2] ? { name: match[2] } : {}), path };
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A JSON pointer (RFC 6901) for a path. */
export function jsonPointer(path: FieldPath): string {
  return path.map((part) => `/${String(part).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/**
 * The kit's drift write: the target set to its perturbed value, and a
 * foreign annotation and label added, in one JSON patch (list elements need
 * a JSON patch; a merge patch would replace the whole list).
 */
export function driftPatch(
  target: DriftTarget,
  live: unknown,
  foreign: { readonly annotation: readonly [string, string]; readonly label: readonly [string, string] },
): unknown[] {
  const ops: unknown[] = [{ op: "replace", path: jsonPointer(target.path), value: target.perturbed }];
  for (const [field, [key, value]] of [
    ["annotations", foreign.annotation],
    ["labels", foreign.label],
  ] as const) {
    if (valueAt(live, ["metadata", field]) === undefined) {
      ops.push({ op: "add", path: `/metadata/${field}`, value: { [key]: value } });
    } else {
      ops.push({ op: "add", path: jsonPointer(["metadata", field, key]), value });
    }
  }
  return ops;
}

/** A child of a reference as one scenario's target, with its managed fields. */
export interface ChildTarget {
  /** "Service/hello", "Secret/orders-auth-*": the child's kind and role, the same in every scenario. */
  readonly name: string;
  readonly child: ReferenceChild;
  /** Its role, when the reference learned one (child-roles.ts). */
  readonly role?: ChildRole;
  /** Its managed fields in the reference (the drift targets of its object). */
  readonly fields: readonly DriftTarget[];
}

/**
 * One target per child of a reference, each with its managed fields; when
 * the reference has no child, the skip (target "children") with `none` as
 * its reason.
 */
export function childTargets(
  children: readonly ReferenceChild[],
  selection: Selection,
  none: string,
  roles?: ChildRoles,
): ChildTarget[] | { readonly target: string; readonly skip: string } {
  if (children.length === 0) return { target: "children", skip: none };
  return children.map((child) => {
    const match = roleOf(roles, child.ref.kind, child.ref.name);
    const name = match.status === "role" ? match.role.key : match.key;
    return {
      name,
      child,
      ...(match.status === "role" ? { role: match.role } : {}),
      fields: driftTargets(
        {
          kind: child.ref.kind,
          object: child.object,
          name: name.slice(child.ref.kind.length + 1),
          ...(match.status === "role" && match.role.template ? { template: match.role.template } : {}),
        },
        selection,
      ),
    };
  });
}

/**
 * A child's value as evidence and messages show it: a Secret's `data` and
 * `stringData` as a keyed hash (secret-redaction.ts), so a difference still
 * shows as different hashes and the value itself never reaches a report.
 */
export function shownValue(kind: string, path: FieldPath, value: unknown): unknown {
  const secret = kind === "Secret" && (path[0] === "data" || path[0] === "stringData");
  return secret && value !== undefined ? secretHash(value) : value;
}
