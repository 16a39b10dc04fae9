import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/wsmirror.js', import.meta.url));
export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Environment for a spawned CLI: only what the test gives, plus PATH/HOME, so the developer's own WSMIRROR_* never leak in. */
export function cliEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, WSMIRROR_LOG_LEVEL: 'warn' };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/** Starts the real CLI (the compiled bin) as a child process. */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined>,
  cwd = REPO,
): ChildProcessWithoutNullStreams & { result: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const result = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return Object.assign(child, { result });
}

export async function runCli(args: string[], env: Record<string, string | undefined>, cwd = REPO): Promise<CliResult> {
  return spawnCli(args, env, cwd).result;
}

/** Resolves when `pattern` appears on the child's stderr or stdout. */
export function waitForOutput(child: ChildProcessWithoutNullStreams, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; saw:\n${seen}`)), timeoutMs);
    const onData = (d: Buffer) => {
      seen += d.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
}
