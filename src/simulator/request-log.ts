import type { RequestLogEntry } from './types.js';

/**
 * Every API request, oldest first. Capped so a long benchmark cannot exhaust memory: past
 * `cap` entries the oldest half is dropped.
 */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private readonly arrivalListeners = new Set<(e: Readonly<RequestLogEntry>) => void>();

  constructor(private readonly cap = 200_000) {}

  add(e: RequestLogEntry): void {
    this.entries.push(e);
    if (this.entries.length > this.cap) this.entries = this.entries.slice(this.entries.length - Math.floor(this.cap / 2));
  }

  /**
   * Calls `listener` as each API request arrives, before any latency or answer, so a test can act
   * at a known point of a client's progress (e.g. kill it while that request is in flight).
   */
  onArrival(listener: (e: Readonly<RequestLogEntry>) => void): () => void {
    this.arrivalListeners.add(listener);
    return () => this.arrivalListeners.delete(listener);
  }

  arrived(e: RequestLogEntry): void {
    for (const listener of this.arrivalListeners) listener(e);
  }

  all(): RequestLogEntry[] {
    return this.entries.map((e) => ({ ...e, query: { ...e.query } }));
  }

  clear(): void {
    this.entries = [];
  }
}
