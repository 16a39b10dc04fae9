import { ApiError } from './errors.js';
import { TokenBucket, type RateDecision } from './rate-limit.js';
import type { FailNextRule } from './types.js';
import type { World } from './world.js';

export type FaultDecision = { drop: true } | { drop: false; error: ApiError } | null;

const ERROR_CODES: Record<number, string> = {
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

interface ActiveRule extends FailNextRule {
  remaining: number;
}

/** Decides, per API request, whether a configured or scheduled fault answers instead of the API. */
export class FaultInjector {
  private rules: ActiveRule[] = [];
  private readonly bucket = new TokenBucket();

  constructor(private readonly world: World) {}

  failNext(rule: FailNextRule): void {
    if (!Number.isInteger(rule.status) || rule.status < 100 || rule.status > 599) {
      if (!rule.drop) throw new TypeError('failNext needs an HTTP status between 100 and 599');
    }
    this.rules.push({ ...rule, remaining: rule.count ?? 1 });
  }

  /** Drops pending fail-next rules and refills the rate-limit bucket. */
  clearRules(): void {
    this.rules = [];
    this.bucket.reset();
  }

  /** Whether random faults (and stale reads) apply to this path. */
  applies(path: string): boolean {
    const paths = this.world.faults.paths;
    return paths.length === 0 || paths.some((p) => path.startsWith(p));
  }

  /** The token bucket's verdict on one API request; null while `rateLimitPerSecond` is 0 or the path is exempt. */
  rateLimit(path: string): RateDecision | null {
    if (!this.applies(path)) return null;
    return this.bucket.decide(this.world.faults, this.world.clock.nowMs());
  }

  decide(method: string, path: string): FaultDecision {
    const rule = this.rules.find(
      (r) =>
        r.remaining > 0 &&
        (r.path === undefined || path.startsWith(r.path)) &&
        (r.method === undefined || r.method.toUpperCase() === method),
    );
    if (rule) {
      rule.remaining--;
      this.rules = this.rules.filter((r) => r.remaining > 0);
      if (rule.drop) return { drop: true };
      return { drop: false, error: this.errorFor(rule.status, rule.retryAfter) };
    }
    const f = this.world.faults;
    if (f.dropRate === 0 && f.rateLimitRate === 0 && f.errorRate === 0) return null;
    if (!this.applies(path)) return null;
    const rng = this.world.faultRng;
    if (rng.chance(f.dropRate)) return { drop: true };
    if (rng.chance(f.rateLimitRate)) return { drop: false, error: this.errorFor(429) };
    if (rng.chance(f.errorRate)) return { drop: false, error: this.errorFor(rng.pick([500, 502, 503])) };
    return null;
  }

  private errorFor(status: number, retryAfter?: string): ApiError {
    const headers: Record<string, string> = {};
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    else if (status === 429) headers['retry-after'] = this.retryAfterValue();
    const code = ERROR_CODES[status] ?? 'simulated_failure';
    const message = status === 429 ? 'Too many requests; retry after the time in Retry-After.' : `Simulated failure (HTTP ${status}).`;
    return new ApiError(status, code, message, undefined, headers);
  }

  private retryAfterValue(): string {
    const f = this.world.faults;
    if (f.retryAfterFormat === 'http-date') {
      // HTTP dates have whole seconds; round up so the client never retries early.
      return new Date(Math.ceil((Date.now() + f.retryAfterSeconds * 1000) / 1000) * 1000).toUTCString();
    }
    return String(f.retryAfterSeconds);
  }
}
