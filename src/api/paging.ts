import { PagingError } from './errors.js';
import { quote } from './json-bounds.js';

/** Consecutive pages with no item new to the listing (empty ones included) that still carry a nextCursor. */
export const MAX_PAGES_WITHOUT_NEW_ITEMS = 5;
/** Cursors and item ids remembered per listing before the memory starts over (bounds memory, not time). */
const MAX_REMEMBERED = 200_000;

/**
 * Bounds one listing (docs/sync.md, "Hostile upstream"): a cursor handed out twice would repeat
 * the pages forever, and new cursors over empty or already-listed pages never end either. A
 * listing can hold no more pages than it has items, so pages bringing nothing new are the sign.
 */
export class PagingGuard {
  private readonly cursors = new Set<string>();
  private readonly ids = new Set<string>();
  private stale = 0;

  constructor(private readonly path: string) {}

  /** The cursor the listing resumes at counts as seen. */
  start(cursor: string): void {
    this.cursors.add(cursor);
  }

  /** Call with each page's item ids and nextCursor, before using the page. Throws PagingError. */
  check(itemIds: readonly string[], nextCursor: string | null): void {
    let unseen = 0;
    if (this.ids.size + itemIds.length > MAX_REMEMBERED) this.ids.clear();
    for (const id of itemIds) {
      if (!this.ids.has(id)) {
        unseen++;
        this.ids.add(id);
      }
    }
    if (nextCursor === null) return;
    if (this.cursors.has(nextCursor)) {
      throw new PagingError(`nextCursor ${quote(nextCursor, 60)} was already given in this listing (the pages would repeat forever)`, {
        status: 200,
        path: this.path,
      });
    }
    this.stale = unseen === 0 ? this.stale + 1 : 0;
    if (this.stale >= MAX_PAGES_WITHOUT_NEW_ITEMS) {
      throw new PagingError(`${this.stale} pages in a row brought nothing new yet still carried a nextCursor`, {
        status: 200,
        path: this.path,
      });
    }
    if (this.cursors.size >= MAX_REMEMBERED) this.cursors.clear();
    this.cursors.add(nextCursor);
  }
}
