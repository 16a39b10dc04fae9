import { z } from 'zod';
import type { Store, StoreTx } from '../store/index.js';
import { readSyncState, writeSyncState, writeSyncStateAlone } from '../store/sync-state.js';
import { WsmirrorError } from '../util/errors.js';
import { BACKFILL_ORDER, type RecordTable } from '../entities/index.js';

/**
 * All incremental state of a mirror lives in `sync_state`, one JSON value per key, and this module
 * is its only reader and writer: each key's shape and the transitions between its values are
 * declared here (docs/design.md §4.2 the window and watermark, §4.6 the backfill hand-over), so
 * no caller casts a stored value to a type of its own.
 */
const KEY = {
  watermark: 'watermark',
  window: 'window',
  backfill: 'backfill',
  lastCycle: 'last_cycle',
  /** When the last full-lookback window started and from which watermark (src/sync/window.ts). */
  lookback: 'lookback',
  /** The read floor of the window that set the watermark, written with it (src/sync/window.ts). */
  readFloor: 'read_floor',
  /** Set when a reporting refresh failed: the next one rebuilds everything. */
  reportingStale: 'reporting_stale',
  /** When (local clock) a window last read an event later than the guaranteed overlap reaches. */
  lateEvent: 'late_event',
  /** The mirror's "current as of" after the last cycle that finished its drain (src/sync/as-of.ts). */
  currentAsOf: 'current_as_of',
  /** A digest of the pipelines answer last written (src/sync/pipelines.ts): the same answer writes nothing. */
  pipelinesSeen: 'pipelines_seen',
  /** The cutoff of the last prune of old change-log events (src/sync/retention.ts). */
  prunedTo: 'events_pruned_to',
  /** The UTC day and window size the rpt_ daily tables were last refreshed for (src/sync/reporting.ts). */
  reportedDay: 'reported_day',
} as const;

/** The persisted event window of docs/design.md §4.2. */
export interface WindowState {
  /** Inclusive lower bound S = watermark − overlap (null reads the whole log); see src/sync/window.ts. */
  since: string | null;
  /** The next cursor to read; null means the window starts at its first page. */
  cursor: string | null;
  /** Highest occurredAt seen in the window so far (starts at the old watermark). */
  maxOccurredAt: string | null;
  /**
   * Set on a window that re-reads the full lookback: when it started (local clock) and the
   * watermark it started from. Its last page records both as the lookback state. Absent on a tick
   * window, and on a window saved before this field existed (which then counts as a tick).
   */
  full?: { startedAt: string; watermark: string | null };
  /**
   * An upstream time (a `Date` header) answered before this window's first request, so every page
   * of it was read after this time; null when the upstream gave none that could be trusted, or a
   * page's own Date went back before it. Stored with the watermark when the window closes; the
   * next tick may start later than `watermark − overlap` by it (src/sync/window.ts). Absent on a
   * window saved before this field existed, which counts as null.
   */
  readFloor?: string | null;
  /**
   * A tick may end once a page reaches before this time (the guaranteed overlap) instead of
   * following the cursor down to `since`; absent, it reads to the end (src/sync/window.ts).
   */
  reach?: string;
  /**
   * An event first read by this window and older than this became visible later than the
   * guaranteed overlap reaches: its page records the time (key `late_event`), and ticks re-read the
   * whole overlap for a while (src/sync/window.ts, LATE_EVENT_HOLD_SECONDS).
   */
  lateBefore?: string;
}

/** A late event a window read (src/sync/window.ts, LATE_EVENT_HOLD_SECONDS). */
export interface LateEvent {
  /** Local clock, when the page that read it committed. */
  seenAt: string;
  eventId: string;
  occurredAt: string;
}

/**
 * Written with the last page of a full-lookback window (src/sync/window.ts). `lastFullAt` is the
 * local clock (it only paces the re-reads); `anchor` is the watermark that window started from, an
 * upstream time, so the next full window's start never depends on a clock.
 */
export interface LookbackState {
  lastFullAt: string;
  anchor: string | null;
}

/** A list the backfill reads: the log's recent stretch, a record type's list, the change log's history. */
export type BackfillList = 'recent' | RecordTable | 'history';

/** Persisted after every page so a crashed backfill resumes where it stopped (docs/design.md §4.6). */
export interface BackfillState {
  /** `recent`: the log's lookback before the hand-over, read before the copy (docs/sync.md, "Backfill"). */
  phase: BackfillList | 'done';
  /**
   * The lists read to their end. The next phase is the first registered list not here (phaseAfter),
   * so a list registered after a backfill began or ended is copied once, whatever phase it was saved in.
   */
  finished: BackfillList[];
  /** The newest event's occurredAt when the backfill began: the watermark it hands to `sync`. */
  handover: string | null;
  /** Cursor of the list being copied; null starts it from the beginning. */
  cursor: string | null;
  startedAt: string;
  /** Rows copied per list: each record type's (`tickets`, `deals`) and the change log's `events`; 0 for every registered list when read. */
  copied: Record<RecordTable | 'events', number>;
  /** `history` setting: 'none', 'all' or an ISO date to start the change log from. */
  history: string;
  /**
   * A record list is copied in passes, each followed by a read of the log (docs/sync.md, "Lists
   * that page by position", src/sync/list-passes.ts). `pass`: which pass of this list (absent: 1);
   * `step`: `log` while the log after it is read (absent: `list`); `left`: records that read has
   * so far shown leaving the list; `logSince`: where the next such read starts (absent: the
   * hand-over less the overlap); `logNewest`: the newest event this read has seen.
   */
  pass?: number;
  step?: 'list' | 'log';
  left?: number;
  logSince?: string | null;
  logNewest?: string | null;
}

/** What the last finished cycle saw, for `status` when the upstream cannot be asked. */
export interface LastCycle {
  at: string;
  head: string | null;
  watermark: string | null;
  lagSeconds: number | null;
}

type StateReader = Store | StoreTx;

/**
 * The shape of the stored state. Each version's step upgrades every key from the version before
 * (STEPS), so a mirror written by any older build reads as today's; a writer stores the upgraded
 * values once when it opens the mirror (upgradeStoredState), a reader upgrades what it reads.
 * Version 1 is every mirror before the version was kept (no `state_version` key).
 */
export const STATE_VERSION = 3;
const VERSION_KEY = 'state_version';

type Step = Partial<Record<string, (old: unknown) => unknown>>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** STEPS[n] upgrades version n+1 to n+2. Steps are idempotent: a value already upgraded passes unchanged. */
const STEPS: readonly Step[] = [
  {
    // 1 → 2: a window saved before the read floor existed counts as one without (null).
    [KEY.window]: (old) => (isObject(old) && !('readFloor' in old) ? { ...old, readFloor: null } : old),
  },
  {
    // 2 → 3: the lists a backfill finished are kept; before, the phase implied them.
    [KEY.backfill]: (old) =>
      isObject(old) && !('finished' in old) ? { ...old, finished: finishedBeforeV3(old), copied: countsOf(old.copied) } : old,
  },
];

/**
 * Up to version 2 every build copied the same lists in the same order, so a saved phase names
 * the lists finished before it. This is that order as it was, not the registry's today: an entity
 * registered since is absent and is copied once by the resumed backfill.
 */
const V2_LISTS: readonly BackfillList[] = ['recent', 'deals', 'tickets', 'history'];
function finishedBeforeV3(old: Record<string, unknown>): unknown {
  if (old.phase === 'done') return V2_LISTS.filter((l) => l !== 'history' || old.history !== 'none');
  const at = V2_LISTS.indexOf(old.phase as BackfillList);
  return at < 0 ? old.finished : V2_LISTS.slice(0, at);
}

/** A count a build that knew one entity fewer stored as null (NaN through JSON) reads as 0: it only shows progress. */
function countsOf(copied: unknown): unknown {
  if (!isObject(copied)) return copied;
  return Object.fromEntries(Object.entries(copied).map(([k, n]) => [k, n === null ? 0 : n]));
}

const ts = z.string().min(1);
/** Every list a backfill of this build reads, in order (the registry's lists in BACKFILL_ORDER). */
function backfillLists(): [BackfillList, ...BackfillList[]] {
  return ['recent', ...BACKFILL_ORDER.map((e) => e.plural), 'history'];
}
/** A list this build reads, checked against the registry when read (an entity may register after this module loads). */
const backfillList = z.string().refine((l) => (backfillLists() as string[]).includes(l), {
  error: (issue) => `Invalid option: expected one of ${backfillLists().join('|')}, got ${JSON.stringify(issue.input)}`,
});
const SCHEMAS: Record<string, z.ZodType> = {
  [KEY.watermark]: ts,
  [KEY.readFloor]: ts,
  [KEY.reportingStale]: z.boolean(),
  [KEY.pipelinesSeen]: z.string(),
  [KEY.prunedTo]: ts,
  [KEY.reportedDay]: z.string(),
  [KEY.window]: z
    .object({
      since: ts.nullable(),
      cursor: z.string().nullable(),
      maxOccurredAt: ts.nullable(),
      full: z.object({ startedAt: ts, watermark: ts.nullable() }).optional(),
      readFloor: ts.nullable(),
      reach: ts.optional(),
      lateBefore: ts.optional(),
    })
    .passthrough(),
  [KEY.backfill]: z
    .object({
      phase: z.union([backfillList, z.literal('done')]),
      finished: z.array(backfillList),
      handover: ts.nullable(),
      cursor: z.string().nullable(),
      startedAt: ts,
      copied: z.record(z.string(), z.number()),
      history: z.string(),
      pass: z.number().int().min(1).optional(),
      step: z.enum(['list', 'log']).optional(),
      left: z.number().int().min(0).optional(),
      logSince: ts.nullable().optional(),
      logNewest: ts.nullable().optional(),
    })
    .passthrough(),
  [KEY.lookback]: z.object({ lastFullAt: ts, anchor: ts.nullable() }).passthrough(),
  [KEY.lastCycle]: z.object({ at: ts, head: ts.nullable(), watermark: ts.nullable(), lagSeconds: z.number().nullable() }).passthrough(),
  [KEY.lateEvent]: z.object({ seenAt: ts, eventId: z.string(), occurredAt: ts }).passthrough(),
};

async function storedVersion(r: StateReader): Promise<number> {
  const v = await readSyncState(r, VERSION_KEY);
  if (v === undefined) return 1;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw corrupt(VERSION_KEY, `${JSON.stringify(v)} is not a version number`);
  if (v > STATE_VERSION)
    throw new WsmirrorError(
      'STATE_NEWER',
      `The mirror's sync state (sync_state key "${VERSION_KEY}") is version ${v}, newer than this build knows (${STATE_VERSION}): upgrade wsmirror.`,
    );
  return v;
}

function corrupt(key: string, why: string): WsmirrorError {
  return new WsmirrorError(
    'STATE_CORRUPT',
    `The mirror's sync state key "${key}" (table sync_state) cannot be read: ${why}. Delete that row to start it afresh, or restore the database from a backup.`,
  );
}

/** The value of `key` upgraded from `version` to STATE_VERSION and checked against its schema; undefined when absent. */
function upgraded(key: string, raw: unknown, version: number): unknown {
  if (raw === undefined) return undefined;
  let value = raw;
  for (let v = version; v < STATE_VERSION; v++) value = STEPS[v - 1]?.[key]?.(value) ?? value;
  const schema = SCHEMAS[key];
  const parsed = schema ? schema.safeParse(value) : { success: true as const, data: value };
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw corrupt(key, `${issue.message}${at}`);
  }
  return parsed.data;
}

/** Reads one key of the stored state, upgraded to today's shape and validated. */
async function read<T>(r: StateReader, key: string): Promise<T | undefined> {
  return upgraded(key, await readSyncState(r, key), await storedVersion(r)) as T | undefined;
}

/**
 * A writer opening the mirror stores every key in today's shape and the version with them, in one
 * transaction; a corrupt key fails here with its name, before any cycle runs. Returns the version found.
 */
export async function upgradeStoredState(store: Store): Promise<number> {
  // The usual answer (today's version) needs no transaction; the writer's cache keeps what it read.
  const current = await storedVersion(store);
  if (current === STATE_VERSION) return current;
  return store.transaction(async (tx) => {
    const version = await storedVersion(tx);
    if (version === STATE_VERSION) return version;
    for (const key of Object.keys(SCHEMAS)) {
      const value = upgraded(key, await readSyncState(tx, key), version);
      if (value !== undefined) await writeSyncState(tx, key, value);
    }
    await writeSyncState(tx, VERSION_KEY, STATE_VERSION);
    return version;
  });
}

export async function readWatermark(r: StateReader): Promise<string | null> {
  return (await read<string>(r, KEY.watermark)) ?? null;
}

/** The window in progress, or null when the last one closed (the next starts afresh). */
export async function readSavedWindow(r: StateReader): Promise<WindowState | null> {
  return (await read<WindowState>(r, KEY.window)) ?? null;
}

/** The saved backfill, following the registry: a count for every list, and a finished one reopened for a list it never copied. */
export async function readBackfill(r: StateReader): Promise<BackfillState | null> {
  const saved = await read<BackfillState>(r, KEY.backfill);
  if (!saved) return null;
  const counts = Object.fromEntries([...BACKFILL_ORDER.map((e) => [e.plural, 0]), ['events', 0]]) as BackfillState['copied'];
  const state: BackfillState = { ...saved, copied: { ...counts, ...saved.copied } };
  return state.phase === 'done' && phaseAfter(state) !== 'done' ? { ...state, phase: phaseAfter(state), cursor: null } : state;
}

/**
 * The list a backfill reads next: the first of today's lists (BACKFILL_ORDER, then the history
 * when asked for) not finished and not the one in progress; `done` when none is left.
 */
export function phaseAfter(state: Pick<BackfillState, 'phase' | 'finished' | 'history'>): BackfillState['phase'] {
  const wanted = backfillLists().filter((l) => l !== 'history' || state.history !== 'none');
  return wanted.find((l) => l !== state.phase && !state.finished.includes(l)) ?? 'done';
}

/** True once a backfill handed its watermark over: incremental cycles may run. */
export async function isBackfilled(r: StateReader): Promise<boolean> {
  return (await readBackfill(r))?.phase === 'done';
}

export async function readLookback(r: StateReader): Promise<LookbackState | null> {
  return (await read<LookbackState>(r, KEY.lookback)) ?? null;
}

/** When a window last read an event visible later than the guaranteed overlap reaches; null if never. */
export async function readLateEvent(r: StateReader): Promise<LateEvent | null> {
  return (await read<LateEvent>(r, KEY.lateEvent)) ?? null;
}

/** Written with the page that read the event, in the same transaction. */
export async function recordLateEvent(tx: StoreTx, late: LateEvent): Promise<void> {
  await writeSyncState(tx, KEY.lateEvent, late);
}

/** The read floor stored with the watermark by the window that set it; null when unknown. */
export async function readReadFloor(r: StateReader): Promise<string | null> {
  return (await read<string>(r, KEY.readFloor)) ?? null;
}

export async function readLastCycle(r: StateReader): Promise<LastCycle | null> {
  return (await read<LastCycle>(r, KEY.lastCycle)) ?? null;
}

/** Set when a reporting refresh failed: the next one rebuilds everything. */
export async function isReportingStale(r: StateReader): Promise<boolean> {
  return (await read<boolean>(r, KEY.reportingStale)) === true;
}

/** A window page committed and more follow: its position, with the rows it covers. */
export async function saveWindow(tx: StoreTx, next: WindowState): Promise<void> {
  await writeSyncState(tx, KEY.window, next);
}

/**
 * The window's last page committed: only now does the watermark move (docs/design.md §4.2), with
 * the window's read floor, which bounds what the next tick re-reads; a full-lookback window also
 * records when it started and from where, which paces the next one.
 */
export async function closeWindow(tx: StoreTx, window: WindowState): Promise<void> {
  await writeSyncState(tx, KEY.watermark, window.maxOccurredAt);
  await writeSyncState(tx, KEY.readFloor, window.readFloor ?? null);
  await writeSyncState(tx, KEY.window, null);
  if (window.full)
    await writeSyncState(tx, KEY.lookback, { lastFullAt: window.full.startedAt, anchor: window.full.watermark } satisfies LookbackState);
}

/** A runaway listing: the next cycle restarts the window from its start, not from a cursor that loops. */
export async function abandonWindow(tx: StoreTx): Promise<void> {
  await writeSyncState(tx, KEY.window, null);
}

/** A backfill began or copied one more page: its cursor commits with the rows it covers. */
export async function saveBackfill(tx: StoreTx, state: BackfillState): Promise<void> {
  await writeSyncState(tx, KEY.backfill, state);
}

/**
 * The backfill hands over to `sync`: the head read before the copy becomes the watermark, unless
 * the mirror already had one (re-running a backfill never opens a gap in the events table). No
 * window set that watermark, so no read floor goes with it.
 */
export async function handOverBackfill(tx: StoreTx, final: BackfillState): Promise<void> {
  if ((await readWatermark(tx)) === null) await writeSyncState(tx, KEY.watermark, final.handover);
  await writeSyncState(tx, KEY.readFloor, null);
  await writeSyncState(tx, KEY.window, null);
  await writeSyncState(tx, KEY.backfill, final);
}

export async function recordLastCycle(tx: StoreTx, cycle: LastCycle): Promise<void> {
  await writeSyncState(tx, KEY.lastCycle, cycle);
}

export async function setReportingStale(tx: StoreTx, stale: boolean): Promise<void> {
  await writeSyncState(tx, KEY.reportingStale, stale ? true : null);
}

/**
 * The mirror's "current as of" (docs/design.md §4.11), written after a cycle's drain; the
 * sync-health report reads `asOf` in SQL.
 */
export interface AsOfState {
  /** The upstream instant T; null when no cycle could establish one (no trusted read floor yet). */
  asOf: string | null;
  /** Local clock when it was recorded. */
  recordedAt: string;
  /** The read floor of the window it rests on (an upstream `Date`); null when none could be trusted. */
  readFloor: string | null;
  /** The guaranteed overlap subtracted from the read floor, in seconds. */
  overlapSeconds: number;
  /** The oldest record still dirty after the drain, when it holds the as-of back. */
  heldBy: { entityType: string; entityId: string; occurredAt: string } | null;
}

export async function readAsOf(r: StateReader): Promise<AsOfState | null> {
  return ((await readSyncState(r, KEY.currentAsOf)) as AsOfState | undefined) ?? null;
}

/** The as-of is the whole of its write: one upsert of its own (Store.writeStateAlone), no transaction around it. */
export async function recordAsOfAlone(store: Store, state: AsOfState): Promise<void> {
  await writeSyncStateAlone(store, KEY.currentAsOf, state);
}

/** A key holding one string of the sync's own bookkeeping: read as null when absent, written null to delete. */
function stringKey(key: string): {
  read(r: StateReader): Promise<string | null>;
  record(tx: StoreTx, value: string | null): Promise<void>;
} {
  return {
    read: async (r) => (await read<string>(r, key)) ?? null,
    record: (tx, value) => writeSyncState(tx, key, value),
  };
}

/** A digest of the pipelines answer the tables hold (src/sync/pipelines.ts). */
export const pipelinesSeen = stringKey(KEY.pipelinesSeen);
/** The cutoff the last prune of change-log events used (src/sync/retention.ts). */
export const prunedTo = stringKey(KEY.prunedTo);
/** The `<UTC day>/<window days>` the rpt_ tables were last refreshed for (src/sync/reporting.ts). */
export const reportedDay = stringKey(KEY.reportedDay);
