import type { Store, StoreTx } from '../store/index.js';
import type { RecordOutcome } from './context.js';

export interface WriteBatchOptions<W> {
  /** Records per transaction at most. Default 200. */
  maxRecords?: number;
  /** A record waits at most this long for its batch to commit. Default 250 ms. */
  maxDelayMs?: number;
  /**
   * Writes a batch (or one record of it) inside its transaction, with the outcome of writing the
   * records one after another; returns one outcome per write, in order.
   */
  apply(tx: StoreTx, writes: readonly W[]): Promise<RecordOutcome[]>;
  /** Called once per record after its transaction committed. */
  committed(write: W, outcome: RecordOutcome): void;
  /**
   * A batch failed with a value the database refuses (PostgreSQL class 22 or 54): each record is
   * then written on its own, and this is called for the one that still fails.
   */
  refused(write: W, sqlState: string, err: Error): Promise<RecordOutcome>;
}

/**
 * The database's code for a value it refused (the dialect decides which errors those are:
 * `Store.isRefusedValue`), or null when the error is not that record's problem.
 */
export function refusedValueState(store: Pick<Store, 'isRefusedValue'>, err: unknown): string | null {
  if (!store.isRefusedValue(err)) return null;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'refused';
}

/**
 * Groups the drain's record writes into transactions of many records (bounded by count and by
 * time), instead of one commit per record. A record stays dirty until its batch commits, so a
 * crash loses only reads, never a change (docs/design.md §4.3). Batches commit one at a time, in
 * the order records arrived; add() waits while a full batch commits, which bounds memory.
 */
export class WriteBatch<W> {
  private pending: W[] = [];
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  /** The first batch failure, boxed so that any thrown value (even a falsy one) counts. */
  private failure: { error: unknown } | null = null;
  private readonly maxRecords: number;
  private readonly maxDelayMs: number;

  constructor(
    private readonly store: Pick<Store, 'transaction' | 'isRefusedValue'>,
    private readonly options: WriteBatchOptions<W>,
  ) {
    this.maxRecords = options.maxRecords ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 250;
  }

  async add(write: W): Promise<void> {
    this.throwIfFailed();
    this.pending.push(write);
    if (this.pending.length >= this.maxRecords) await this.commitPending();
    else this.timer ??= setTimeout(() => void this.commitPending().catch(() => undefined), this.maxDelayMs);
  }

  /** Commits everything added so far; throws the first failure of any batch. */
  async flush(): Promise<void> {
    await this.commitPending();
    this.throwIfFailed();
  }

  /** Stops the timer without writing (the records stay dirty); for a drain that failed. */
  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure.error;
  }

  private commitPending(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      this.chain = this.chain
        .then(() => (this.failure === null ? this.commit(batch) : undefined))
        .catch((err: unknown) => {
          this.failure ??= { error: err };
        });
    }
    return this.chain;
  }

  private async commit(batch: readonly W[]): Promise<void> {
    let outcomes: RecordOutcome[];
    try {
      // Returned per attempt: PostgreSQL may run the transaction again after a deadlock.
      outcomes = await this.store.transaction((tx) => this.options.apply(tx, batch));
    } catch (err) {
      if (refusedValueState(this.store, err) === null) throw err;
      // One record's value aborted the whole transaction: write them one by one to find it.
      for (const w of batch) this.options.committed(w, await this.commitOne(w));
      return;
    }
    batch.forEach((w, i) => this.options.committed(w, outcomes[i]!));
  }

  private async commitOne(w: W): Promise<RecordOutcome> {
    try {
      const [outcome] = await this.store.transaction((tx) => this.options.apply(tx, [w]));
      return outcome!;
    } catch (err) {
      const sqlState = refusedValueState(this.store, err);
      if (sqlState === null) throw err;
      return this.options.refused(w, sqlState, err as Error);
    }
  }
}
