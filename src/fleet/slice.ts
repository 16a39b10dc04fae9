import { abortableSleep } from '../api/limiter.js';
import { Lifecycle } from '../session/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { readApiKey, workspaceConfig } from './config.js';
import { claimSlice, firstRequestDelay, recordSlice, type SliceKind, type WorkspaceRow } from './rows.js';
import { nextSliceDelay } from './schedule.js';
import { sliceWork, type Counted, type SliceEnv } from './slice-work.js';

export type { SliceEnv } from './slice-work.js';

/** The next slice to enqueue; null: none (paused or removed: the supervisor re-enqueues on resume). */
export interface NextSlice {
  delayMs: number;
}

export interface SliceReport {
  kind: SliceKind | 'none';
  ok: boolean;
  durationMs: number;
  next: NextSlice | null;
}

/** Runs one slice of workspace `id` and records it on its row; throws only when the fleet's own database fails. */
export async function runSlice(env: SliceEnv, id: string): Promise<SliceReport> {
  const claim = await claimSlice(env.pool, id, env.workerId);
  if (!claim) return { kind: 'none', ok: true, durationMs: 0, next: null };
  const { row } = claim;
  const began = performance.now();
  const life = new Lifecycle();
  const deadline = setTimeout(() => life.stop.abort(new Error('slice deadline')), env.sliceSeconds * 1000);
  const onStop = () => life.stop.abort(new Error('worker stopping'));
  env.stop.addEventListener('abort', onStop, { once: true });
  const counted: Counted = { requests: 0, rate: row.ratePerSecond, notBefore: 0 };
  const logger = env.logger.child({ workspace: id });
  let config: Config | null = null;
  try {
    const apiKey = readApiKey(row);
    env.redactor.add(apiKey);
    config = workspaceConfig(row, env.database, apiKey, env.logLevel);
    const fixed = config.maxRequestsPerSecond === 'auto' ? (row.ratePerSecond ?? 1) : config.maxRequestsPerSecond;
    await abortableSleep(firstRequestDelay(claim, fixed), life.stop.signal).catch(() => undefined);
    const work = await sliceWork(env, row, config, life, logger, counted);
    const durationMs = performance.now() - began;
    const delayMs = honourRetryAfter(
      counted,
      nextSliceDelay(config, {
        ...work,
        ok: true,
        elapsedMs: durationMs,
        failuresInARow: 0,
        errorCode: null,
        ratePerSecond: counted.rate ?? fixed,
      }),
    );
    await recordSlice(env.pool, id, {
      kind: work.kind,
      ok: true,
      state: work.backfilling ? 'backfilling' : work.behind ? 'behind' : 'current',
      durationMs,
      requests: counted.requests,
      ratePerSecond: counted.rate,
      backfillPhase: work.phase,
      lagSeconds: work.lagSeconds,
      currentAsOf: work.currentAsOf,
      error: null,
      nextAt: new Date(Date.now() + delayMs),
    });
    return { kind: work.kind, ok: true, durationMs, next: { delayMs } };
  } catch (err) {
    return await sliceFailed(env, row, config, err, { began, counted, logger });
  } finally {
    clearTimeout(deadline);
    env.stop.removeEventListener('abort', onStop);
    await life.close().catch((err: unknown) => logger.warn({ err }, 'closing the slice failed'));
  }
}

/**
 * The upstream's `Retry-After` outlasts the slice that heard it (its retries ran out, or the slice
 * deadline came first): the next slice waits for it whatever the schedule says.
 */
function honourRetryAfter(counted: Counted, delayMs: number): number {
  return Math.max(delayMs, counted.notBefore - Date.now());
}

/** A slice that failed: its own row shows it, the next slice backs off, every other workspace goes on. */
async function sliceFailed(
  env: SliceEnv,
  row: WorkspaceRow,
  config: Config | null,
  err: unknown,
  at: { began: number; counted: Counted; logger: Logger },
): Promise<SliceReport> {
  const code = (err as { code?: unknown }).code;
  const errorCode = typeof code === 'string' ? code : 'UNEXPECTED';
  const message = env.redactor.redact(err instanceof Error ? err.message : String(err));
  const durationMs = performance.now() - at.began;
  if (errorCode === 'LOCK_HELD') {
    // Another slice of this workspace still runs (a worker presumed dead that is not): try shortly.
    return { kind: 'none', ok: true, durationMs, next: { delayMs: 2000 } };
  }
  at.logger.warn({ code: errorCode, err: message }, 'slice failed; this workspace backs off, the others go on');
  const failuresInARow = row.consecutiveFailures + 1;
  const result = {
    ok: false,
    backfilling: false,
    behind: false,
    fullLookback: false,
    eventsNew: 0,
    requests: at.counted.requests,
    elapsedMs: durationMs,
    failuresInARow,
    errorCode,
    ratePerSecond: 1,
  };
  const delayMs = honourRetryAfter(at.counted, config ? nextSliceDelay(config, result) : Math.min(5000 * 2 ** failuresInARow, 300_000));
  const state = errorCode === 'AUTH_REJECTED' ? 'key_rejected' : errorCode === 'KEY_UNAVAILABLE' ? 'key_unavailable' : 'failing';
  await recordSlice(env.pool, row.id, {
    kind: 'sync',
    ok: false,
    state,
    durationMs,
    requests: at.counted.requests,
    ratePerSecond: null,
    backfillPhase: null,
    lagSeconds: null,
    currentAsOf: null,
    error: { code: errorCode, message },
    nextAt: new Date(Date.now() + delayMs),
  });
  return { kind: 'sync', ok: false, durationMs, next: { delayMs } };
}
