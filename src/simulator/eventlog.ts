import type { SimEvent } from './model.js';

export interface EventFilter {
  type?: string;
  entityType?: string;
  entityId?: string;
  sinceMs?: number;
}

export interface EventPosition {
  ms: number;
  seq: number;
}

function cmp(a: SimEvent, ms: number, seq: number): number {
  return a.occurredAtMs !== ms ? a.occurredAtMs - ms : a.seq - seq;
}

/**
 * The change log, kept sorted by (occurredAt, seq). Almost every event is appended at the end;
 * injected and seeded events with a past occurredAt are inserted in place. Reads skip events
 * whose visibility time has not come yet (late-visible events).
 */
export class EventLog {
  private readonly items: SimEvent[] = [];

  get size(): number {
    return this.items.length;
  }

  /** Bulk load for the generator: events must already be in (occurredAt, seq) order. */
  loadSorted(events: SimEvent[]): void {
    for (const e of events) this.items.push(e);
  }

  add(e: SimEvent): void {
    const last = this.items[this.items.length - 1];
    if (last === undefined || cmp(last, e.occurredAtMs, e.seq) <= 0) {
      this.items.push(e);
      return;
    }
    this.items.splice(this.lowerBound(e.occurredAtMs, e.seq), 0, e);
  }

  private lowerBound(ms: number, seq: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(this.items[mid] as SimEvent, ms, seq) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Up to `limit` visible matching events strictly below `after`, newest first, plus whether more follow. */
  page(filter: EventFilter, after: EventPosition | null, limit: number, nowMs: number): { events: SimEvent[]; more: boolean } {
    const out: SimEvent[] = [];
    let i = after === null ? this.items.length - 1 : this.lowerBound(after.ms, after.seq) - 1;
    const prefix = filter.type?.endsWith('.') ? filter.type : undefined;
    for (; i >= 0; i--) {
      const e = this.items[i] as SimEvent;
      if (filter.sinceMs !== undefined && e.occurredAtMs < filter.sinceMs) break;
      if (e.visibleAtMs > nowMs) continue;
      if (filter.type !== undefined && (prefix ? !e.type.startsWith(prefix) : e.type !== filter.type)) continue;
      if (filter.entityType !== undefined && e.entityType !== filter.entityType) continue;
      if (filter.entityId !== undefined && e.entityId !== filter.entityId) continue;
      if (out.length === limit) return { events: out, more: true };
      out.push(e);
    }
    return { events: out, more: false };
  }

  /** Forgets every event's serialized JSON (the spelling of answers changed). */
  dropCaches(): void {
    for (const e of this.items) e.json = undefined;
  }

  /** Every visible event, newest first. */
  visible(nowMs: number): SimEvent[] {
    const out: SimEvent[] = [];
    for (let i = this.items.length - 1; i >= 0; i--) {
      const e = this.items[i] as SimEvent;
      if (e.visibleAtMs <= nowMs) out.push(e);
    }
    return out;
  }
}
