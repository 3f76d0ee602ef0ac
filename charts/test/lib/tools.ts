/**
 * The command-line tools the chart and manifest tests run (helm, kubeconform, kustomize), found in
 * $GATEHOUSE_TOOLS_DIR/bin, .cache/tools/bin or PATH. Outside CI a missing tool skips its tests loudly;
 * with CI=true it fails them. The control plane (etcd, kube-apiserver) is operator/test/control-plane.ts's,
 * with its own check, controlPlaneAvailable.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const CHART = join(REPO, 'charts/gatehouse');
export const IN_CI = process.env.CI === 'true';

export type Tool = 'helm' | 'kubeconform' | 'kustomize';

/** Build hints per tool, for the skip or failure message. */
const HOW: Record<Tool, string> = {
  helm: 'bash .ci/tools.sh helm',
  kubeconform: 'bash .ci/tools.sh kubeconform',
  kustomize:
    'GOBIN=$PWD/.cache/tools/bin go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2 (see docs/deploy.md)',
};

function isExecutable(path: string) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of a tool, or undefined. */
export function findTool(name: Tool): string | undefined {
  const dirs = [
    process.env.GATEHOUSE_TOOLS_DIR ? join(process.env.GATEHOUSE_TOOLS_DIR, 'bin') : '',
    join(REPO, '.cache/tools/bin'),
    ...(process.env.PATH ?? '').split(delimiter),
  ].filter(Boolean);
  for (const dir of dirs) if (isExecutable(join(dir, name))) return join(dir, name);
  return undefined;
}

/**
 * Which of the tools are missing. Outside CI it prints one loud line per missing tool (the caller then
 * skips); with CI=true a missing tool is an error.
 */
export function missingTools(suite: string, names: Tool[]): Tool[] {
  const missing = names.filter((n) => !findTool(n));
  if (!missing.length) return [];
  const lines = missing.map((m) => `  - ${m}: build it with \`${HOW[m]}\``).join('\n');
  const message = `${suite}: missing ${missing.join(', ')}\n${lines}`;
  if (IN_CI) throw new Error(`${message}\nCI=true: these tests must not be skipped.`);
  console.warn(`\n*** SKIPPING ${message}\n*** (with CI=true this fails)\n`);
  return missing;
}

const execFileAsync = promisify(execFile);

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; never throws for a non-zero exit (the result says it). */
export async function run(
  tool: Tool,
  args: string[],
  options: { input?: string; cwd?: string } = {},
): Promise<RunResult> {
  const path = findTool(tool);
  if (!path) throw new Error(`${tool} is not available`);
  const child = execFileAsync(path, args, {
    cwd: options.cwd ?? REPO,
    maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(REPO, '.cache/helm/cache'),
      HELM_CONFIG_HOME: join(REPO, '.cache/helm/config'),
      HELM_DATA_HOME: join(REPO, '.cache/helm/data'),
    },
  });
  if (options.input !== undefined) {
    child.child.stdin?.end(options.input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}
