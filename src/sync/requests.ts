import { z } from 'zod';
import { isRecordType } from '../entities/index.js';
import {
  finishWriterRequest,
  startWriterRequest,
  writerRequests,
  type Store,
  type WriterRequestEnd,
  type WriterRequestRow,
} from '../store/index.js';
import { setTimeout as delay } from 'node:timers/promises';
import { runBackfillSince } from './backfill-since.js';
import type { SyncContext } from './context.js';
import { requireBackfilled } from './reread.js';
import { runResync, type RecordRef } from './resync.js';
import { recordRun } from './runs.js';
import type { RunStats } from './stats.js';
import { runVerifyRepair } from './verify-repair.js';

/**
 * Queued writer requests (docs/operations.md, "Repairing one record or a period"): a command that
 * must write while another process holds the writer lock adds a row to the writer's inbox
 * (`writer_requests`) and waits; the writer serves the inbox at its next cycle, in its exclusive
 * section, and writes the outcome into the row. Each kind is one entry of WRITER_REQUESTS: its
 * parameters' schema and its work, run inside its own `sync_runs` row of that kind.
 */
interface RequestKind<P> {
  params: z.ZodType<P>;
  run(ctx: SyncContext, stats: RunStats, params: P): Promise<unknown>;
}

const recordRef = z.object({
  entityType: z.string().refine(isRecordType, 'a record type (ticket, deal)'),
  entityId: z.string().min(1),
}) as z.ZodType<RecordRef>;

/** Every kind the writer serves, by the `kind` of its row (also the `sync_runs.kind` of its run). */
const WRITER_REQUESTS: Record<string, RequestKind<unknown>> = {
  resync: kind(z.object({ records: z.array(recordRef).min(1) }), (ctx, stats, p) => runResync(ctx, stats, p.records)),
  'backfill-since': kind(z.object({ since: z.iso.datetime({ offset: true }) }), (ctx, stats, p) => runBackfillSince(ctx, stats, p.since)),
  // `verify --repair`: the command compared as a reader; the writer re-reads what it found.
  verify: kind(z.object({ records: z.array(recordRef), pipelines: z.boolean() }), async (ctx, stats, p) => {
    await requireBackfilled(ctx, 'verify --repair');
    return runVerifyRepair(ctx, stats, p);
  }),
};

function kind<P>(params: z.ZodType<P>, run: RequestKind<P>['run']): RequestKind<unknown> {
  return { params, run };
}

export type WriterRequestKind = 'resync' | 'backfill-since' | 'verify';

/** Requests served per call: a flood of them must not hold the writer's cycle for long. */
const SERVE_AT_ONCE = 20;

/**
 * Serves the unfinished requests of the inbox, oldest first, in the writer (the caller holds the
 * lock): each runs in its own sync_runs row and ends with its result or its error's code and
 * sentence in the row. A stop leaves the request in hand unfinished, so the next writer serves it
 * again (each kind is safe to run twice). Returns how many it finished.
 */
export async function serveWriterRequests(ctx: SyncContext): Promise<number> {
  const rows = await writerRequests(ctx.store).pending(SERVE_AT_ONCE);
  let served = 0;
  for (const row of rows) {
    if (ctx.stopSignal.aborted) break;
    await ctx.store.transaction((tx) => startWriterRequest(tx, row.id, ctx.now()));
    const end = await serveOne(ctx, row);
    if (end === null) break;
    await ctx.store.transaction((tx) => finishWriterRequest(tx, row.id, end, ctx.now()));
    ctx.logger.info(
      { request: row.id, kind: row.kind, outcome: end.outcome, ...(end.outcome === 'failed' ? { error: end.error } : {}) },
      'served a queued writer request',
    );
    served++;
  }
  return served;
}

/** One request's end; null when a stop cut it short (it stays unfinished). */
async function serveOne(ctx: SyncContext, row: WriterRequestRow): Promise<WriterRequestEnd | null> {
  const kindOf = WRITER_REQUESTS[row.kind];
  if (!kindOf)
    return { outcome: 'failed', errorCode: 'UNKNOWN_REQUEST', error: `This wsmirror does not know requests of kind "${row.kind}".` };
  const params = kindOf.params.safeParse(JSON.parse(row.params_json));
  if (!params.success)
    return { outcome: 'failed', errorCode: 'USAGE', error: `The request's parameters are invalid: ${params.error.message}` };
  try {
    const { result } = await recordRun(ctx, row.kind, (stats) => kindOf.run(ctx, stats, params.data));
    return ctx.stopSignal.aborted ? null : { outcome: 'done', result };
  } catch (err) {
    if (ctx.stopSignal.aborted) return null;
    const code = (err as { code?: unknown }).code;
    const error = (err as Error).message ?? String(err);
    ctx.logger.warn({ request: row.id, kind: row.kind, code, error }, 'a queued writer request failed');
    return { outcome: 'failed', errorCode: typeof code === 'string' ? code : null, error };
  }
}

/** Adds a request to the inbox; the write allowed without the writer lock. */
export function queueWriterRequest(store: Store, kindName: WriterRequestKind, params: unknown, at: string): Promise<number> {
  return writerRequests(store).queue(kindName, params, at);
}

export interface WaitOptions {
  /** How long to wait for the writer, in ms. */
  timeoutMs: number;
  /** Between two looks at the row, in ms. Default 250. */
  pollMs?: number;
  signal?: AbortSignal;
  /**
   * Called between looks, at most every `takeOverMs`: the waiter may serve the inbox itself once
   * the lock is free (the writer was a one-shot command, or stopped). True when it served.
   */
  takeOver?: () => Promise<boolean>;
  /** Default 2000. */
  takeOverMs?: number;
}

/** The request's row once finished; the unfinished row when the time is up or the signal stops the wait. */
export async function waitForWriterRequest(store: Store, id: number, options: WaitOptions): Promise<WriterRequestRow> {
  const inbox = writerRequests(store);
  const deadline = performance.now() + options.timeoutMs;
  let nextTakeOver = performance.now() + (options.takeOverMs ?? 2000);
  for (;;) {
    const row = await inbox.read(id);
    if (!row) throw new Error(`writer request ${id} vanished from the inbox`);
    if (row.finished_at !== null || performance.now() >= deadline || options.signal?.aborted) return row;
    if (options.takeOver && performance.now() >= nextTakeOver) {
      nextTakeOver = performance.now() + (options.takeOverMs ?? 2000);
      if (await options.takeOver()) continue;
    }
    await delay(Math.min(options.pollMs ?? 250, Math.max(0, deadline - performance.now())), undefined, { signal: options.signal }).catch(
      () => undefined,
    );
  }
}
