/**
 * Built-in resources whose API strategy allows an update (PUT) without a
 * resourceVersion: `AllowUnconditionalUpdate()` returns true for them in
 * kube-apiserver v1.35's registry (pkg/registry/<group>/<resource>/strategy.go;
 * their status strategies embed the main one). Every other resource answers
 * such an update 422 "must be specified for an update": custom resources
 * above all (apiextensions' strategy returns false), and Leases, CRDs,
 * PodDisruptionBudgets, webhook configurations and others. The proxy adds a
 * precondition to an unconditional update only for the resources listed
 * here: elsewhere it would turn the server's refusal into a success.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  "": [
    "configmaps",
    "endpoints",
    "events",
    "limitranges",
    "namespaces",
    "nodes",
    "persistentvolumes",
    "persistentvolumeclaims",
    "pods",
    "podtemplates",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "services",
    "serviceaccounts",
  ],
  apps: ["controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets"],
  autoscaling: ["horizontalpodautoscalers"],
  batch: ["cronjobs", "jobs"],
  "certificates.k8s.io": ["certificatesigningrequests"],
  "discovery.k8s.io": ["endpointslices"],
  "networking.k8s.io": ["ingresses", "ingressclasses", "networkpolicies"],
  "rbac.authorization.k8s.io": ["clusterroles", "clusterrolebindings", "roles", "rolebindings"],
  "scheduling.k8s.io": ["priorityclasses"],
  "storage.k8s.io": ["storageclasses"],
};

export function allowsUnconditionalUpdate(group: string, resource: string): boolean {
  return ALLOWED[group]?.includes(resource) ?? false;
}
