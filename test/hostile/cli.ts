/** Running the real CLI against the hostile upstream, measuring what the issue bounds. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, cliEnv, REPO } from '../helpers/cli.js';

const WRAPPER = fileURLToPath(new URL('./rss-wrapper.mjs', import.meta.url));

export interface Measured {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Bytes written to stderr (counted even past what is kept). */
  stderrBytes: number;
  /** Peak resident set size of the CLI process, in MiB (its own high-water mark). */
  peakRssMiB: number;
  elapsedMs: number;
}

/** Runs `wsmirror <args>` to its end; stderr beyond 2 MiB is counted, not kept. */
export async function measure(args: string[], env: Record<string, string | undefined>, dir: string): Promise<Measured> {
  const rssFile = join(dir, `rss-${process.hrtime.bigint()}.txt`);
  const started = performance.now();
  const child = spawn(process.execPath, [WRAPPER, BIN, ...args], { cwd: REPO, env: cliEnv({ ...env, WSMIRROR_TEST_RSS_FILE: rssFile }) });
  let stdout = '';
  let stderr = '';
  let stderrBytes = 0;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderrBytes += d.length;
    if (stderr.length < 2 * 1024 * 1024) stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  const peakKiB = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) : Number.NaN;
  rmSync(rssFile, { force: true });
  return { code, stdout, stderr, stderrBytes, peakRssMiB: peakKiB / 1024, elapsedMs: performance.now() - started };
}
