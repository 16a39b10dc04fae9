import { clipText, UpstreamUnavailableError } from '../api/index.js';
import { entityOf, type RecordType } from '../entities/index.js';
import type { SyncContext } from './context.js';

/**
 * A record whose read fails after all its retries this many times in a row (a read per drain at
 * most, so as many drains) is quarantined; until then it stays dirty (docs/sync.md, "Hostile
 * upstream"). A quarantined record is read again on its next event or by `verify --repair`.
 */
export const FAILED_READS_QUARANTINE_AFTER = 3;

/**
 * A read that failed the way an unavailable upstream fails (no complete answer within
 * `requestTimeoutMs` on every attempt, a network error, a 5xx after all retries). Whether that is
 * the record's own problem or the upstream's is decided by {@link ReadFailures.blame}. A rate
 * limit, a rejected key or a stalled cycle are never one record's.
 */
export function unavailableRead(err: unknown): err is UpstreamUnavailableError {
  return err instanceof UpstreamUnavailableError;
}

/** What a failed read's record keeps: a reason for the log and, in the end, the quarantine row. */
export function failureReason(err: UpstreamUnavailableError): string {
  return clipText(`its read failed while the workspace answered others: ${err.message}`, 500);
}

/**
 * Tells one record's failed read from an upstream that is down (docs/sync.md, "Hostile
 * upstream"): the failure is the record's own when the upstream answered another read of the same
 * type after this one began (a read by id, a list page), or, without such evidence, when a probe
 * (the first page of that type's list, one item) answers now. A probe that fails too means the
 * upstream is down for that type: the read's error then fails the cycle, as before.
 */
export class ReadFailures {
  private readonly servedAt = new Map<RecordType, number>();
  private readonly probes = new Map<RecordType, Promise<void>>();

  constructor(private readonly ctx: SyncContext) {}

  /** The upstream answered a read of this type (by id, or a list page holding such records). */
  served(entityType: RecordType): void {
    this.servedAt.set(entityType, performance.now());
  }

  /**
   * Resolves when a read of `entityType` begun at `startedAt` (performance.now()) failed for a
   * reason of its record's own; throws `err` when the upstream does not answer that type at all.
   */
  async blame(entityType: RecordType, startedAt: number, err: UpstreamUnavailableError): Promise<void> {
    if ((this.servedAt.get(entityType) ?? -Infinity) > startedAt) return;
    let probe = this.probes.get(entityType);
    if (!probe) {
      probe = this.probe(entityType).finally(() => this.probes.delete(entityType));
      this.probes.set(entityType, probe);
    }
    try {
      await probe;
    } catch {
      throw err;
    }
    if ((this.servedAt.get(entityType) ?? -Infinity) <= startedAt) throw err;
  }

  private async probe(entityType: RecordType): Promise<void> {
    await this.ctx.client.listPage(entityOf(entityType).list, { limit: 1 }, { signal: this.ctx.cycleSignal });
    this.served(entityType);
  }
}
