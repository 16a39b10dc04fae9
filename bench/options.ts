/**
 * What `npm run bench` measures, from flags (`npm run bench -- --quick`) and environment
 * variables. Every figure has a switch so a quick run is possible; bench/README.md lists them.
 */

export interface SizeSpec {
  name: string;
  tickets: number;
  deals: number;
}

export interface BenchOptions {
  sizes: SizeSpec[];
  /** Writes applied between the backfill and the measured sync. */
  writes: number;
  /** Interleaved rounds of the backfill (raw, lean, wsmirror) and of the tick sync (raw, wsmirror); medians reported. Default 3. */
  rounds: number;
  /** Write a CPU profile summary of one more backfill and tick sync per size and dialect. Default true. */
  profile: boolean;
  postgresUrl?: string;
  /** The "auto" rate run: the simulator's allowance and the workspace size of the backfill. */
  auto: { enabled: boolean; allowance: number; tickets: number; deals: number; headers: Array<'all' | 'no-policy' | 'none'> };
  freshness: {
    enabled: boolean;
    /** croner patterns of `run`. */
    schedules: string[];
    writesPerSecond: number[];
    /** Seconds of live writes per run; then up to `graceSeconds` for the last ones to show. */
    seconds: number;
    graceSeconds: number;
    allowance: number;
    tickets: number;
    deals: number;
  };
  reporting: boolean;
  outFile: string;
}

const SIZES: Record<string, SizeSpec> = {
  S: { name: 'S', tickets: 5_000, deals: 1_000 },
  L: { name: 'L', tickets: 50_000, deals: 10_000 },
  XS: { name: 'XS', tickets: 1_000, deals: 200 },
};

function flag(argv: string[], name: string): string | undefined {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  const a = argv[i] as string;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : (argv[i + 1] ?? '');
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

function numbers(text: string, what: string): number[] {
  const out = list(text).map(Number);
  if (out.length === 0 || out.some((n) => !(n > 0)))
    throw new Error(`${what} must be a comma-separated list of positive numbers, got "${text}"`);
  return out;
}

export function parseBenchOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
  const get = (name: string, envName: string) => flag(argv, name) ?? env[envName];
  const sizeNames = list(get('sizes', 'BENCH_SIZES') ?? (quick ? 'S' : 'S,L'));
  const sizes = sizeNames.map((n) => {
    const s = SIZES[n.toUpperCase()];
    if (!s) throw new Error(`--sizes: unknown size "${n}"; use S, L or XS`);
    return s;
  });
  const skip = new Set(list(get('skip', 'BENCH_SKIP') ?? ''));
  return {
    sizes: skip.has('throughput') ? [] : sizes,
    writes: Number(get('writes', 'BENCH_WRITES') ?? 2000),
    rounds: Math.max(1, Math.floor(Number(get('rounds', 'BENCH_ROUNDS') ?? 3))),
    profile: !skip.has('profile'),
    postgresUrl: env.WSMIRROR_BENCH_POSTGRES_URL || undefined,
    auto: {
      enabled: !skip.has('auto'),
      allowance: Number(get('auto-allowance', 'BENCH_AUTO_ALLOWANCE') ?? 50),
      tickets: Number(get('auto-tickets', 'BENCH_AUTO_TICKETS') ?? (quick ? 1_000 : 5_000)),
      deals: Number(get('auto-deals', 'BENCH_AUTO_DEALS') ?? (quick ? 200 : 1_000)),
      headers: list(get('auto-headers', 'BENCH_AUTO_HEADERS') ?? (quick ? 'all' : 'all,no-policy')).map((h) => {
        if (h !== 'all' && h !== 'no-policy' && h !== 'none') throw new Error(`--auto-headers: "${h}" is not all, no-policy or none`);
        return h;
      }),
    },
    freshness: {
      enabled: !skip.has('freshness'),
      schedules: list(
        get('schedules', 'BENCH_SCHEDULES') ?? (quick ? '*/5 * * * * *,continuous' : '*/30 * * * * *,*/5 * * * * *,continuous'),
      ),
      writesPerSecond: numbers(get('writes-per-second', 'BENCH_WRITES_PER_SECOND') ?? (quick ? '1,5' : '1,5,20'), '--writes-per-second'),
      seconds: Number(get('freshness-seconds', 'BENCH_FRESHNESS_SECONDS') ?? (quick ? 30 : 75)),
      graceSeconds: Number(get('grace-seconds', 'BENCH_GRACE_SECONDS') ?? 75),
      allowance: Number(get('freshness-allowance', 'BENCH_FRESHNESS_ALLOWANCE') ?? 10),
      tickets: Number(get('freshness-tickets', 'BENCH_FRESHNESS_TICKETS') ?? 1_000),
      deals: Number(get('freshness-deals', 'BENCH_FRESHNESS_DEALS') ?? 200),
    },
    reporting: !skip.has('reporting') && !quick && env.BENCH_SKIP_REPORTING !== '1',
    outFile: get('out', 'BENCH_OUT') ?? 'bench/results.json',
  };
}
