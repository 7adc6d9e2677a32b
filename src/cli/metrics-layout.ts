import type { MainPackage } from "./main-package.js";
import { flagNamed, type FoundFlag } from "./webhook-layout.js";

// What init finds of the operator's metrics endpoint: kubebuilder's --metrics-bind-address (older
// scaffolds: --metrics-addr), and --metrics-secure, whose default (true in scaffolds since v4) puts
// the endpoint behind HTTPS and an authorization filter the kit has no token for. Pure.

export interface MetricsFound {
  /** The flag that sets the endpoint's address ("host:port"; "0" switches it off). */
  readonly address: FoundFlag;
  /** A flag that turns HTTPS and authorization off for the kit's plain reads. */
  readonly secure?: FoundFlag;
}

/** The metrics flags of the main package, or undefined when it has no address flag. */
export function findMetrics(main: MainPackage | undefined): MetricsFound | undefined {
  const address = flagNamed(main, /^metrics-(?:bind-)?addr(?:ess)?$/);
  if (address === undefined) return undefined;
  const secure = flagNamed(main, /^metrics-secure$/, "Bool");
  return { address, ...(secure ? { secure } : {}) };
}

/** The contract's operator.metrics.args for what was found. */
export function metricsArgs(found: MetricsFound): string[] {
  return [`${found.address.arg}=127.0.0.1:{port}`, ...(found.secure ? [`${found.secure.arg}=false`] : [])];
}
