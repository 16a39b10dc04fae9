/**
 * `npm run bench` (`-- --quick` for a short run): what bench/README.md describes, written to
 * bench/results.json as each part finishes and printed as tables.
 *
 * 1. Throughput at sizes S and L, SQLite and (with WSMIRROR_BENCH_POSTGRES_URL) PostgreSQL:
 *    backfill and a sync after writes, each against the raw fetch loop in the same run.
 * 2. maxRequestsPerSecond "auto" against the simulator's token bucket.
 * 3. Freshness of `wsmirror run` under a rate limit and live writes.
 * 4. The reporting views (bench/reporting.ts, bench/reporting-pg.ts), not in --quick.
 */
import pg from 'pg';
import { measureAutoRate } from './auto-rate.js';
import { measureFreshness } from './freshness.js';
import { parseBenchOptions } from './options.js';
import {
  newResults,
  printAutoRate,
  printCpu,
  printFreshness,
  printLean,
  printProfiles,
  printRounds,
  printThroughput,
  saveResults,
  type BenchResults,
} from './results.js';
import { measureCapacity, measureThroughput } from './throughput.js';
import { printSteps } from './steps.js';

const options = parseBenchOptions(process.argv.slice(2), process.env);
const started = performance.now();

async function postgresVersion(url: string | undefined): Promise<string | undefined> {
  if (!url) return undefined;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? undefined;
  } finally {
    await c.end();
  }
}

async function part(results: BenchResults, name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    // One failed part must not lose the others' figures; the failure is in the results.
    const message = `${name}: ${err instanceof Error ? err.message : String(err)}`;
    results.errors.push(message);
    console.error(`FAILED ${message}`);
  } finally {
    results.durationMs = Math.round(performance.now() - started);
    saveResults(options.outFile, results);
  }
}

async function main(): Promise<void> {
  const results = newResults(options, await postgresVersion(options.postgresUrl));
  const dialects = options.postgresUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  for (const size of options.sizes) {
    await part(results, `capacity ${size.name}`, async () => {
      results.capacity[size.name] = await measureCapacity(size);
      console.log(
        `Simulator capacity at ${size.name}: ${results.capacity[size.name]} GET /tickets/:id per second (loopback, 16 connections x 8 pipelined, 4 s)`,
      );
    });
    for (const dialect of dialects) {
      await part(results, `throughput ${size.name} ${dialect}`, async () => {
        console.log(`Throughput ${size.name} on ${dialect}...`);
        results.throughput.push(
          await measureThroughput(size, dialect, options.writes, options.postgresUrl, { rounds: options.rounds, profile: options.profile }),
        );
      });
    }
  }
  printThroughput(results.throughput);
  printCpu(results.throughput);
  printLean(results.throughput);
  printRounds(results.throughput);
  printSteps(results.throughput);
  printProfiles(results.throughput);

  if (options.auto.enabled) {
    for (const headers of options.auto.headers) {
      await part(results, `auto rate (${headers})`, async () => {
        console.log(`"auto" backfill against ${options.auto.allowance} req/s (headers: ${headers})...`);
        results.autoRate.push(await measureAutoRate({ ...options.auto, headers }));
      });
    }
    printAutoRate(results.autoRate);
  }

  if (options.freshness.enabled) {
    const f = options.freshness;
    for (const schedule of f.schedules) {
      for (const writesPerSecond of f.writesPerSecond) {
        await part(results, `freshness ${schedule} ${writesPerSecond}/s`, async () => {
          console.log(`Freshness: schedule "${schedule}", ${writesPerSecond} writes/s, ${f.allowance} req/s, ${f.seconds} s...`);
          results.freshness.push(await measureFreshness({ ...f, schedule, writesPerSecond }));
        });
      }
    }
    printFreshness(results.freshness);
  }

  if (options.reporting) {
    await part(results, 'reporting', async () => {
      const reporting = await import('./reporting.js');
      console.log('\nReporting views (50,000 tickets, 250,000 messages, 10,000 deals):');
      const figures = await reporting.benchReporting();
      results.reporting = figures;
      reporting.printBenchReporting(figures);
    });
    if (options.postgresUrl) {
      await part(results, 'reporting postgres', async () => {
        const { benchReportingPostgres, printBenchReportingPostgres } = await import('./reporting-pg.js');
        console.log('\nReporting views on PostgreSQL (same mirror, copied from SQLite):');
        const figures = await benchReportingPostgres(options.postgresUrl!);
        results.reportingPostgres = figures;
        printBenchReportingPostgres(figures);
      });
    }
  }
  console.log(`\nResults written to ${options.outFile} (${Math.round((performance.now() - started) / 1000)} s).`);
  if (results.errors.length > 0) {
    console.error(`${results.errors.length} part(s) failed:\n  ${results.errors.join('\n  ')}`);
    process.exitCode = 1;
  }
}

await main();
