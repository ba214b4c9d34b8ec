// Per-request metrics in CloudWatch Embedded Metric Format (EMF): no API
// call, no agent. The last structured log line of each request (`variant` or
// `error`) carries an `_aws` block that tells CloudWatch Logs which of the
// line's own fields to publish as metrics, so one line is both the log an
// operator reads and the data points the dashboard and alarms use.
//
// Metrics (namespace EdgeImageTransformer unless configured):
//   Requests, Errors, ServerErrors   Count, 1 or 0 per request
//   FetchTime, TransformTime, StoreTime   Milliseconds, each phase that ran
//   SourceBytes, OutputBytes          Bytes
//   MemoryRss                         Megabytes, the handler process's resident set
//   TransformRss                      Megabytes, the transform process's peak during the request
// Dimension sets, all of low cardinality:
//   none (every metric), OutputFormat (6 values) for successes,
//   ErrorCode (one value per code of errors.ts) for failures.
// The request id, canonical URI and function version are plain fields: they
// are searchable in Logs Insights but never dimensions (one metric each).

export const DEFAULT_METRICS_NAMESPACE = 'EdgeImageTransformer';

/** Every metric the origin publishes, with its CloudWatch unit. */
export const METRIC_UNITS = {
  Requests: 'Count',
  Errors: 'Count',
  ServerErrors: 'Count',
  FetchTime: 'Milliseconds',
  TransformTime: 'Milliseconds',
  StoreTime: 'Milliseconds',
  SourceBytes: 'Bytes',
  OutputBytes: 'Bytes',
  MemoryRss: 'Megabytes',
  TransformRss: 'Megabytes',
} as const;

export type MetricName = keyof typeof METRIC_UNITS;

/** The dimension of successes: jpeg, png, webp, avif, gif or json. */
export const OUTPUT_FORMAT_DIMENSION = 'OutputFormat';
/** The dimension of failures: the contract's error code. */
export const ERROR_CODE_DIMENSION = 'ErrorCode';

/** Every value the ErrorCode dimension can take: the contract's codes (errors.ts). */
export { ERROR_CODES } from './errors';

export interface MetricsOptions {
  /** CloudWatch namespace of the metrics (default EdgeImageTransformer). */
  namespace?: string;
  /** false: log the same fields without the `_aws` block, so CloudWatch publishes nothing (default true). */
  enabled?: boolean;
  /** Lambda's version of the running code (AWS_LAMBDA_FUNCTION_VERSION), logged to tell a canary's lines apart. */
  functionVersion?: string;
  /** Clock for the EMF timestamp (default Date.now). */
  now?: () => number;
  /** Resident set size in bytes (default process.memoryUsage.rss). */
  rss?: () => number;
}

export type Phase = 'fetch' | 'transform' | 'store';

const PHASE_METRICS: Record<Phase, MetricName> = { fetch: 'FetchTime', transform: 'TransformTime', store: 'StoreTime' };

/** What one request measured as it went; `done` turns it into the fields of its last log line. */
export interface RequestMetrics {
  /** Milliseconds of each phase that ran (a failed phase too). */
  readonly timings: Partial<Record<Phase, number>>;
  sourceBytes?: number;
  outputBytes?: number;
  /** The response's Content-Type, for the OutputFormat dimension. */
  contentType?: string;
  /** The transform process's peak resident memory during this request, in MB. */
  transformRssMb?: number;
  /** Fields for the request's last log line: ids, status, metric values and (when enabled) the EMF block. */
  done(status: number, code?: string): Record<string, unknown>;
}

/** `image/webp` -> `webp`, `application/json` -> `json`. */
export function formatOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().split('/')[1] ?? 'unknown';
}

const round = (value: number) => Math.round(value * 1000) / 1000;

export function requestMetrics(options: MetricsOptions = {}, requestId?: string): RequestMetrics {
  const record: RequestMetrics = {
    timings: {},
    done(status, code) {
      const failed = code !== undefined;
      const values: Partial<Record<MetricName, number>> = {
        Requests: 1,
        Errors: failed ? 1 : 0,
        ServerErrors: failed && status >= 500 ? 1 : 0,
      };
      for (const phase of Object.keys(PHASE_METRICS) as Phase[]) {
        const ms = record.timings[phase];
        if (ms !== undefined) values[PHASE_METRICS[phase]] = round(ms);
      }
      if (record.sourceBytes !== undefined) values.SourceBytes = record.sourceBytes;
      if (record.outputBytes !== undefined) values.OutputBytes = record.outputBytes;
      if (record.transformRssMb !== undefined) values.TransformRss = round(record.transformRssMb);
      values.MemoryRss = round((options.rss ?? process.memoryUsage.rss)() / (1024 * 1024));

      const dimensions: Record<string, string> = {};
      if (failed) dimensions[ERROR_CODE_DIMENSION] = code;
      else if (record.contentType) dimensions[OUTPUT_FORMAT_DIMENSION] = formatOf(record.contentType);

      const fields: Record<string, unknown> = {
        ...(requestId ? { requestId } : {}),
        ...(options.functionVersion ? { functionVersion: options.functionVersion } : {}),
        status,
        ...dimensions,
        ...values,
      };
      if (options.enabled === false) return fields;

      const namespace = options.namespace || DEFAULT_METRICS_NAMESPACE;
      const definitions = (names: MetricName[]) => names.map((Name) => ({ Name, Unit: METRIC_UNITS[Name] }));
      const directives = [
        { Namespace: namespace, Dimensions: [[]] as string[][], Metrics: definitions(Object.keys(values) as MetricName[]) },
      ];
      if (failed) {
        directives.push({ Namespace: namespace, Dimensions: [[ERROR_CODE_DIMENSION]], Metrics: definitions(['Errors']) });
      } else if (dimensions[OUTPUT_FORMAT_DIMENSION]) {
        const perFormat = (['Requests', 'TransformTime', 'OutputBytes'] as MetricName[]).filter((name) => name in values);
        directives.push({ Namespace: namespace, Dimensions: [[OUTPUT_FORMAT_DIMENSION]], Metrics: definitions(perFormat) });
      }
      return { ...fields, _aws: { Timestamp: (options.now ?? Date.now)(), CloudWatchMetrics: directives } };
    },
  };
  return record;
}
