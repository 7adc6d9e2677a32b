/**
 * The four patch types of the Kubernetes API and their media types: one
 * table for the kit's own client (which sends them) and the proxy's request
 * classifier (which reads them off the operator's requests).
 */
export type PatchType = "json" | "merge" | "strategic" | "apply";

export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

const byMediaType = new Map<string, PatchType>([
  ...Object.entries(PATCH_CONTENT_TYPES).map(([type, media]) => [media, type as PatchType] as const),
  // Server-side apply may also arrive as CBOR (client-go's newer encoders).
  ["application/apply-patch+cbor", "apply"],
]);

/** The patch type a Content-Type header names, or undefined for anything else. */
export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const media = contentType?.split(";")[0]?.trim().toLowerCase();
  return media === undefined ? undefined : byMediaType.get(media);
}
