import { startSimulator } from '../../simulator/index.js';
import { Lifecycle } from '../lifecycle.js';
import { usageError } from '../session.js';

export interface SimulateOptions {
  host: string;
  port: string;
  apiKey: string[];
  seed: string;
  tickets: string;
  deals: string;
  pipelines: string;
  activity: string;
  control?: boolean;
  latencyMs?: string;
  errorRate?: string;
  rateLimitRate?: string;
  dropRate?: string;
  rateLimit?: string;
  rateLimitBurst?: string;
}

/** Serves the bundled workspace simulator until SIGTERM/SIGINT. */
export async function simulateCommand(opts: SimulateOptions): Promise<void> {
  const int = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw usageError(`--${name} must be a whole number of at least ${min}; got "${value}".`);
    return n;
  };
  const fraction = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n >= 0 && n <= 1)) throw usageError(`--${name} must be a fraction from 0 to 1; got "${value}".`);
    return n;
  };
  const positive = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n > 0) || !Number.isFinite(n)) throw usageError(`--${name} must be a number of requests per second above 0; got "${value}".`);
    return n;
  };
  const keys = opts.apiKey.length > 0 ? opts.apiKey : ['test-key'];
  const faults = Object.fromEntries(
    Object.entries({
      latencyMs: opts.latencyMs === undefined ? undefined : int('latency-ms', opts.latencyMs, 0),
      errorRate: fraction('error-rate', opts.errorRate),
      rateLimitRate: fraction('rate-limit-rate', opts.rateLimitRate),
      dropRate: fraction('drop-rate', opts.dropRate),
      rateLimitPerSecond: positive('rate-limit', opts.rateLimit),
      rateLimitBurst: opts.rateLimitBurst === undefined ? undefined : int('rate-limit-burst', opts.rateLimitBurst, 1),
    }).filter(([, v]) => v !== undefined),
  );
  const sim = await startSimulator({
    host: opts.host,
    port: int('port', opts.port, 0),
    seed: int('seed', opts.seed, 0),
    tickets: int('tickets', opts.tickets, 0),
    deals: int('deals', opts.deals, 0),
    pipelines: int('pipelines', opts.pipelines, 1),
    activity: Number(opts.activity) || 0,
    control: Boolean(opts.control),
    faults,
    apiKeys: Object.fromEntries(keys.map((k) => [k, ''])),
  });
  process.stdout.write(
    `Workspace simulator listening on ${sim.url} (API under ${sim.url}/api/v1, ${keys.length} key(s)${opts.control ? `, control surface at ${sim.url}/_control` : ''}). Stop with Ctrl-C.\n`,
  );
  const life = new Lifecycle();
  life.defer(() => sim.close());
  await new Promise<void>((resolve) => {
    life.handleSignals({ graceMs: 5_000, onFirst: () => resolve(), onForce: () => process.exit(1) });
  });
  await life.close();
}
