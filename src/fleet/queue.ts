import { PgBoss } from 'pg-boss';
import type pg from 'pg';
import { FLEET_SCHEMA, QUEUE_SCHEMA } from './config.js';

/** The one queue: a job is "run one slice of workspace data.id". */
export const SLICE_QUEUE = 'wsmirror-slice';

/**
 * Dead-worker detection (docs/fleet.md, "Worker loss"): a worker heartbeats each active job every
 * HEARTBEAT_SECONDS / 2; pg-boss's monitor, every MONITOR_SECONDS, fails a job whose heartbeat is
 * older than HEARTBEAT_SECONDS, and with retryDelay 0 the next poll (POLL_SECONDS) of any worker
 * runs it again: within 10 + 5 + 5 + 1 = 21 s of the kill, stated as 30 s.
 */
export const HEARTBEAT_SECONDS = 10;
export const MONITOR_SECONDS = 5;
export const POLL_SECONDS = 1;
export const REDELIVERY_BOUND_SECONDS = 30;

export interface SliceJob {
  id: string;
}

/** pg-boss on the fleet's database, in its own schema; `supervise` false for short CLI commands. */
export async function startQueue(database: string, options: { supervise: boolean; onError: (err: Error) => void }): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: database,
    schema: QUEUE_SCHEMA,
    application_name: 'wsmirror-queue',
    supervise: options.supervise,
    schedule: false,
    superviseIntervalSeconds: MONITOR_SECONDS,
    monitorIntervalSeconds: MONITOR_SECONDS,
    maintenanceIntervalSeconds: 120,
    // Its vacuum check stays on (turning it off measured no saving at 1,000 workspaces, and it also
    // gates the monitor's backoff); its warnings are events the worker does not log: the worker's
    // own check, which reads the holder of a pinned horizon, logs instead (queue-garbage.ts).
    max: 4,
  });
  boss.on('error', options.onError);
  await boss.start();
  if (!(await boss.getQueue(SLICE_QUEUE))) {
    await boss
      .createQueue(SLICE_QUEUE, {
        // stately: at most one queued and one active job per singletonKey (the workspace id): one
        // slice of a workspace runs at a time, and its next can wait queued meanwhile.
        policy: 'stately',
        heartbeatSeconds: HEARTBEAT_SECONDS,
        expireInSeconds: 900,
        retryLimit: 50,
        retryDelay: 0,
        deleteAfterSeconds: 600,
      })
      .catch(async (err: unknown) => {
        // Two workers starting together: the other one created it.
        if (!(await boss.getQueue(SLICE_QUEUE))) throw err;
      });
  }
  return boss;
}

/**
 * Queues a workspace's next slice; a no-op when one is queued already (stately keeps one). One
 * priority for every slice: ready slices run in the order they were queued, so a backfill's next
 * slice waits behind every sync that fell due meanwhile, and no kind of slice can starve another.
 */
export async function enqueueSlice(boss: PgBoss, id: string, delayMs: number): Promise<void> {
  const { data, ...options } = sliceJob(id, delayMs);
  await boss.send(SLICE_QUEUE, data, options);
}

/** Workspace `id`'s next slice as `send` and `insert` queue it: keyed by the workspace (stately), due in `delayMs`. */
export function sliceJob(id: string, delayMs: number): { data: SliceJob; singletonKey: string; startAfter: Date } {
  return { data: { id }, singletonKey: id, startAfter: new Date(Date.now() + Math.max(0, Math.round(delayMs))) };
}

/**
 * Gives every unpaused workspace without a queued, retrying or active slice one, due at its
 * recorded next time: a new or resumed workspace starts, and a chain broken by a crash between a
 * slice's end and its successor's send heals. Every worker runs it periodically; stately dedupes.
 */
export async function ensureSlices(boss: PgBoss, pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ id: string; delay_ms: number }>(
    `select w.id, greatest(0, extract(epoch from (coalesce(w.next_at, now()) - now())) * 1000)::float8 as delay_ms
       from ${FLEET_SCHEMA}.workspaces w
      where not (w.paused_in_file or w.paused_manually)
        and not exists (select 1 from ${QUEUE_SCHEMA}.job j
                         where j.name = $1 and j.singleton_key = w.id and j.state in ('created', 'retry', 'active'))`,
    [SLICE_QUEUE],
  );
  for (const r of rows) await enqueueSlice(boss, r.id, Math.min(r.delay_ms, 600_000));
  return rows.map((r) => r.id);
}

/** Queued and active slices (for status and /metrics), counted straight from the job table. */
export async function queueDepth(pool: pg.Pool): Promise<{ ready: number; deferred: number; active: number; retry: number }> {
  const { rows } = await pool.query<{ ready: number; deferred: number; active: number; retry: number }>(
    `select count(*) filter (where state = 'created' and start_after <= now())::int as ready,
            count(*) filter (where state = 'created' and start_after > now())::int as deferred,
            count(*) filter (where state = 'active')::int as active,
            count(*) filter (where state = 'retry')::int as retry
       from ${QUEUE_SCHEMA}.job where name = $1`,
    [SLICE_QUEUE],
  );
  return rows[0] ?? { ready: 0, deferred: 0, active: 0, retry: 0 };
}
