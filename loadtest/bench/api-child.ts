import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { nativeHasher, type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { createApp } from '../../api/src/app.ts';
import { appSettings } from '../../api/src/apps/settings.ts';
import { bootstrap } from '../../api/src/bootstrap.ts';
import { initChallenge } from '../../api/src/challenges/init.ts';
import { loadConfig } from '../../api/src/config.ts';
import { passTokenClaims } from '../../api/src/tokens/pass-token-claims.ts';
import { mintPassToken, validatePassToken } from '../../api/src/tokens/pass-tokens.ts';
import { serveCommands } from './child-ipc.ts';
import { pool } from './pool.ts';
import type { Command, CreatedApp, LoopWatch, Ready, SolvedChallenges } from './protocol.ts';

/**
 * Bench child: the real API, built as `src/server.ts` builds it (configuration from the environment,
 * bootstrap, createApp, listen), plus the bench's commands to create apps and mint
 * tokens with the API's own runtime. PGlite lives inside this process, so there the tokens can only be minted
 * here; on PostgreSQL the bench starts a second one of these on the same database to prepare them (run.ts).
 */
const runtime = await bootstrap(loadConfig());
const server = createApp(runtime).listen(0, '127.0.0.1');
await once(server, 'listening');

/** Signals of an ordinary browser, as the widget sends them. */
export const BENCH_SIGNALS = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };

/** What the API sees of a desktop Chrome's init request (consistent headers and client hints). */
const CHROME_FACTS = {
  ip: '127.0.0.1',
  userAgent:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36',
  acceptLanguage: 'en-US,en;q=0.9',
  secChUa: '"Chromium";v="138", "Google Chrome";v="138", "Not)A;Brand";v="99"',
  secChUaMobile: '?0',
  secChUaPlatform: '"Linux"',
};
const BENCH_FACTS = {
  ip: '127.0.0.1',
  userAgent: 'bench',
  acceptLanguage: 'en',
  secChUa: '',
  secChUaMobile: '',
  secChUaPlatform: '',
};

/** The server's own scrypt/Argon2id (node:crypto on the thread pool): a real puzzle solves in about 0.5 s. */
const hasher = nativeHasher();

/** The watch `watch-start` began: the loop's delay histogram, the GC pauses seen, the claims' stats then. */
let watching:
  | {
      delay: ReturnType<typeof monitorEventLoopDelay>;
      pauses: { ms: number; major: boolean }[];
      gc: PerformanceObserver;
      claims: { statements: number; claims: number; roundTripMs: number };
    }
  | undefined;

async function extra(command: Command): Promise<unknown> {
  if (command.type === 'watch-start') {
    watching?.delay.disable();
    watching?.gc.disconnect();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const pauses: { ms: number; major: boolean }[] = [];
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        // detail.kind: 1 scavenge (young generation), 2 minor mark-sweep, 4 mark-compact, 8 incremental marking.
        const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
        pauses.push({ ms: entry.duration, major: kind === 4 || kind === 8 });
      }
    });
    gc.observe({ entryTypes: ['gc'] });
    const stats = passTokenClaims(runtime.db).stats;
    stats.slowestMs = 0;
    watching = { delay, pauses, gc, claims: { ...stats } };
    return null;
  }
  if (command.type === 'watch-stop') {
    if (!watching) throw new Error('not watching');
    const { delay, pauses, gc, claims } = watching;
    watching = undefined;
    delay.disable();
    gc.disconnect();
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const now = passTokenClaims(runtime.db).stats;
    return {
      delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      gc: {
        count: pauses.length,
        totalMs: Math.round(pauses.reduce((a, p) => a + p.ms, 0) * 100) / 100,
        maxMs: Math.round(Math.max(0, ...pauses.map((p) => p.ms)) * 100) / 100,
        major: pauses.filter((p) => p.major).length,
        majorMs: Math.round(pauses.reduce((a, p) => a + (p.major ? p.ms : 0), 0) * 100) / 100,
      },
      claims: {
        statements: now.statements - claims.statements,
        claims: now.claims - claims.claims,
        roundTripMs: Math.round((now.roundTripMs - claims.roundTripMs) * 100) / 100,
        slowestMs: Math.round(now.slowestMs * 100) / 100,
      },
    } satisfies LoopWatch;
  }
  if (command.type === 'create-app') {
    const unlimited = {
      rate_limit: { ip_per_minute: 1e9, high_risk_ip_per_minute: 1e9 },
      velocity: { ip: [1e9, 1e9], prefix: [1e9, 1e9], app: 1e9 },
    };
    const challenge =
      command.challenge === 'invisible-test-mode'
        ? { test_mode: true, risk_policy: unlimited }
        : command.challenge === 'invisible'
          ? { risk_policy: unlimited }
          : command.challenge === 'invisible-forced'
            ? { risk_policy: { ...unlimited, invisible_below: 101, image_below: 101 } }
            : command.challenge === 'slide'
              ? {
                  risk_policy: { ...unlimited, invisible_below: 0, image_below: 101, image_kinds: ['slide'] },
                }
              : {};
    const { app, secret } = await runtime.apps.create(
      appSettings.parse({
        name: `bench-${command.plan}`,
        plan: command.plan,
        pass_token_ttl: 3600,
        ...challenge,
      }),
    );
    return { appId: app.id, appKey: app.appKey, appSecret: secret } satisfies CreatedApp;
  }
  if (command.type === 'mint') {
    const app = await runtime.apps.findById(command.appId);
    if (!app) throw new Error(`no app ${command.appId}`);
    const solvedAt = Math.floor(Date.now() / 1000);
    return pool(command.count, 16, async (i) => {
      const token = await mintPassToken(runtime.db, runtime.keys, {
        app,
        challengeId: `ch_bench_${i}`,
        action: 'login',
        captchaArgs: {
          platform: 'web',
          user_ip: '203.0.113.7',
          referer: 'https://shop.example/login',
          pkg: null,
          solved_at: solvedAt,
          risk_score: 10,
        },
      });
      if (command.consume) await validatePassToken(runtime.db, runtime.keys, app, token);
      return token;
    });
  }
  if (command.type === 'solved-challenges') {
    let pow: SolvedChallenges['pow'];
    const bodies = await pool(command.count, 8, async () => {
      const started = await initChallenge(
        runtime,
        { app_key: command.appKey, action: 'login', platform: 'web', signals: BENCH_SIGNALS },
        command.browser ? CHROME_FACTS : BENCH_FACTS,
      );
      if (started.mode !== 'challenge' || started.tier !== 'invisible' || !started.pow)
        throw new Error('the bench app must get the invisible tier');
      const puzzle = started.pow as Puzzle;
      pow ??= {
        algorithm: puzzle.algorithm,
        memoryKiB: puzzle.memoryKiB,
        count: puzzle.count,
        target: puzzle.target,
      };
      const solution = await solvePuzzle(puzzle, hasher ? { hasher } : {});
      return JSON.stringify({
        app_key: command.appKey,
        challenge_id: started.challenge_id,
        challenge: started.challenge,
        pow: solution,
      });
    });
    return { bodies, ...(pow ? { pow } : {}) } satisfies SolvedChallenges;
  }
  if (command.type === 'wrong-submits') {
    return pool(command.count, 8, async () => {
      const started = await initChallenge(
        runtime,
        { app_key: command.appKey, action: 'login', platform: 'web', signals: BENCH_SIGNALS },
        CHROME_FACTS,
      );
      if (started.mode !== 'challenge') throw new Error('the bench app must be served challenges');
      return JSON.stringify({
        app_key: command.appKey,
        challenge_id: started.challenge_id,
        challenge: started.challenge,
        pow: { nonces: [] },
      });
    });
  }
  throw new Error(`unknown command ${(command as { type: string }).type}`);
}

serveCommands(extra, async () => {
  server.closeAllConnections();
  server.close();
  await runtime.close();
});
process.send?.({
  type: 'ready',
  port: (server.address() as AddressInfo).port,
  database: runtime.database.kind,
} satisfies Ready);
