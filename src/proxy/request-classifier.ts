import { patchTypeOf, type PatchType as KnownPatchType } from "../kube/patch-types.js";

/**
 * What a request to the API server is about, read from its method, URL and
 * Content-Type alone: the proxy never parses a body to route or log a read.
 */

export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "deletecollection"
  | "proxy"
  | "connect"
  | "nonresource";

/** A known patch type, or "unknown" for a PATCH with any other Content-Type. */
export type PatchType = KnownPatchType | "unknown";

/** Which object (or collection) a request, a write or a read is about. */
export interface ResourceIdentity {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name, e.g. "deployments"; "" for non-resource paths. */
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

export interface RequestInfo extends ResourceIdentity {
  readonly verb: Verb;
  readonly patchType?: PatchType;
  /** The URL path, for non-resource requests and logs. */
  readonly path: string;
}

const MUTATING: ReadonlySet<Verb> = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** True for verbs that change state: the ones the write log records. */
export function isMutating(verb: Verb): boolean {
  return MUTATING.has(verb);
}

/**
 * Classifies a request the way kube-apiserver's request-info resolver does:
 *   /api/{version}/...                       core group
 *   /apis/{group}/{version}/...              named groups
 *   .../namespaces/{ns}/{resource}[/{name}[/{subresource}]]
 *   .../watch/...                            legacy watch paths
 *   ?watch=true|1                            watch on a collection or object
 */
export function classifyRequest(method: string, url: string, contentType?: string): RequestInfo {
  const parsed = new URL(url, "http://classifier.invalid");
  const path = parsed.pathname;
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  const nonResource: RequestInfo = { verb: "nonresource", group: "", version: "", resource: "", path };

  let rest: string[];
  let group: string;
  let version: string;
  if (parts[0] === "api" && parts.length >= 2) {
    group = "";
    version = parts[1] ?? "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 3) {
    group = parts[1] ?? "";
    version = parts[2] ?? "";
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  if (rest.length === 0) return { ...nonResource, group, version }; // discovery of a group version

  let legacyWatch = false;
  if (rest[0] === "watch") {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  } else if (rest[0] === "namespaces" && rest.length === 2) {
    // /api/v1/namespaces/{name}: the namespace object itself.
    rest = ["namespaces", rest[1] ?? ""];
  }
  if (namespace !== undefined && rest.length === 1 && (rest[0] === "status" || rest[0] === "finalize")) {
    // /api/v1/namespaces/{name}/status|finalize: subresources of the namespace, not a collection in it.
    rest = ["namespaces", namespace, rest[0]];
    namespace = undefined;
  }
  const [resource = "", name, subresource] = rest;
  const watchParam = parsed.searchParams.get("watch");
  const watching = legacyWatch || watchParam === "true" || watchParam === "1";

  let verb: Verb;
  switch (method.toUpperCase()) {
    case "GET":
    case "HEAD":
      verb = watching ? "watch" : name === undefined ? "list" : "get";
      break;
    case "POST":
      // A POST to a subresource (eviction, binding) creates that subresource.
      verb = "create";
      break;
    case "PUT":
      verb = "update";
      break;
    case "PATCH":
      verb = "patch";
      break;
    case "DELETE":
      verb = name === undefined ? "deletecollection" : "delete";
      break;
    default:
      verb = "connect";
  }
  if (subresource === "proxy") verb = "proxy";
  if (subresource === "exec" || subresource === "attach" || subresource === "portforward") verb = "connect";

  return {
    verb,
    group,
    version,
    resource,
    path,
    ...(namespace === undefined ? {} : { namespace }),
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
    ...(verb === "patch" ? { patchType: patchTypeOf(contentType) ?? "unknown" } : {}),
  };
}

/** "deployments.apps/web -n ns" style identity for messages. */
export function describeRequest(info: RequestInfo): string {
  if (info.verb === "nonresource") return `${info.verb} ${info.path}`;
  const resource = info.group ? `${info.resource}.${info.group}` : info.resource;
  const sub = info.subresource ? `/${info.subresource}` : "";
  const name = info.name ? `/${info.name}` : "";
  const ns = info.namespace ? ` -n ${info.namespace}` : "";
  return `${info.verb} ${resource}${name}${sub}${ns}`;
}
