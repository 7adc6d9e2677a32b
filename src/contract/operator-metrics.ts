import { z } from "zod";
import type { FieldIssue } from "./operator-deploy.js";

/**
 * `operator.metrics`: where the operator process publishes its work queues'
 * metrics (Prometheus text format), so that the quiescence rule can know
 * when it is done instead of waiting for silence (src/operator/metrics/).
 * Each scenario's operator is given a free port of its own through the
 * flags or variables named here, with `{port}` in their values.
 */

const PORT_PLACEHOLDER = "{port}";
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How long the operator must still be silent once its queues say it is done (a short margin, not the quiet period). */
export const DEFAULT_METRICS_SETTLE = "300ms";

export const operatorMetricsSchema = z
  .strictObject({
    args: z
      .array(z.string().min(1), {
        error: 'expected flags with {port}, e.g. ["--metrics-bind-address=127.0.0.1:{port}"]',
      })
      .default([])
      .describe(
        'Flags the kit appends to the command, with {port} replaced by a free port of the scenario\'s own (kubebuilder: ["--metrics-bind-address=127.0.0.1:{port}", "--metrics-secure=false"]).',
      ),
    env: z
      .record(z.string().regex(ENV_NAME, { error: "expected an environment variable name" }), z.string())
      .default({})
      .describe(
        'Variables the kit sets, with {port} replaced as in args, e.g. { METRICS_ADDR: "127.0.0.1:{port}" }.',
      ),
    path: z
      .string()
      .regex(/^\//, { error: 'expected a path such as "/metrics"' })
      .default("/metrics")
      .describe("The HTTP path of the metrics endpoint (default /metrics)."),
    settle: z
      .string()
      .regex(/^\d+(\.\d+)?(ms|s)$/, { error: 'expected a duration such as "300ms"' })
      .default(DEFAULT_METRICS_SETTLE)
      .describe(
        `How long the operator must make no write once its work queues say it is done (default ${DEFAULT_METRICS_SETTLE}): the margin for what queues cannot show.`,
      ),
  })
  .describe(
    "The operator's metrics endpoint (controller-runtime's workqueue and reconcile metrics): with it the kit knows when the operator is done from its queues, and keeps the quiet period only as the fallback (process mode).",
  );

export type OperatorMetricsDocument = z.output<typeof operatorMetricsSchema>;

/** What the schema cannot say about one field alone. */
export function metricsSettingIssues(metrics: OperatorMetricsDocument): FieldIssue[] {
  const told = [...metrics.args, ...Object.values(metrics.env)].some((value) =>
    value.includes(PORT_PLACEHOLDER),
  );
  return told
    ? []
    : [
        {
          path: ["args"],
          message:
            'expected {port} in one of args or env, e.g. args: ["--metrics-bind-address=127.0.0.1:{port}"]: each scenario\'s operator needs a port of its own',
        },
      ];
}

/** `operator.metrics` as the runner uses it. */
export interface OperatorMetrics {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly path: string;
  readonly settleMs: number;
}

/** The flags and variables that tell the operator to serve its metrics on `port`. */
export function metricsTold(
  metrics: OperatorMetrics,
  port: number,
): { argv: string[]; env: Record<string, string> } {
  const fill = (value: string) => value.replaceAll(PORT_PLACEHOLDER, String(port));
  return {
    argv: metrics.args.map(fill),
    env: Object.fromEntries(Object.entries(metrics.env).map(([name, value]) => [name, fill(value)])),
  };
}
