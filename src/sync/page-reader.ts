import { settle, type Settled } from './page-group.js';

const END = Symbol('end of list');

/**
 * Reads a cursor-chained list ahead of the code that writes it: each page's read starts as soon
 * as the page before it has been read, while fewer than `depth` pages (read or being read) wait
 * to be taken. Only one read runs at a time, since a page's cursor comes with the page before it.
 *
 * Why more than one page ahead (bench/README.md, "Fifteenth pass"): where pages commit in groups
 * (SQLite, ten at a time), a reader one page ahead reads nothing while a group fills and only one
 * page while it commits; reading on meanwhile shortened an L backfill in seven of eight paired
 * runs. How deep is the caller's choice (src/sync/page-group.ts).
 *
 * No read starts once `stopSignal` is aborted, and none after a failed read or the list's last
 * page: the caller restarts it (restart) or stops. `drain` awaits every read still running, so no
 * request outlives the list.
 */
export class PageReader<P> {
  private readonly queue: Promise<Settled<P>>[] = [];
  private next: string | null | typeof END;
  private reading = false;

  constructor(
    start: string | null,
    private readonly read: (cursor: string | null) => Promise<P>,
    private readonly nextCursor: (page: P) => string | null,
    private readonly depth: number,
    private readonly stopSignal: AbortSignal,
  ) {
    this.next = start;
    this.pump();
  }

  /** The oldest page waiting to be taken (settled or not), or undefined when there is none. */
  peek(): Promise<Settled<P>> | undefined {
    return this.queue[0];
  }

  /** Takes the oldest page; undefined when none is read or being read (the list ended, failed or was stopped). */
  take(): Promise<Settled<P>> | undefined {
    const page = this.queue.shift();
    this.pump();
    return page;
  }

  /** Reads the list again from `cursor`, after a failed read ended it. */
  restart(cursor: string | null): void {
    this.next = cursor;
    this.pump();
  }

  /** Awaits (and drops) every page read ahead. */
  async drain(): Promise<void> {
    const left = this.queue.splice(0);
    this.next = END;
    await Promise.all(left);
  }

  private pump(): void {
    if (this.reading || this.next === END || this.stopSignal.aborted || this.queue.length >= this.depth) return;
    const cursor = this.next;
    this.reading = true;
    this.queue.push(
      settle(this.read(cursor)).then((got) => {
        this.reading = false;
        if (this.next !== END) this.next = got.ok ? (this.nextCursor(got.value) ?? END) : END;
        this.pump();
        return got;
      }),
    );
  }
}
