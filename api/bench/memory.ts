import { readFileSync } from 'node:fs';

/** Resident memory of the server child over a measured run, in MiB; null where /proc is absent. */
export interface RssSummary {
  beforeMiB: number | null;
  peakMiB: number | null;
  afterMiB: number | null;
}

/** VmRSS of `pid` from /proc/<pid>/status (kB there), in MiB. */
function rssMiB(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    const kB = Number(line?.split(/\s+/)[1]);
    return Number.isFinite(kB) ? Math.round((kB / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/**
 * Samples the RSS of `pid` every `everyMs` from now until `stop()`. A timer in the load generator's process
 * is good enough: autocannon yields to the event loop between responses, and a sample costs one small read.
 */
export function sampleRss(pid: number, everyMs = 100): { stop(): RssSummary } {
  const beforeMiB = rssMiB(pid);
  let peakMiB = beforeMiB;
  const take = () => {
    const now = rssMiB(pid);
    if (now !== null && (peakMiB === null || now > peakMiB)) peakMiB = now;
    return now;
  };
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const afterMiB = take();
      return { beforeMiB, peakMiB, afterMiB };
    },
  };
}
