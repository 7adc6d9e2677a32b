import { randomBytes } from "node:crypto";
import { PATCH_CONTENT_TYPES } from "../kube/patch-types.js";
import type { Mutation, MutationTarget } from "./faults.js";
import type { RequestInfo } from "./request-classifier.js";

/** The annotation `conflict-before` (and a default `mutate-before`) writes. */
export const CONCURRENT_WRITE_ANNOTATION = "reconcile-conformance.dev/concurrent-write";

/** One HTTP write the kit makes for a fault. */
export interface KitWriteRequest {
  readonly method: "PATCH";
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

/** The kit's write for `mutate-before`: a merge patch that annotates, or the given patch. */
export function mutationRequest(
  mutation: Mutation,
  target: MutationTarget,
  written: RequestInfo,
): KitWriteRequest {
  const object = target === "written-object" ? { ...written, subresource: undefined } : target;
  const path = objectPath(object);
  if (mutation.kind === "annotate") {
    const key = mutation.key ?? CONCURRENT_WRITE_ANNOTATION;
    const patch = { metadata: { annotations: { [key]: randomBytes(4).toString("hex") } } };
    return {
      method: "PATCH",
      path,
      contentType: PATCH_CONTENT_TYPES.merge,
      body: Buffer.from(JSON.stringify(patch)),
    };
  }
  return {
    method: "PATCH",
    path,
    contentType: PATCH_CONTENT_TYPES[mutation.patchType],
    body: Buffer.from(JSON.stringify(mutation.patch)),
  };
}

/** The URL path of an object (and optionally one of its subresources). */
export function objectPath(object: {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
}): string {
  const base = object.group ? `/apis/${object.group}/${object.version}` : `/api/${object.version}`;
  const ns = object.namespace ? `/namespaces/${encodeURIComponent(object.namespace)}` : "";
  const sub = object.subresource ? `/${object.subresource}` : "";
  return `${base}${ns}/${object.resource}/${encodeURIComponent(object.name ?? "")}${sub}`;
}
