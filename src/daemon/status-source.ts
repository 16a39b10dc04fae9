import { redactJson, type SecretRedactor } from '../util/redact.js';
import type { Config } from '../config/index.js';
import { openStore, type Store } from '../store/index.js';
import { cycleRows, type PageSnapshot } from './page/snapshot.js';
import { asOfField, describeState } from './state.js';
import { collectStatus, type LiveStatus, type StatusReport } from './status-report.js';
import type { DaemonTelemetry } from './telemetry.js';

/** A failed open of the reader is tried again after this long, not on every request. */
const REOPEN_AFTER_MS = 5_000;

export interface StatusSourceOptions {
  telemetry: DaemonTelemetry;
  /**
   * Opens the mirror read-only on a connection of its own (as `wsmirror status` does), so the
   * page never waits for the writer nor holds it up. Called at the first request, again after a
   * failure (a standby before the writer created the mirror).
   */
  openReader: () => Promise<Store>;
  /** `eventsRetentionDays` is reported; the request ceiling is drawn on the requests chart. */
  config: Pick<Config, 'eventsRetentionDays' | 'maxRequestsPerSecond' | 'maxRequestsPerSecondCeiling'>;
  /** Scrubs this process's secrets from every string served. */
  redactor: SecretRedactor;
}

/**
 * The status page's reader: the mirror opened read-only on a connection (a pool, on PostgreSQL) of
 * its own, after the same check as every reader that no migration pends. When the check fails (a
 * standby of a newer version waits for its writer to migrate) the store is closed at once, so
 * the page's retries never pile up connections; `defer` registers the close of a store that opened.
 */
export async function openStatusReader(
  config: Pick<Config, 'database' | 'schema'>,
  defer: (close: () => Promise<void>) => void,
): Promise<Store> {
  const store = await openStore({ database: config.database, readonly: true, schema: config.schema });
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  defer(() => store.close());
  return store;
}

/** What `/status.json` and the status page serve: the mirror read through its own reader, and the daemon's memory. */
export class StatusSource {
  #reader: Promise<Store> | null = null;
  #failedAt = -Infinity;
  #lastError: string | null = null;

  constructor(private readonly o: StatusSourceOptions) {}

  /** The same report as `wsmirror status --json`, without its upstream probe (the page must cost the upstream nothing). */
  async report(): Promise<StatusReport> {
    const mirror = await this.#mirror();
    return this.#redacted({ ...mirror, live: this.#live(mirror) });
  }

  /** The page's snapshot; a mirror that cannot be read leaves its parts out and says why. */
  async page(): Promise<PageSnapshot> {
    let mirror: Omit<StatusReport, 'live'> | null = null;
    let mirrorError: string | null = null;
    try {
      mirror = await this.#mirror();
    } catch (err) {
      mirrorError = (err as Error).message;
    }
    const live = this.#live(mirror);
    return this.#redacted({ generatedAt: new Date().toISOString(), live, mirror, mirrorError, cycles: cycleRows(live, mirror) });
  }

  async #mirror(): Promise<Omit<StatusReport, 'live'>> {
    const store = await this.#store();
    return collectStatus(store, { retentionDays: this.o.config.eventsRetentionDays, upstream: null, rowCounts: false });
  }

  #store(): Promise<Store> {
    if (this.#reader === null) {
      if (Date.now() - this.#failedAt < REOPEN_AFTER_MS) return Promise.reject(new Error(this.#lastError ?? 'the mirror is not open yet'));
      this.#reader = this.o.openReader().catch((err: Error) => {
        this.#reader = null;
        this.#failedAt = Date.now();
        this.#lastError = err.message;
        throw err;
      });
    }
    return this.#reader;
  }

  #live(mirror: Omit<StatusReport, 'live'> | null): LiveStatus {
    const t = this.o.telemetry;
    const facts = t.stateFacts();
    // This process's memory first; a process that has not finished a cycle yet shows the mirror's.
    facts.lastSuccessAt ??= mirror?.lastSuccessAt ?? null;
    facts.lagSeconds ??= mirror?.lastCycle?.lagSeconds ?? null;
    const startedAt = t.cycles.startedAt;
    return {
      source: 'daemon',
      state: describeState(facts),
      role: facts.role,
      version: t.version,
      startedAt: new Date(startedAt).toISOString(),
      uptimeSeconds: Math.round((facts.now - startedAt) / 1000),
      freshness: {
        lagSeconds: facts.lagSeconds,
        lastSuccessAt: facts.lastSuccessAt,
        watermark: mirror?.watermark ?? null,
        ...asOfField(t.health.state.currentAsOf ?? mirror?.currentAsOf?.asOf ?? null),
      },
      cycles: t.cycles.recent(20),
      charts: t.cycles.chartData(),
      requestCeilingPerMinute: ceilingPerMinute(this.o.config),
      verify: t.metrics.lastVerify,
    };
  }

  #redacted<T>(value: T): T {
    return redactJson(value, this.o.redactor) as T;
  }
}

/** The client's ceiling: the fixed rate, or the hard ceiling of "auto". */
function ceilingPerMinute(config: StatusSourceOptions['config']): number {
  const perSecond = config.maxRequestsPerSecond === 'auto' ? config.maxRequestsPerSecondCeiling : config.maxRequestsPerSecond;
  return Math.round(perSecond * 60);
}
