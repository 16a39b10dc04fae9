import type { Agent } from 'undici';
import { WsmirrorError } from '../util/errors.js';
import { defaultUserAgent } from '../util/version.js';

/** Options of createApiClient (docs/design.md §3 carries the user-facing names and defaults). */
export interface ApiClientOptions {
  /** The workspace's base address; paths are appended as `/api/v1/...`. Required. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`. Never logged, never in an error. Required. */
  apiKey: string;
  /** Default `wsmirror/<version from package.json>`. */
  userAgent?: string;
  /** Whole-attempt timeout (headers and body). Default 30000. */
  requestTimeoutMs?: number;
  /**
   * Per request. `maxAttempts` counts the first try (default 6); waits are between `minDelayMs`
   * (default 250) and `maxDelayMs` (default 60000), Retry-After included.
   */
  retry?: { maxAttempts?: number; maxDelayMs?: number; minDelayMs?: number };
  /**
   * Client-wide ceiling on request starts per second, all calls and retries together, or `'auto'`
   * to find the upstream's allowance from 429s and rate-limit headers (docs/rate-limits.md).
   * Default 10.
   */
  maxRequestsPerSecond?: number | 'auto';
  /** With `'auto'`: the hard ceiling the adaptive rate never exceeds. Default 100. */
  maxRequestsPerSecondCeiling?: number;
  /**
   * With `'auto'`: the rate to start from instead of the safe default (a fleet slice resumes the
   * rate its workspace's previous slice had learned). Default: none (5, or the ceiling when lower).
   */
  startRatePerSecond?: number;
  /** Requests in flight at once, client-wide. Default 8. */
  concurrency?: number;
  /** `limit` of list calls when the query gives none. Default 100 (allowed 1..100). */
  pageSize?: number;
  /**
   * A 2xx body longer than this is refused without being buffered whole (ResponseTooLargeError).
   * Default 33554432 (32 MiB).
   */
  maxResponseBytes?: number;
  /** Aborts everything in flight and every wait. Default: none. */
  signal?: AbortSignal;
  /** pino-compatible. Default: no logging. */
  logger?: { debug(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /** Called after every attempt (metrics hook). Default: none. Exceptions it throws are ignored. */
  onRequest?: (e: RequestEvent) => void;
  /**
   * Connections shared with other clients (a fleet worker's, for every workspace it syncs), kept
   * open by close(), so each slice reuses the upstream's warm connection instead of a new TCP and
   * TLS handshake. Default: the client opens its own pool and closes it with itself.
   */
  agent?: Agent;
}

export interface RequestEvent {
  method: string;
  path: string;
  /** null when no response arrived. */
  status: number | null;
  /** 1-based attempt number of this request. */
  attempt: number;
  durationMs: number;
  bytes: number;
  /** Retry-table key of a transport failure (e.g. `ECONNRESET`, `TIMEOUT`). */
  errorCode?: string;
  /**
   * The answer's `Date` header minus the local wall clock when its headers arrived, ms (HTTP dates
   * drop the milliseconds, so an exact clock reads up to 1000 behind); absent without a usable Date.
   */
  clockSkewMs?: number;
  /** The answer's `Retry-After`, in ms from when it arrived (seconds or an HTTP date); absent without one. */
  retryAfterMs?: number;
}

export interface ClientStats {
  /** Every attempt, retries included. */
  requests: number;
  retries: number;
  bytesIn: number;
  byStatus: Record<string, number>;
  /** 429 responses seen. */
  rateLimited: number;
  networkErrors: number;
  timeouts: number;
  /** The rate request starts are paced at now: the fixed ceiling, or the "auto" rate. */
  ratePerSecond?: number;
}

export interface ResolvedOptions {
  origin: string;
  basePath: string;
  apiKey: string;
  userAgent: string;
  requestTimeoutMs: number;
  maxAttempts: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxRequestsPerSecond: number | 'auto';
  maxRequestsPerSecondCeiling: number;
  startRatePerSecond: number | undefined;
  concurrency: number;
  pageSize: number;
  maxResponseBytes: number;
}

function invalid(name: string, value: unknown, allowed: string): never {
  throw new WsmirrorError('CONFIG_INVALID', `API client option ${name} is ${JSON.stringify(value)}; it must be ${allowed}.`);
}

function intIn(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) invalid(name, v, `an integer from ${min} to ${max}`);
  return v;
}

export function resolveOptions(o: ApiClientOptions): ResolvedOptions {
  let url: URL;
  try {
    url = new URL(o.baseUrl);
  } catch (cause) {
    throw new WsmirrorError(
      'CONFIG_INVALID',
      `baseUrl ${JSON.stringify(o.baseUrl)} is not a URL; give the workspace address, e.g. https://acme.example.com.`,
      { cause },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid('baseUrl', o.baseUrl, 'an http:// or https:// address');
  // The key itself is never echoed, not even when it is malformed.
  if (typeof o.apiKey !== 'string' || o.apiKey.length === 0) {
    throw new WsmirrorError('CONFIG_INVALID', 'No API key was given. Set WSMIRROR_API_KEY.');
  }
  // eslint-disable-next-line no-control-regex -- finding control characters (a pasted newline) is this check's purpose
  if (/[\s\u0000-\u001f\u007f]/.test(o.apiKey)) {
    throw new WsmirrorError(
      'CONFIG_INVALID',
      'The API key contains whitespace or control characters. Check WSMIRROR_API_KEY for a stray newline or space.',
    );
  }
  const rps = o.maxRequestsPerSecond ?? 10;
  if (rps !== 'auto' && (!(rps > 0) || !Number.isFinite(rps))) invalid('maxRequestsPerSecond', rps, 'a positive number or "auto"');
  const ceiling = o.maxRequestsPerSecondCeiling ?? 100;
  if (!(ceiling > 0) || !Number.isFinite(ceiling)) invalid('maxRequestsPerSecondCeiling', ceiling, 'a positive number');
  const maxDelayMs = intIn('retry.maxDelayMs', o.retry?.maxDelayMs, 60_000, 0, 3_600_000);
  // A ceiling below the default floor lowers the floor: the user asked for waits no longer than it.
  const minDelayMs = intIn('retry.minDelayMs', o.retry?.minDelayMs, Math.min(250, maxDelayMs), 0, 3_600_000);
  return {
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ''),
    apiKey: o.apiKey,
    userAgent: o.userAgent ?? defaultUserAgent(),
    requestTimeoutMs: intIn('requestTimeoutMs', o.requestTimeoutMs, 30_000, 1, 3_600_000),
    maxAttempts: intIn('retry.maxAttempts', o.retry?.maxAttempts, 6, 1, 100),
    minDelayMs,
    maxDelayMs: Math.max(minDelayMs, maxDelayMs),
    maxRequestsPerSecond: rps,
    maxRequestsPerSecondCeiling: ceiling,
    startRatePerSecond: o.startRatePerSecond !== undefined && o.startRatePerSecond > 0 ? o.startRatePerSecond : undefined,
    concurrency: intIn('concurrency', o.concurrency, 8, 1, 256),
    pageSize: intIn('pageSize', o.pageSize, 100, 1, 100),
    maxResponseBytes: intIn('maxResponseBytes', o.maxResponseBytes, 33_554_432, 1024, 2 ** 31 - 1),
  };
}
