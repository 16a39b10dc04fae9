/**
 * One workspace's own status page on a worker's server (issue 48: the fleet page links "to that
 * workspace's own status page"): the page `wsmirror run` serves for one mirror, read from the
 * workspace's schema, with the fleet's own line above it. No daemon keeps this workspace's
 * memory, so the state comes from its tables (as `wsmirror status` says it with no daemon
 * answering) and the fleet's facts: a revoked key or a failing slice shows as failing.
 */
import { collectStatus, cycleRows, mirrorLive, type PageSnapshot, type StatusReport } from '../daemon/index.js';
import { configSchema } from '../config/index.js';
import { openSharedPostgres, openStore, type SharedPostgres } from '../store/index.js';
import { redactJson, type SecretRedactor } from '../util/redact.js';
import type { WorkspaceStatus } from './status.js';

/** Fleet states that are a failure the mirror's tables may not show (a slice that failed before it wrote a run). */
const FAILING = new Set(['failing', 'key_rejected', 'key_unavailable']);

/** The fleet's line of the workspace, and its options from the fleet file (the retention the report states). */
export type WorkspaceView = WorkspaceStatus & { settings: Record<string, unknown> };

export interface WorkspaceReader {
  /** Connections of their own: the page never takes one a slice is waiting for. */
  connections: () => Promise<SharedPostgres>;
  redactor: SecretRedactor;
}

/** `/workspaces/<id>/status.json`: what `wsmirror status --json` says of one mirror (without its upstream probe), with the fleet's line. */
export async function workspaceReport(r: WorkspaceReader, w: WorkspaceView): Promise<StatusReport & { fleet: WorkspaceStatus }> {
  const mirror = await readMirror(r, w);
  const { settings: _settings, ...fleet } = w;
  return redactJson({ ...mirror, live: mirrorLive(mirror, problemOf(w)), fleet }, r.redactor) as StatusReport & {
    fleet: WorkspaceStatus;
  };
}

/** The page's snapshot; a schema not created yet (a new workspace) leaves the mirror's parts out and says why. */
export async function workspaceSnapshot(r: WorkspaceReader, w: WorkspaceView): Promise<PageSnapshot> {
  let mirror: Omit<StatusReport, 'live'> | null = null;
  let mirrorError: string | null = null;
  try {
    mirror = await readMirror(r, w);
  } catch (err) {
    mirrorError = notCreated(err)
      ? `No slice has created the mirror in schema "${w.schema}" yet.`
      : `Schema "${w.schema}" could not be read: ${(err as Error).message}`;
  }
  const live = mirrorLive(mirror, problemOf(w));
  const id = encodeURIComponent(w.id);
  const snapshot: PageSnapshot = {
    generatedAt: new Date().toISOString(),
    live,
    mirror,
    mirrorError,
    cycles: cycleRows(live, mirror),
    frame: { title: w.id, up: { href: '/', label: 'fleet' }, note: fleetLine(w), json: `/workspaces/${id}/status.json` },
  };
  return redactJson(snapshot, r.redactor) as PageSnapshot;
}

async function readMirror(r: WorkspaceReader, w: WorkspaceView): Promise<Omit<StatusReport, 'live'>> {
  const shared = await r.connections();
  const store = await openStore({ database: shared.url, shared, schema: w.schema, readonly: true });
  try {
    // Its retention setting is the fleet file's; the report only states it.
    return await collectStatus(store, { retentionDays: retentionDays(w), upstream: null, rowCounts: false });
  } finally {
    await store.close();
  }
}

function retentionDays(w: WorkspaceView): number {
  const parsed = configSchema.safeParse({ ...w.settings, http: { port: 0 } });
  return parsed.success ? parsed.data.eventsRetentionDays : configSchema.parse({ http: { port: 0 } }).eventsRetentionDays;
}

function problemOf(w: WorkspaceStatus): string | null {
  if (!FAILING.has(w.state)) return null;
  return w.lastError ? `${w.lastError.code ?? 'error'}: ${w.lastError.message}` : w.state;
}

/** The fleet's view: its state, when the next slice is due, the requests of the last minute, the last error. */
function fleetLine(w: WorkspaceStatus): string {
  const parts = [`Fleet: ${w.state}${w.backfillPhase && w.state === 'backfilling' ? ` (${w.backfillPhase})` : ''}`, `schema "${w.schema}"`];
  parts.push(w.nextAt ? `next slice due ${w.nextAt}` : 'no slice scheduled');
  parts.push(`${w.requestsPerMinute} request(s) in the last minute`);
  if (w.lastError) parts.push(`last error ${w.lastError.at ?? ''}: ${w.lastError.code ?? 'error'}: ${w.lastError.message}`);
  return `${parts.join('; ')}`;
}

/** PostgreSQL's undefined_table, as the error or its cause: the schema has no mirror yet. */
export function notCreated(err: unknown): boolean {
  const code = (e: unknown) => (e as { code?: unknown } | null)?.code;
  return code(err) === '42P01' || code((err as { cause?: unknown } | null)?.cause) === '42P01';
}

/** Connections the pages read on: two, opened at the first page asked for, ended with the worker. */
export function pageReader(database: string, redactor: SecretRedactor): WorkspaceReader & { end(): Promise<void> } {
  let opened: Promise<SharedPostgres> | null = null;
  return {
    redactor,
    connections: () => {
      opened ??= openSharedPostgres(database, 2);
      // A failed open is tried again at the next page, not kept.
      opened.catch(() => (opened = null));
      return opened;
    },
    end: async () => {
      const o = opened;
      opened = null;
      if (o) await (await o.catch(() => null))?.end();
    },
  };
}
