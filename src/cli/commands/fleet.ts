import type { Command } from 'commander';
import type { FleetFile, FleetStatus } from '../../fleet/index.js';
import type pg from 'pg';

/** pg-boss and pg load only for the fleet commands: every other command starts without them. */
const fleetModule = () => import('../../fleet/index.js');
import { EXIT, ExitError } from '../../util/errors.js';
import type { SecretRedactor } from '../../util/redact.js';

/** `wsmirror fleet ...`: many workspaces, one PostgreSQL database, workers on its job queue (docs/fleet.md). */
export function addFleetCommands(program: Command, redactor: SecretRedactor): void {
  const fleet = program
    .command('fleet')
    .description('many workspaces on one PostgreSQL database: workers, apply, status, pause/resume, remove');
  fleet
    .command('worker')
    .description('join the fleet: reconcile the fleet file, then run workspace slices from the job queue until stopped')
    .option('--concurrency <n>', 'slices this worker runs at once (default worker.concurrency, 4)')
    .option('--http-port <n>', 'port of the fleet page and /metrics (default worker.http.port; 0 disables)')
    .action(async (opts: { concurrency?: string; httpPort?: string }, cmd: Command) => {
      const concurrency = intFlag('--concurrency', opts.concurrency, 1, 64);
      const httpPort = intFlag('--http-port', opts.httpPort, 0, 65_535);
      const { runFleetWorker } = await fleetModule();
      await runFleetWorker(
        fleetPath(cmd),
        { ...(concurrency === undefined ? {} : { concurrency }), ...(httpPort === undefined ? {} : { httpPort }) },
        redactor,
      );
    });
  fleet
    .command('apply')
    .description('reconcile the fleet file into the fleet table (added, changed, removed workspaces; views rebuilt)')
    .action(async (_o: unknown, cmd: Command) =>
      withFleet(cmd, redactor, async (pool, file) => {
        const { applyFleet } = await fleetModule();
        const result = await applyFleet(pool, file.workspaces);
        process.stdout.write(`${JSON.stringify(result)}\n`);
      }),
    );
  fleet
    .command('status')
    .description('one line per workspace: state, lag, current as of, last success, last error')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }, cmd: Command) =>
      withFleet(cmd, redactor, async (pool) => {
        const { readFleetStatus } = await fleetModule();
        const status = await readFleetStatus(pool);
        process.stdout.write(opts.json ? `${JSON.stringify(status, null, 2)}\n` : statusText(status));
      }),
    );
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    fleet
      .command(`${name} <id>`)
      .description(paused ? 'stop syncing a workspace (its slice in flight finishes)' : 'sync a paused workspace again (within 10 s)')
      .action(async (id: string, _o: unknown, cmd: Command) =>
        withFleet(cmd, redactor, async (pool) => {
          const { setPaused } = await fleetModule();
          if (!(await setPaused(pool, id, paused))) throw unknownWorkspace(id);
          process.stdout.write(`${id}: ${paused ? 'paused' : 'resumed'}\n`);
        }),
      );
  }
  fleet
    .command('remove <id>')
    .description('stop syncing a workspace removed from the fleet file; its schema stays unless --drop')
    .option('--drop', "also drop the workspace's schema and all its data")
    .action(async (id: string, opts: { drop?: boolean }, cmd: Command) =>
      withFleet(cmd, redactor, async (pool, file) => {
        if (file.workspaces.some((w) => w.id === id)) {
          throw new ExitError(
            EXIT.usage,
            `Workspace "${id}" is still in the fleet file; remove it there first, or the next apply adds it back.`,
            { code: 'USAGE' },
          );
        }
        const { removeWorkspace } = await fleetModule();
        const schema = await removeWorkspace(pool, id, opts.drop === true);
        if (schema === null) throw unknownWorkspace(id);
        process.stdout.write(`${id}: removed${opts.drop ? `, schema ${schema} dropped` : `; its data stays in schema ${schema}`}\n`);
      }),
    );
}

function intFlag(name: string, given: string | undefined, min: number, max: number): number | undefined {
  if (given === undefined) return undefined;
  const n = Number(given);
  if (!(Number.isInteger(n) && n >= min && n <= max)) {
    throw new ExitError(EXIT.usage, `${name} must be an integer from ${min} to ${max}, got ${given}.`, { code: 'USAGE' });
  }
  return n;
}

function fleetPath(cmd: Command): string {
  const path = cmd.optsWithGlobals<{ config?: string }>().config ?? process.env.WSMIRROR_FLEET_CONFIG;
  if (!path)
    throw new ExitError(EXIT.usage, 'The fleet commands need the fleet file: pass --config fleet.json (or set WSMIRROR_FLEET_CONFIG).', {
      code: 'USAGE',
    });
  return path;
}

async function withFleet(cmd: Command, redactor: SecretRedactor, work: (pool: pg.Pool, file: FleetFile) => Promise<void>): Promise<void> {
  const { loadFleetFile, openFleetPool, registerDatabaseSecret } = await fleetModule();
  const file = loadFleetFile(fleetPath(cmd));
  registerDatabaseSecret(file.database, redactor);
  const pool = openFleetPool(file.database, 2);
  try {
    await work(pool, file);
  } finally {
    await pool.end();
  }
}

function unknownWorkspace(id: string): ExitError {
  return new ExitError(EXIT.usage, `No workspace "${id}" in the fleet table; see \`wsmirror fleet status\`.`, { code: 'USAGE' });
}

function statusText(s: FleetStatus): string {
  const lines = s.workspaces.map((w) =>
    [
      w.id.padEnd(20),
      w.state.padEnd(16),
      `lag ${w.lagSeconds === null ? '?' : w.lagSeconds.toFixed(1)}s`.padEnd(12),
      `as of ${w.currentAsOf ?? '-'}`.padEnd(32),
      `ok ${w.lastSuccessAt ?? 'never'}`.padEnd(30),
      w.lastError ? `${w.lastError.code ?? ''}: ${w.lastError.message}` : '',
    ].join(' '),
  );
  return `${s.workspaces.length} workspaces, ${s.workers} worker(s) alive; ${viewsText(s.views)}\n${lines.join('\n')}\n`;
}

function viewsText(v: FleetStatus['views']): string {
  const state = v.current ? `views current (built ${v.builtAt ?? 'never'})` : 'views waiting for their next rebuild (within 10 s)';
  return v.error ? `${state}; last rebuild failed: ${v.error.message}` : state;
}
