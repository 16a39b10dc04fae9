/** Runs one measured job (bench/worker.ts) in its own process, so its time and peak RSS are its own. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const worker = fileURLToPath(new URL('./worker.js', import.meta.url));

export type JobResult = Record<string, number>;

/** `cpuProfile`: write a V8 CPU profile of the job to this file (bench/worker.ts, bench/profile.ts). */
export function runJob(mode: string, url: string, arg = '', cpuProfile?: string): Promise<JobResult> {
  const env = cpuProfile === undefined ? process.env : { ...process.env, BENCH_CPU_PROFILE: cpuProfile };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [worker, mode, url, arg], { maxBuffer: 1 << 26, env }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as JobResult);
    });
  });
}
