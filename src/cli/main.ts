import { Command, CommanderError, Option } from 'commander';
import { EXIT } from '../util/errors.js';
import { packageVersion } from '../util/version.js';
import { backfillCommand } from './commands/backfill.js';
import { demoCommand } from './commands/demo.js';
import { addFleetCommands } from './commands/fleet.js';
import { migrateCommand } from './commands/migrate.js';
import { backfillSinceCommand, collectIds, resyncCommand, type ResyncOptions } from './commands/resync.js';
import { usageError } from './session.js';
import { DEFAULT_WAIT_SECONDS } from './writer-request.js';
import { addDialectFlags, simulateCommand, type SimulateOptions } from './commands/simulate.js';
import { statusCommand } from './commands/status.js';
import { syncCommand } from './commands/sync.js';
import { verifyCommand, type VerifyOptions } from './commands/verify.js';
import { reportExit, toExitError } from './exit.js';
import type { GlobalFlags } from '../session/index.js';
import { SecretRedactor } from '../util/redact.js';

function globals(cmd: Command): GlobalFlags {
  const o = cmd.optsWithGlobals<{ config?: string; database?: string; logLevel?: string }>();
  return { config: o.config, database: o.database, logLevel: o.logLevel };
}

function build(redactor: SecretRedactor): Command {
  const program = new Command('wsmirror')
    .description('Keeps a live, queryable mirror of a Support and Sales Workspace in SQLite or PostgreSQL.')
    .version(packageVersion())
    .option('--config <path>', 'config file (default ./wsmirror.json when present; env WSMIRROR_CONFIG)')
    .option('--database <path|url>', 'SQLite file path or postgres:// URL (env WSMIRROR_DATABASE)')
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent (env WSMIRROR_LOG_LEVEL)')
    .showHelpAfterError('(run `wsmirror --help` for the commands)')
    .exitOverride();
  // Registration order is the order --help lists the commands in.
  addMirrorCommands(program, redactor);
  addFleetCommands(program, redactor);
  addSimulatorCommands(program);
  return program;
}

/** The commands that read the config and open the mirror; they fill the shared redactor as they read secrets. */
function addMirrorCommands(program: Command, redactor: SecretRedactor): void {
  program
    .command('backfill')
    .description('copy pipelines, deals and tickets (with messages); resumable; then hand the watermark to sync')
    .option('--history [since]', 'also copy the change log: all of it, or from an ISO date')
    .option(
      '--since <date>',
      're-list the records updated since an ISO date or instant and re-read what differs (keeps watermark and history)',
    )
    .option(
      '--wait <seconds>',
      `with --since, while another process holds the mirror: how long to wait for it to serve the request (0: queue and return; default ${DEFAULT_WAIT_SECONDS})`,
    )
    .option('--json', 'with --since: machine-readable output')
    .action(async (opts: { history?: string | boolean; since?: string; wait?: string; json?: boolean }, cmd: Command) => {
      if (opts.since === undefined) return backfillCommand(globals(cmd), opts, redactor);
      if (opts.history !== undefined)
        throw usageError('--since re-reads a period of an existing mirror and --history copies the change log: use one of them.');
      return backfillSinceCommand(globals(cmd), { ...opts, since: opts.since }, redactor);
    });

  program
    .command('resync')
    .description('re-read records now (a ticket with its messages, a deal) and print what changed; safe while `run` holds the mirror')
    .option('--ticket <id>', 'a ticket id (repeatable, or a comma list)', collectIds)
    .option('--deal <id>', 'a deal id (repeatable, or a comma list)', collectIds)
    .option(
      '--wait <seconds>',
      `while another process holds the mirror: how long to wait for it to serve the request (0: queue and return; default ${DEFAULT_WAIT_SECONDS})`,
    )
    .option('--json', 'machine-readable output')
    .action(async (opts: ResyncOptions, cmd: Command) => resyncCommand(globals(cmd), opts, redactor));

  program
    .command('sync')
    .description('one incremental cycle: read the change log from the watermark until caught up, apply, exit')
    .action(async (_opts: unknown, cmd: Command) => syncCommand(globals(cmd), redactor));

  program
    .command('run')
    .description('the daemon: backfill if empty, then sync on every tick; health and metrics server')
    .action(async (_opts: unknown, cmd: Command) => {
      const { runDaemon } = await import('./commands/run.js');
      await runDaemon(globals(cmd), redactor);
    });

  program
    .command('status')
    .description('watermark, lag behind upstream, last run, row counts, quarantined records')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }, cmd: Command) => statusCommand(globals(cmd), opts, redactor));

  program
    .command('verify')
    .description('compare the mirror with upstream; exit 5 on drift')
    .option('--repair', 're-read what differs (through the running daemon when one holds the mirror)')
    .option('--json', 'machine-readable output')
    .option('--settle <seconds>', 'longest wait for a running daemon to take the changes in flight before a second look (0: none)', '10')
    .option(
      '--wait <seconds>',
      `with --repair, while another process holds the mirror: how long to wait for it to serve the repair (0: queue and return; default ${DEFAULT_WAIT_SECONDS})`,
    )
    .action(async (opts: VerifyOptions, cmd: Command) => verifyCommand(globals(cmd), opts, redactor));

  program
    .command('migrate')
    .description('apply pending migrations (every other command also does this first)')
    .action(async (_opts: unknown, cmd: Command) => migrateCommand(globals(cmd), redactor));

  program
    .command('report')
    .description('print the headline figures from the reporting views')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { reportCommand } = await import('./commands/report.js');
      await reportCommand(globals(cmd), opts, redactor);
    });
}

/** The bundled simulator and the demo built on it: they read no config file, only their own flags. */
function addSimulatorCommands(program: Command): void {
  const simulate = program
    .command('simulate')
    .description('serve the bundled workspace simulator')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', '4010')
    // No commander default: it would show as `(default: [])`; the real one is applied in simulate.ts.
    .option('--api-key <key>', 'accepted API key (repeatable) (default: "test-key")', (v: string, prev?: string[]) => [...(prev ?? []), v])
    .option('--seed <n>', 'generator seed', '1')
    .option('--tickets <n>', 'tickets to generate', '50')
    .option('--deals <n>', 'deals to generate', '20')
    .option('--pipelines <n>', 'pipelines to generate', '2')
    .option('--activity <writes/s>', 'live random writes per second', '0')
    .option('--control', 'enable the control surface under /_control')
    .option('--workspaces <n|file.json>', 'serve many workspaces, each under /w/<id>: a count (ws1..wsN) or a JSON file of them')
    .addOption(new Option('--latency-ms <ms>', 'added latency per request'))
    .addOption(new Option('--error-rate <fraction>', 'fraction of requests answered 5xx'))
    .addOption(new Option('--rate-limit-rate <fraction>', 'fraction of requests answered 429'))
    .addOption(new Option('--drop-rate <fraction>', 'fraction of connections dropped'))
    .addOption(
      new Option('--rate-limit <requests/s>', 'token-bucket rate limit: 429 with Retry-After and RateLimit-* headers once exceeded'),
    )
    .addOption(new Option('--rate-limit-burst <n>', 'bucket size of --rate-limit (default: one second of it)'));
  addDialectFlags(simulate).action(async (opts: SimulateOptions) => simulateCommand(opts));

  program
    .command('demo')
    .description('simulator with live activity, backfill, a few syncs, then the report')
    .option('--database <path>', 'where the demo mirror goes', './data/demo.sqlite')
    .option('--tickets <n>', 'tickets in the simulated workspace', '500')
    .option('--deals <n>', 'deals in the simulated workspace', '150')
    .option('--cycles <n>', 'sync cycles after the backfill', '3')
    // The program's global --database takes the flag before this command sees it; honour it here.
    .action(async (opts: { database: string; tickets: string; deals: string; cycles: string }, cmd: Command) =>
      demoCommand({ ...opts, database: cmd.parent?.opts<{ database?: string }>().database ?? opts.database }),
    );
}

export async function main(argv: string[]): Promise<number> {
  // One per invocation: the resources fill it as they read the config, and the reporter below
  // scrubs the last sentence with it.
  const redactor = new SecretRedactor();
  const program = build(redactor);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const exit = toExitError(err);
    reportExit(exit, redactor);
    return exit.exitCode;
  }
}

// Exit explicitly: open sockets or timers left by a failure must not keep the process alive, and
// SQLite connections are left to the OS on purpose (see openMirror). stdout and stderr are
// synchronous for files and pipes on Linux, so nothing written is cut off.
main(process.argv).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`wsmirror: ${String(err)}\n`);
    process.exit(EXIT.unexpected);
  },
);
