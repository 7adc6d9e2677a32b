// The parser's own package ships no types: what src/operator/metrics/queue-readings.ts uses of it.
declare module "parse-prometheus-text-format" {
  interface Sample {
    readonly value?: string;
    readonly labels?: Readonly<Record<string, string>>;
  }
  interface MetricFamily {
    readonly name: string;
    readonly help: string;
    readonly type: string;
    readonly metrics: readonly Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
