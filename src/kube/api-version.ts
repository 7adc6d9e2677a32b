/** An apiVersion's group and version: "apps/v1" -> ["apps", "v1"], the core "v1" -> ["", "v1"]. Pure. */
export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}
