import { createApiClient } from '../../api/index.js';
import type { Config } from '../../config/index.js';
import { asOfLine, collectStatus, duration, mirrorLive, type LiveStatus, type RunRow, type StatusReport } from '../../daemon/index.js';
import { CLOCK_TRUST_MS, lateLately, plausibleHead, readWatermark } from '../../sync/index.js';
import type { Store } from '../../store/index.js';
import type { GlobalFlags } from '../../session/index.js';
import { openReader } from '../session.js';
import { lagBetween } from '../../sync/index.js';
import type { SecretRedactor } from '../../util/redact.js';

export type { StatusReport } from '../../daemon/index.js';

/** How long `status` waits for the daemon's own answer before it reads the state from the mirror. */
const DAEMON_TIMEOUT_MS = 1_000;

/**
 * A reader: no lock, never blocked by the writer. The mirror's figures come from the collector the
 * daemon's /status.json uses; the state line from the daemon serving this mirror when one answers
 * on `http.host:http.port` (the same line as its status page), else from the mirror's tables.
 * Asks the workspace for its head when it can.
 */
export async function statusCommand(flags: GlobalFlags, opts: { json?: boolean }, redactor: SecretRedactor): Promise<void> {
  const { res, life, store } = await openReader(flags, redactor);
  try {
    const upstream = await probeUpstream(res.config, store);
    const mirror = await collectStatus(store, { retentionDays: res.config.eventsRetentionDays, upstream, rowCounts: true });
    const live = (await daemonLive(res.config, mirror.database)) ?? mirrorLive(mirror);
    const report: StatusReport = { ...mirror, live };
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report));
  } finally {
    await life.close();
  }
}

/** The upstream's address is set and only the key is not: the lag cannot be asked, and this says how to fix it. */
export const KEY_MISSING =
  'the API key is missing (baseUrl is set): set WSMIRROR_API_KEY in the environment (or "apiKey" in the config file) to see the lag';

async function probeUpstream(config: Config, store: Store): Promise<StatusReport['upstream']> {
  if (config.baseUrl && !config.apiKey) return { head: null, lagSeconds: null, error: KEY_MISSING };
  if (!config.baseUrl || !config.apiKey) return null;
  const client = createApiClient({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    retry: { maxAttempts: 1 },
    requestTimeoutMs: Math.min(config.requestTimeoutMs, 10_000),
  });
  try {
    const page = await client.eventsPage({ limit: 1 });
    const { head, unknown, clock } = plausibleHead(page, new Date().toISOString());
    return {
      head,
      lagSeconds: unknown ? null : lagBetween(head, await readWatermark(store)),
      clockSkewSeconds: clock.skewMs === null ? null : Math.round(clock.skewMs / 1000),
      clockTrusted: clock.trusted,
    };
  } catch (err) {
    return { head: null, lagSeconds: null, error: (err as Error).message };
  } finally {
    await client.close();
  }
}

/**
 * The daemon's own view, from its /status.json, when a daemon answers on the configured address
 * and keeps this very mirror (another mirror's daemon on that port is not asked twice: its
 * answer is ignored); null otherwise.
 */
async function daemonLive(config: Config, database: string): Promise<LiveStatus | null> {
  if (config.http.port === 0) return null;
  const host =
    config.http.host === '0.0.0.0'
      ? '127.0.0.1'
      : config.http.host === '::'
        ? '[::1]'
        : config.http.host.includes(':')
          ? `[${config.http.host}]`
          : config.http.host;
  try {
    const res = await fetch(`http://${host}:${config.http.port}/status.json`, {
      headers: config.http.authToken ? { authorization: `Bearer ${config.http.authToken}` } : {},
      signal: AbortSignal.timeout(DAEMON_TIMEOUT_MS),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as Partial<StatusReport>;
    return body.database === database && body.live?.source === 'daemon' ? body.live : null;
  } catch {
    return null;
  }
}

function renderStatus(r: StatusReport): string {
  const lines = [
    `State:       ${r.live.state.line} (${stateSource(r.live)})`,
    `Mirror:      ${r.database}`,
    `Backfill:    ${
      r.backfill
        ? `${r.backfill.phase} (${Object.entries(r.backfill.copied)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ')})`
        : 'not started'
    }`,
    ...(r.deferredIndexes.length > 0 ? [`Indexes:     ${deferredIndexesLine(r.deferredIndexes)}`] : []),
    `Watermark:   ${r.watermark ?? 'none'}${r.windowInProgress ? ' (a window is in progress; the next sync resumes it)' : ''}`,
    `Upstream:    ${r.upstream === null ? 'not configured (set WSMIRROR_BASE_URL and WSMIRROR_API_KEY to see the lag)' : r.upstream.error ? (r.upstream.error === KEY_MISSING ? KEY_MISSING : `unreachable: ${r.upstream.error}`) : `head ${r.upstream.head ?? 'none'}, lag ${r.upstream.lagSeconds ?? 'unknown'} s`}`,
    ...(r.upstream !== null && r.upstream.error === undefined ? [`Clock:       ${clockLine(r.upstream)}`] : []),
    `Late events: ${lateEventLine(r.lateEvent, new Date().toISOString())}`,
    `As of:       ${asOfLine(r)}`,
    `Last cycle:  ${r.lastCycle ? `${r.lastCycle.at}, head ${r.lastCycle.head ?? 'none'}, lag ${r.lastCycle.lagSeconds ?? 'unknown'} s` : 'none'}`,
    `Last run:    ${r.lastRun ? lastRunLine(r.lastRun) : 'none'}`,
    `Last success: ${r.lastSuccessAt ?? 'never'}`,
    `Dirty:       ${r.dirty} record(s) waiting to be re-read`,
    `Events:      oldest ${r.events.oldest ?? 'none'}; kept ${r.events.retentionDays === 0 ? 'forever' : `${r.events.retentionDays} days before the watermark`}`,
    ...(r.storage ? [`Storage:     ${mib(r.storage.databaseBytes)} database, ${mib(r.storage.walBytes)} WAL`] : []),
    `Quarantined: ${
      r.quarantined.length === 0
        ? 'none'
        : Object.entries(r.quarantinedByType)
            .map(([type, n]) => `${n} ${type}`)
            .join(', ')
    }`,
    ...r.quarantined.map((q) => `  - ${q.entityType} ${q.entityId}: ${q.reason} (last seen ${q.lastSeenAt})`),
    ...(r.widenedColumns && r.widenedColumns.length > 0
      ? [
          `Widened:     ${r.widenedColumns.length} custom field column(s) turned to text when a value did not fit their type`,
          ...r.widenedColumns.map(
            (w) => `  - ${w.entityType} ${JSON.stringify(w.key)} (column ${w.column}): was ${w.from}, text since ${w.at}`,
          ),
        ]
      : []),
    'Rows:',
    ...Object.entries(r.counts ?? {}).map(([table, n]) => `  ${table.padEnd(18)} ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}

function stateSource(live: LiveStatus): string {
  if (live.source === 'mirror') return "from the mirror's tables: no daemon answered on http.host:http.port";
  return `from the daemon: ${live.role ?? 'role unknown'}, up ${live.uptimeSeconds === null ? 'unknown' : duration(live.uptimeSeconds)}`;
}

/** The status line while a first backfill builds its secondary indexes at its end. */
export function deferredIndexesLine(names: readonly string[]): string {
  return `${names.length} secondary index(es) dropped for the first backfill, built when it ends or stops; queries run without them until then (a writer that starts builds them if a killed backfill left them out)`;
}

/** The status line on the workspace's clock against this machine's (docs/sync.md, "Hostile upstream"). */
export function clockLine(u: Pick<NonNullable<StatusReport['upstream']>, 'clockSkewSeconds' | 'clockTrusted'>): string {
  const skew = u.clockSkewSeconds;
  if (skew === null || skew === undefined) return 'the workspace sent no usable Date header; the local clock bounds event times';
  const side = `${Math.abs(skew)} s ${skew >= 0 ? 'ahead of' : 'behind'} this machine's`;
  return u.clockTrusted
    ? `the workspace's clock is ${side} (within the ${CLOCK_TRUST_MS / 1000} s tolerance)`
    : `the workspace's clock is ${side}, beyond the ${CLOCK_TRUST_MS / 1000} s tolerance: the local clock bounds event times; check either clock`;
}

/** The status line on late-visible events: none, or the last one and whether ticks still re-read the whole overlap. */
export function lateEventLine(late: StatusReport['lateEvent'], now: string): string {
  if (late === null) return 'none seen beyond the guaranteed tick overlap';
  // The same rule the sync plans its ticks by (src/sync/window.ts).
  const hold = lateLately(late.seenAt, now)
    ? `ticks re-read the whole overlap until ${late.wholeOverlapUntil}`
    : 'ticks re-read the guaranteed overlap again';
  return `last ${late.eventId} (occurred ${late.occurredAt}), read ${late.seenAt}; ${hold}`;
}

function lastRunLine(run: RunRow): string {
  const counts = `${run.events_read ?? 0} events read, ${run.records_fetched ?? 0} records, ${run.requests ?? 0} requests`;
  return `${run.kind} ${run.outcome ?? 'interrupted'} at ${run.started_at} (${counts})${run.error ? `: ${run.error}` : ''}`;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
