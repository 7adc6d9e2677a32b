import type { ApiServerConnection } from "../kube/api-server-connection.js";
import { changedPaths, formatObjectPath, parsePath } from "../util/object-paths.js";
import type { RequestInfo } from "./request-classifier.js";

/**
 * Which fields a write changed, from the stored object before and after it.
 * Both states are exact: the object the write was conditioned on (the
 * proxy's own read, or a list at that resourceVersion with
 * resourceVersionMatch=Exact) and the one it left (its JSON answer, or the
 * same exact list at the answered resourceVersion, for a protobuf answer).
 * Undefined when either cannot be had (a revision already compacted, say):
 * the write log then says nothing rather than something uncertain.
 */

/** What the API server maintains on every write: never a change the writer made. */
// kind and apiVersion: a list leaves them out of its items; they are the type, never a change.
const SERVER_MAINTAINED = [
  "kind",
  "apiVersion",
  "metadata.resourceVersion",
  "metadata.managedFields",
  "metadata.generation",
].map(parsePath);

type StoredObject = { readonly metadata?: { readonly resourceVersion?: unknown } } & Record<string, unknown>;

export interface ChangedFieldsInput {
  readonly info: RequestInfo;
  /** The resourceVersion the write was applied to. */
  readonly basedOn: string;
  /** The object as the proxy read it before the write, when it did. */
  readonly prior?: unknown;
  /** The write's answer, when it was JSON and is the object itself (not a /scale write's Scale). */
  readonly answered?: unknown;
  readonly answeredResourceVersion: string;
}

export async function readChangedFields(
  connection: ApiServerConnection,
  input: ChangedFieldsInput,
): Promise<string[] | undefined> {
  const at = async (resourceVersion: string, known: unknown): Promise<StoredObject | undefined> =>
    resourceVersionOf(known) === resourceVersion
      ? (known as StoredObject)
      : exactRead(connection, input.info, resourceVersion);
  const [before, after] = await Promise.all([
    at(input.basedOn, input.prior),
    at(input.answeredResourceVersion, input.answered),
  ]);
  if (!before || !after) return undefined;
  return changedPaths(before, after, SERVER_MAINTAINED).map(formatObjectPath);
}

function resourceVersionOf(object: unknown): unknown {
  return (object as StoredObject | undefined)?.metadata?.resourceVersion;
}

/** The object as it was stored at `resourceVersion` (the kit's credentials, JSON), or undefined. */
async function exactRead(
  connection: ApiServerConnection,
  info: RequestInfo,
  resourceVersion: string,
): Promise<StoredObject | undefined> {
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  const ns = info.namespace ? `/namespaces/${encodeURIComponent(info.namespace)}` : "";
  const query = new URLSearchParams({
    fieldSelector: `metadata.name=${info.name ?? ""}`,
    resourceVersion,
    resourceVersionMatch: "Exact",
  });
  try {
    const answer = await connection.exchange({
      method: "GET",
      path: `${base}${ns}/${info.resource}?${query.toString()}`,
      headers: { Accept: "application/json" },
      idleTimeoutMs: 30_000,
    });
    if (answer.status !== 200) return undefined;
    const list = JSON.parse(answer.body.toString("utf8")) as { items?: StoredObject[] };
    return list.items?.length === 1 ? list.items[0] : undefined;
  } catch {
    return undefined;
  }
}
