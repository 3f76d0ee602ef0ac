import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, IN_CI, startTestApi, TEST_DATABASE, type TestApi } from './harness.ts';

/*
 * The outside fuzzer: Schemathesis, from PyPI, reads the served /openapi.json and throws
 * generated requests, valid and invalid, at every operation of the public and the admin API, with real
 * credentials, on this project's database. It fails on any 5xx, any status the document does not list for
 * the operation, any body, header or content type that does not match the document, and any request the
 * document says is invalid that the server accepts. How to run it longer: docs/fuzzing.md.
 *
 * CI installs it (.ci/run, pinned, in a venv under the CI cache) and passes SCHEMATHESIS_BIN. Absent: a
 * loud skip outside CI, a failure under CI=true.
 */

const REPO = resolve(import.meta.dirname, '../..');
const SECONDS = Number(process.env.SCHEMATHESIS_SECONDS ?? 60);
/**
 * Every check but positive_data_acceptance: the server is stricter than JSON Schema can say in two places
 * (bind_ip and binding_ip must agree; a subscription date is bounded as an instant, the document can only
 * bound the year as written), so a schema-valid request may rightly be refused. docs/fuzzing.md.
 */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
  'missing_required_header',
  'unsupported_method',
  'allow_header_conformance',
  'ignored_auth',
];

function findSchemathesis(): string | undefined {
  const candidates = [
    process.env.SCHEMATHESIS_BIN,
    join(process.env.CI_CACHE_DIR ?? join(REPO, '.cache/ci'), 'schemathesis/bin/st'),
  ];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

const bin = findSchemathesis();
if (!bin) {
  const message =
    'Schemathesis is not installed (SCHEMATHESIS_BIN, or .cache/ci/schemathesis/bin/st): the OpenAPI fuzzer cannot run (bash .ci/run installs it; docs/fuzzing.md).';
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
}
const run = !!bin && (await databaseAvailable());

/** Runs a command without blocking this process (the API under test answers from this event loop). */
function runCommand(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, output }));
  });
}

describe.runIf(run)(`Schemathesis over the public and admin API (${TEST_DATABASE})`, () => {
  let api: TestApi;
  let work: string;

  beforeAll(async () => {
    // The fuzzer sends wrong and missing credentials on purpose, thousands of times from one address: the
    // failed-authentication throttle (tested in auth-throttle.test.ts) would soon answer every request
    // with 429 and the run would stop reaching the API behind it.
    const unthrottled = '1000000';
    api = await startTestApi({
      AUTH_FAILURES_PER_SOURCE_AND_KEY: unthrottled,
      AUTH_FAILURES_PER_SOURCE: unthrottled,
      AUTH_FAILURES_PER_KEY: unthrottled,
      AUTH_TOKEN_FAILURES_PER_SOURCE_AND_APP: unthrottled,
    });
    work = mkdtempSync(join(tmpdir(), 'gatehouse-schemathesis-'));
  });
  afterAll(async () => {
    await api?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('serves a document valid against the OpenAPI 3.1 schema (the one Schemathesis ships)', async () => {
    const document = join(work, 'openapi.json');
    writeFileSync(document, await (await fetch(`${api.url}/openapi.json`)).text());
    // Schemathesis carries the OpenAPI 3.1 meta-schema, but a run goes on with a document that breaks it.
    const check = [
      'import json, sys',
      'from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR as validator',
      'errors = list(validator.iter_errors(json.load(open(sys.argv[1]))))',
      "print('\\n'.join('/'.join(map(str, e.instance_path)) + ': ' + e.message for e in errors))",
      'sys.exit(1 if errors else 0)',
    ].join('\n');
    const result = await runCommand(join(dirname(bin!), 'python'), ['-c', check, document], work);
    expect(result.output.trim()).toBe('');
    expect(result.code).toBe(0);
  });

  it(
    'finds no server error and no answer the OpenAPI document does not allow',
    async () => {
      const app = await api.createApp({ name: 'fuzzed', plan: 'enterprise' });
      // The admin operations act on their own app, so disabling it or rotating its secret leaves the
      // credentials above working.
      const target = await api.createApp({ name: 'admin-target', plan: 'pro' });
      const config = [
        `[auth.openapi.appKey]`,
        `api_key = "${app.appKey}"`,
        `[auth.openapi.appSecret]`,
        `api_key = "${app.appSecret}"`,
        `[auth.openapi.admin]`,
        `bearer = "${api.runtime.adminToken}"`,
        `[auth.openapi.standbySync]`,
        `bearer = "${api.runtime.syncToken}"`,
        // Real app keys most of the time, so generated requests get past the key look-up.
        `[dictionaries.app_keys]`,
        `values = ["${app.appKey}", "${target.appKey}"]`,
        `[dictionaries.admin_target]`,
        `values = ["${target.appKey}"]`,
        `[parameters]`,
        `"path.appKey" = { dictionary = "admin_target", probability = 0.8 }`,
        `"body.app_key" = { dictionary = "app_keys", probability = 0.7 }`,
      ].join('\n');
      const configFile = join(work, 'schemathesis.toml');
      writeFileSync(configFile, `${config}\n`);

      // CI replays one fixed sequence so a landing is never blocked by a case no earlier run could have
      // drawn; runs outside CI (and the long form, docs/fuzzing.md) draw a new seed each time.
      const seed = process.env.SCHEMATHESIS_SEED ?? (IN_CI ? '20261125' : undefined);
      const args = [
        '--config-file',
        configFile,
        'run',
        `${api.url}/openapi.json`,
        '--checks',
        CHECKS.join(','),
        '--max-time',
        String(SECONDS),
        // One worker: with two threads, Python 3.11's AST parser (which Hypothesis calls to describe its
        // filters) sometimes raises `SystemError: AST constructor recursion depth mismatch` (CPython
        // gh-106905), a runtime error of the fuzzer that failed the run with every case passing.
        '--workers',
        '1',
        '--request-timeout',
        '10',
        '--generation-database',
        'none',
        '--output-truncate',
        'true',
        ...(seed ? ['--seed', seed] : []),
      ];
      const result = await runCommand(bin!, args, work);
      // The summary names every failure, its check and a curl command that reproduces it.
      expect(result.code, result.output.slice(-20_000)).toBe(0);
      expect(result.output).toMatch(/Tested: \d+/);
    },
    (SECONDS + 120) * 1000,
  );
});
