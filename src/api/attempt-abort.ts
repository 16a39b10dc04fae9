/**
 * The abort handle of one request attempt, cheap enough to make per request. An AbortController
 * linked to the call's signal costs an EventTarget, a listener added to and removed from a
 * long-lived signal, and another added by undici: about a tenth of the client's CPU on a
 * backfill (bench/README.md, "CPU profile summary"). undici accepts an EventEmitter with
 * `aborted` and `reason` as a request's signal, and each source signal gets one listener for all
 * of its attempts (`AbortFanout`), whatever their number.
 */
import { EventEmitter } from 'node:events';

export class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  private timer: NodeJS.Timeout | undefined;
  private timedOutFlag = false;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }

  /** Aborts with a TimeoutError after `ms`; the timer never keeps the process alive. */
  startTimer(ms: number): void {
    this.timer = setTimeout(() => {
      this.timedOutFlag = true;
      this.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    }, ms);
    this.timer.unref();
  }

  /** True when the timeout, not a source, aborted it. */
  timedOut(): boolean {
    return this.timedOutFlag;
  }

  clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}

/**
 * Attempts listening to one source signal each, through one listener per source: joining and
 * leaving is a Set operation, not an EventTarget's. A source that aborts aborts every attempt
 * still in it with its reason.
 */
export class AbortFanout {
  private readonly members = new WeakMap<AbortSignal, Set<AttemptAbort>>();

  /** Adds `attempt` to `source`'s set (aborting it at once when the source already is); returns how to leave. */
  join(source: AbortSignal, attempt: AttemptAbort): () => void {
    if (source.aborted) {
      attempt.abort(source.reason);
      return noop;
    }
    let set = this.members.get(source);
    if (set === undefined) {
      const group = new Set<AttemptAbort>();
      set = group;
      this.members.set(source, group);
      source.addEventListener(
        'abort',
        () => {
          for (const a of group) a.abort(source.reason);
          group.clear();
        },
        { once: true },
      );
    }
    const members = set;
    members.add(attempt);
    return () => void members.delete(attempt);
  }
}

const noop = () => undefined;
