/**
 * Which failed attempts are retried and how long to wait before the next one (docs/design.md §4.8).
 * One table, keyed by HTTP status (as a string) or by the error code undici / Node put on a
 * failed request. Anything not in the table is final on its first occurrence.
 */

/** Which counter of ClientStats an occurrence bumps, and which error is thrown once retries run out. */
export type FailureKind = 'rate_limited' | 'unavailable' | 'network' | 'timeout';

export interface RetryRule {
  retry: boolean;
  kind: FailureKind;
  /** Whether a `Retry-After` header on this response replaces the computed backoff. */
  honoursRetryAfter: boolean;
}

const serverBusy: RetryRule = { retry: true, kind: 'unavailable', honoursRetryAfter: true };
const network: RetryRule = { retry: true, kind: 'network', honoursRetryAfter: false };
const timeout: RetryRule = { retry: true, kind: 'timeout', honoursRetryAfter: false };

/**
 * "backoff" below means exponential backoff with full jitter: before retry n (1-based) wait a
 * uniformly random time in [minDelayMs, min(maxDelayMs, minDelayMs * 2^(n-1))]; with the
 * defaults (250 / 60000) that is 250ms, ≤500ms, ≤1s, ≤2s, ≤4s for the five retries of 6 attempts.
 * "Retry-After" waits exactly what the header says (seconds or HTTP date), capped at maxDelayMs,
 * and falls back to backoff when the header is absent or unparseable.
 */
export const RETRY_TABLE: Readonly<Record<string, RetryRule>> = {
  '408': serverBusy, // Request Timeout: Retry-After, else backoff
  '429': { retry: true, kind: 'rate_limited', honoursRetryAfter: true }, // Retry-After, else backoff
  '500': serverBusy, // Retry-After, else backoff
  '502': serverBusy, // Retry-After, else backoff
  '503': serverBusy, // Retry-After, else backoff
  '504': serverBusy, // Retry-After, else backoff
  UND_ERR_SOCKET: network, // socket error, incl. "other side closed" (dropped connection): backoff
  ECONNRESET: network, // backoff
  ECONNREFUSED: network, // server down or restarting: backoff
  EPIPE: network, // backoff
  ETIMEDOUT: network, // TCP-level timeout: backoff
  EAI_AGAIN: network, // transient DNS failure: backoff
  UND_ERR_CONNECT_TIMEOUT: timeout, // backoff
  UND_ERR_HEADERS_TIMEOUT: timeout, // backoff
  UND_ERR_BODY_TIMEOUT: timeout, // backoff
  TIMEOUT: timeout, // our own requestTimeoutMs fired (AbortSignal.timeout): backoff
  ENOTFOUND: { retry: false, kind: 'network', honoursRetryAfter: false }, // wrong host name: final
};

/** The table key for a thrown request error, or undefined when it is not a known transport failure. */
export function errorKey(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code in RETRY_TABLE) return code;
  // Some undici paths surface a dropped connection only through the message.
  if (/other side closed/i.test(err.message)) return 'UND_ERR_SOCKET';
  if (err.cause !== undefined && err.cause !== err) return errorKey(err.cause);
  return undefined;
}

export function ruleForStatus(status: number): RetryRule | undefined {
  return RETRY_TABLE[String(status)];
}

/**
 * Milliseconds to wait according to a `Retry-After` value: delta-seconds or an HTTP date.
 * Undefined for absent or garbage values (the caller falls back to backoff); never negative.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Date.parse accepts odd inputs ("5" is a year): only try strings shaped like an HTTP date.
  if (!/^[A-Za-z]{3,9},? /.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export interface BackoffOptions {
  minDelayMs: number;
  maxDelayMs: number;
}

/** Exponential backoff with full jitter above a floor of minDelayMs; `retry` is 1-based. */
export function backoffDelay(retry: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const floor = Math.min(opts.minDelayMs, opts.maxDelayMs);
  const ceiling = Math.min(opts.maxDelayMs, opts.minDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(floor + random() * Math.max(0, ceiling - floor));
}

/** The wait before retry `retry` (1-based) after a failure handled by `rule`. */
export function retryDelay(
  rule: RetryRule,
  retry: number,
  retryAfterMs: number | undefined,
  opts: BackoffOptions,
  random: () => number = Math.random,
): number {
  if (rule.honoursRetryAfter && retryAfterMs !== undefined) return Math.min(retryAfterMs, opts.maxDelayMs);
  return backoffDelay(retry, opts, random);
}
