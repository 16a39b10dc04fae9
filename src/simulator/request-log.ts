import type { RequestLogEntry } from './types.js';

/**
 * Every API request, oldest first. Capped so a long benchmark cannot exhaust memory: past
 * `cap` entries the oldest half is dropped.
 */
export class RequestLog {
  private entries: RequestLogEntry[] = [];

  constructor(private readonly cap = 200_000) {}

  add(e: RequestLogEntry): void {
    this.entries.push(e);
    if (this.entries.length > this.cap) this.entries = this.entries.slice(this.entries.length - Math.floor(this.cap / 2));
  }

  all(): RequestLogEntry[] {
    return this.entries.map((e) => ({ ...e, query: { ...e.query } }));
  }

  clear(): void {
    this.entries = [];
  }
}
