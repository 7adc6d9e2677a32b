/**
 * A namespaced CustomResourceDefinition of the group example.com that serves
 * and stores one version, v1, with the given schema: the CRD file a test
 * project gives the contract loader or `init`.
 */
export function exampleCrd(
  names: { plural: string; singular: string; kind: string },
  openAPIV3Schema: Record<string, unknown>,
) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.example.com` },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names,
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  };
}
