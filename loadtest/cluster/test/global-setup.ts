import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { CLUSTER_DIR, IN_CI, missingPrerequisite, ROOT } from './harness.ts';

/**
 * Starts the local cluster once for the whole suite and stops it afterwards, whatever the outcome (down.sh
 * restores the host). Outside CI a missing prerequisite skips the suite loudly (the files learn it through
 * `inject('clusterSkip')`); under CI=true it fails. The suite's own wall time is printed at the end.
 */

let started = 0;
let up = false;

function sh(script: string): Promise<number | null> {
  return new Promise((done) => {
    const child = spawn('bash', [join(ROOT, 'loadtest/cluster', script)], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', done);
  });
}

export async function setup(project: TestProject) {
  started = Date.now();
  // CLUSTER_REUSE=1: the cluster `npm run cluster` started (iterating on a test); left running afterwards.
  if (process.env.CLUSTER_REUSE === '1' && existsSync(join(CLUSTER_DIR, 'env'))) {
    project.provide('clusterSkip', '');
    return;
  }
  const missing = missingPrerequisite();
  if (missing) {
    if (IN_CI) throw new Error(`${missing}\nCI=true: the cluster suite must not be skipped.`);
    console.warn(`\n!!! SKIPPING the cluster suite: ${missing}\n`);
    project.provide('clusterSkip', missing);
    return;
  }
  const code = await sh('up.sh');
  if (code !== 0)
    throw new Error(`loadtest/cluster/up.sh exited with ${code} (logs: .cache/cluster/last-logs)`);
  up = true;
  project.provide('clusterSkip', '');
  console.log(`cluster suite: cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

export async function teardown() {
  const code = up ? await sh('down.sh') : 0;
  console.log(
    `cluster suite: ${((Date.now() - started) / 1000).toFixed(1)} s of wall time, cluster start and teardown included`,
  );
  if (code !== 0)
    throw new Error(
      `loadtest/cluster/down.sh exited with ${code}: the host is not restored (its output above)`,
    );
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why the cluster suite is skipped ('' when the cluster is up). */
    clusterSkip: string;
  }
}
