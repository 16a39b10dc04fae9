/**
 * One GET with everything docs/design.md §4.8 asks of a request: bearer key, User-Agent, timeout, the
 * client-wide concurrency gate and rate ceiling (per attempt, so retries are paced too), retries
 * per the retry table, counters and the metrics hook.
 */
import type { Agent } from 'undici';
import pRetry, { AbortError } from 'p-retry';
import {
  ApiError,
  AuthRejectedError,
  CursorRejectedError,
  InvalidResponseError,
  NotFoundError,
  RateLimitedError,
  ResponseTooLargeError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
  type ApiErrorDetails,
} from './errors.js';
import { AbortFanout, AttemptAbort } from './attempt-abort.js';
import { BodyBudget, readBounded, type BodyStream } from './body.js';
import { clipText } from './json-bounds.js';
import type { Clock, Pacer, Semaphore } from './limiter.js';
import type { ApiClientOptions, ClientStats, RequestEvent, ResolvedOptions } from './options.js';
import { redactJson, sanitizeCause, type SecretRedactor } from '../util/redact.js';
import { errorKey, parseRetryAfter, retryDelay, RETRY_TABLE, ruleForStatus, type RetryRule } from './retry-policy.js';
import { linkSignals } from '../util/signals.js';

/** Upstream error bodies are kept for diagnosis, not archived: a few KB is plenty (docs/sync.md). */
export const ERROR_BODY_LIMIT = 4096;
const CURSOR_STATUSES = new Set([400, 404, 410, 422]);

export interface TransportDeps {
  opts: ResolvedOptions;
  agent: Agent;
  limiter: Pacer;
  semaphore: Semaphore;
  clock: Clock;
  redactor: SecretRedactor;
  /** Client-wide signal (options.signal); every request also listens to it. */
  signal?: AbortSignal;
  logger?: ApiClientOptions['logger'];
  onRequest?: ApiClientOptions['onRequest'];
  random?: () => number;
}

/** A failed attempt the table says to retry; converted to a public error when retries run out. */
class RetryableFailure extends Error {
  constructor(
    readonly key: string,
    readonly rule: RetryRule,
    readonly details: ApiErrorDetails,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`retryable failure ${key}`);
  }
}

export function newStats(): ClientStats {
  return { requests: 0, retries: 0, bytesIn: 0, byStatus: {}, rateLimited: 0, networkErrors: 0, timeouts: 0 };
}

/** A parsed 2xx body with the upstream's own clock (the `Date` header; null when absent or junk). */
export interface JsonResponse {
  json: unknown;
  serverDate: string | null;
}

export class Transport {
  readonly stats: ClientStats = newStats();
  private readonly headers: Record<string, string>;
  /** All 2xx bodies in flight together buffer at most maxResponseBytes (plus the oldest one's). */
  private readonly budget: BodyBudget;
  private readonly fanout = new AbortFanout();

  constructor(private readonly d: TransportDeps) {
    this.budget = new BodyBudget(d.opts.maxResponseBytes);
    this.headers = {
      authorization: `Bearer ${d.opts.apiKey}`,
      'user-agent': d.opts.userAgent,
      accept: 'application/json',
    };
  }

  /** GETs `path` (under /api/v1) and returns the parsed JSON of a 2xx; throws an ApiError otherwise. */
  async getJson(path: string, query: Record<string, unknown> = {}, callerSignal?: AbortSignal): Promise<JsonResponse> {
    const target = this.d.opts.basePath + path + toQueryString(query);
    const hasCursor = typeof query.cursor === 'string' && query.cursor.length > 0;
    // Not AbortSignal.any: on Node 20 it keeps every composite of the client's long-lived signal (src/util/signals.ts).
    const linked = callerSignal === undefined || this.d.signal === undefined ? null : linkSignals([this.d.signal, callerSignal]);
    const signal = linked?.signal ?? callerSignal ?? this.d.signal;
    let attempts = 0;
    let final: { error: unknown } | undefined;
    try {
      // p-retry runs the retry table's loop (docs/design.md §4.8): the attempt budget, the abort
      // checked before and after each attempt, final errors and abort reasons passed through as they
      // are. The wait between attempts is the table's (Retry-After honoured, full jitter), which
      // p-retry cannot take per failure, so its own delay is zero and onFailedAttempt waits instead.
      return await pRetry(
        async (attempt) => {
          attempts = attempt;
          try {
            return await this.attempt(target, hasCursor, attempt, signal);
          } catch (err) {
            if (err instanceof RetryableFailure) throw err;
            // Kept aside so the caller gets the very value thrown, whatever it is.
            final = { error: err };
            throw new AbortError('final');
          }
        },
        {
          retries: this.d.opts.maxAttempts - 1,
          minTimeout: 0,
          maxTimeout: 0,
          signal,
          shouldRetry: () => !signal?.aborted,
          onFailedAttempt: ({ error, retriesLeft, retriesConsumed }) =>
            retriesLeft > 0 && !signal?.aborted
              ? this.beforeRetry(error as RetryableFailure, target, retriesConsumed + 1, signal)
              : undefined,
        },
      );
    } catch (err) {
      if (final !== undefined) throw final.error;
      if (err instanceof RetryableFailure) throw exhausted(err, attempts);
      throw err;
    } finally {
      linked?.dispose();
    }
  }

  /** Logs a retry and waits the table's delay before it (`retry` is 1-based). */
  private async beforeRetry(failure: RetryableFailure, target: string, retry: number, signal?: AbortSignal): Promise<void> {
    const delayMs = retryDelay(failure.rule, retry, failure.retryAfterMs, this.d.opts, this.d.random);
    this.stats.retries++;
    this.d.logger?.warn(
      { method: 'GET', path: shownPath(target), attempt: retry, status: failure.details.status ?? null, errorCode: failure.key, delayMs },
      'upstream request failed; retrying',
    );
    await this.d.clock.sleep(delayMs, signal);
  }

  private async attempt(target: string, hasCursor: boolean, attempt: number, signal?: AbortSignal): Promise<JsonResponse> {
    const release = await this.d.semaphore.acquire(signal);
    const event: RequestEvent = { method: 'GET', path: shownPath(target), status: null, attempt, durationMs: 0, bytes: 0 };
    let started: number | undefined;
    let detachTimeout: (() => void) | undefined;
    try {
      await this.d.limiter.acquire(signal);
      started = this.d.clock.now();
      this.stats.requests++;
      const timeout = new AttemptAbort();
      const leave = signal === undefined ? undefined : this.fanout.join(signal, timeout);
      timeout.startTimer(this.d.opts.requestTimeoutMs);
      detachTimeout = () => {
        timeout.clearTimer();
        leave?.();
      };
      let status: number;
      let text: string;
      let serverDate: string | null = null;
      let contentType = '';
      try {
        const res = await this.d.agent.request({
          origin: this.d.opts.origin,
          path: target,
          method: 'GET',
          headers: this.headers,
          signal: timeout,
          // This client's own, also on an agent shared with clients of other timeouts.
          headersTimeout: this.d.opts.requestTimeoutMs,
          bodyTimeout: this.d.opts.requestTimeoutMs,
        });
        ({ status, text, serverDate, contentType } = await this.receive(res, target, attempt, event));
      } catch (err) {
        if (err instanceof ResponseTooLargeError) throw err;
        if (signal?.aborted) throw signal.reason;
        const key = timeout.timedOut() ? 'TIMEOUT' : errorKey(err);
        event.errorCode = key ?? codeOf(err);
        this.countFailure(key === undefined ? undefined : RETRY_TABLE[key]);
        throw this.transportFailure(key, err, target, attempt);
      }
      this.stats.byStatus[String(status)] = (this.stats.byStatus[String(status)] ?? 0) + 1;
      if (status >= 200 && status < 300) return { json: this.parseJson(text, target, status, attempt, contentType), serverDate };
      const details: ApiErrorDetails = { status, method: 'GET', path: shownPath(target), body: this.errorBody(text), attempts: attempt };
      const rule = ruleForStatus(status);
      if (rule) this.countFailure(rule);
      if (rule?.retry) throw new RetryableFailure(String(status), rule, details, event.retryAfterMs);
      throw finalStatusError(status, hasCursor, details);
    } finally {
      detachTimeout?.();
      release();
      // An attempt aborted before its rate slot came up never reached the network: not reported.
      if (started !== undefined) {
        event.durationMs = Math.round(this.d.clock.now() - started);
        this.report(event);
      }
    }
  }

  /** Reads one answer: its headers into `event` and the limiter, its body within the bounds. */
  private async receive(
    res: Awaited<ReturnType<typeof this.d.agent.request>>,
    target: string,
    attempt: number,
    event: RequestEvent,
  ): Promise<{ status: number; text: string; serverDate: string | null; contentType: string }> {
    const status = res.statusCode;
    event.status = status;
    const retryAfter = res.headers['retry-after'];
    const retryAfterMs = retryAfter === undefined ? undefined : parseRetryAfter(retryAfter);
    if (retryAfterMs !== undefined) event.retryAfterMs = retryAfterMs;
    this.d.limiter.observe?.({ status, headers: res.headers });
    const date = readDateHeader(res.headers.date);
    const serverDate = date?.iso ?? null;
    if (date) event.clockSkewMs = date.ms - Date.now();
    const contentType = String(res.headers['content-type'] ?? '');
    // Error bodies are read only as far as a log line can use; a 2xx up to maxResponseBytes.
    const ok = status >= 200 && status < 300;
    const limit = ok ? this.d.opts.maxResponseBytes : ERROR_BODY_LIMIT;
    const body = await readBounded(
      res.body as BodyStream,
      limit,
      headerLength(res.headers['content-length']),
      ok,
      ok ? this.budget : undefined,
    );
    event.bytes = body.bytes;
    this.stats.bytesIn += body.bytes;
    if (body.tooLarge) {
      throw new ResponseTooLargeError(this.d.opts.maxResponseBytes, { status, method: 'GET', path: shownPath(target), attempts: attempt });
    }
    return { status, text: body.text, serverDate, contentType };
  }

  private report(event: RequestEvent): void {
    this.d.logger?.debug(event, 'upstream request');
    try {
      this.d.onRequest?.(event);
    } catch {
      // A broken metrics hook must not break the sync.
    }
  }

  private countFailure(rule: RetryRule | undefined): void {
    if (rule?.kind === 'rate_limited') this.stats.rateLimited++;
    else if (rule?.kind === 'network') this.stats.networkErrors++;
    else if (rule?.kind === 'timeout') this.stats.timeouts++;
    else if (rule === undefined) this.stats.networkErrors++;
  }

  private transportFailure(key: string | undefined, err: unknown, target: string, attempt: number): Error {
    const details: ApiErrorDetails = {
      status: null,
      method: 'GET',
      path: shownPath(target),
      attempts: attempt,
      cause: sanitizeCause(err, this.d.redactor),
    };
    const rule = key === undefined ? undefined : RETRY_TABLE[key];
    if (key !== undefined && rule?.retry) return new RetryableFailure(key, rule, details, undefined);
    const what =
      key === 'ENOTFOUND'
        ? 'the host name of baseUrl does not resolve (ENOTFOUND)'
        : `request failed (${codeOf(err) ?? this.d.redactor.redact(String(err))})`;
    return new UpstreamUnavailableError(what, details);
  }

  private parseJson(text: string, target: string, status: number, attempt: number, contentType: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (cause) {
      const html = /html/i.test(contentType) || /^\s*</.test(text.slice(0, 64));
      throw new InvalidResponseError(
        html ? `the body of a ${status} response is HTML, not JSON` : `the body of a ${status} response is not JSON`,
        {
          status,
          method: 'GET',
          path: shownPath(target),
          attempts: attempt,
          body: this.errorBody(text),
          cause: sanitizeCause(cause, this.d.redactor),
        },
      );
    }
  }

  private errorBody(text: string): unknown {
    // Only a body that fits whole is parsed: anything larger was cut while reading (readBounded).
    if (text.length <= ERROR_BODY_LIMIT) {
      try {
        return redactJson(JSON.parse(text), this.d.redactor);
      } catch {
        // not JSON: kept as text below
      }
    }
    const clipped = text.length > ERROR_BODY_LIMIT ? `${text.slice(0, ERROR_BODY_LIMIT)}…(truncated)` : text;
    return this.d.redactor.redact(clipped);
  }
}

function finalStatusError(status: number, hasCursor: boolean, details: ApiErrorDetails): ApiError {
  if (status === 401 || status === 403) return new AuthRejectedError(details);
  if (hasCursor && CURSOR_STATUSES.has(status)) return new CursorRejectedError(details);
  if (status === 404) return new NotFoundError(details);
  if (status >= 500) return new UpstreamUnavailableError(`it answered ${status}`, details);
  return new UpstreamRejectedError(details);
}

function exhausted(f: RetryableFailure, attempts: number): ApiError {
  const details = { ...f.details, attempts };
  if (f.rule.kind === 'rate_limited') return new RateLimitedError(details);
  const reason =
    f.details.status != null
      ? `it answered ${f.details.status}`
      : f.rule.kind === 'timeout'
        ? `no complete response within the timeout (${f.key})`
        : `network error ${f.key}`;
  return new UpstreamUnavailableError(reason, details);
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A path as errors and logs show it: an upstream-made id or cursor may be megabytes long. */
export function shownPath(target: string): string {
  return clipText(target, 512);
}

/** A `Date` header as an instant: ISO text and epoch ms. */
interface ServerDate {
  iso: string;
  ms: number;
}

/**
 * The last `Date` header read and what it means. The header changes once a second and V8's
 * parser for its format costs several microseconds: read once, it is read for every answer of
 * that second (about 0.3 s of CPU in an L backfill's 50,000 reads).
 */
let lastDate: { text: string; date: ServerDate | null } = { text: '', date: null };

/** The header's instant; null when absent, junk or outside years 1–9999. */
function readDateHeader(value: string | string[] | undefined): ServerDate | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return null;
  if (text !== lastDate.text) lastDate = { text, date: parseDate(text) };
  return lastDate.date;
}

function parseDate(text: string): ServerDate | null {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  return d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999 ? { iso: d.toISOString(), ms } : null;
}

function headerLength(value: string | string[] | undefined): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d+$/.test(text.trim())) return null;
  return Number(text.trim());
}

/** Undefined/null parameters are left out; anything but a primitive is a programming error. */
export function toQueryString(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new TypeError(`query parameter ${name} must be a string, number or boolean`);
    }
    params.append(name, String(value));
  }
  const s = params.toString();
  return s.length === 0 ? '' : `?${s}`;
}
