/**
 * What sustained automation pays under pressure pricing (docs/security.md, "Pressure pricing"): the risk
 * engine and the puzzle pricing of an init, exactly as the API runs them, on a simulated clock, for a
 * script presenting as an ordinary desktop Chrome from one address or from every address of one /24, at
 * paces from a person's to the red team's. The attacker's cost is the expected hashes of every puzzle it
 * is served, divided by the best native solver's hashes per CPU-second, at a price per core-hour; images
 * count as free and always solved, refusals as free (it waits them out, sending nothing meanwhile): a
 * lower bound on what automation pays.
 *
 *   node loadtest/bench/pressure-curve.ts            # prints the table
 *   node loadtest/bench/pressure-curve.ts --write    # and writes it into docs/security.md between its markers
 *
 * NATIVE_HASHES_PER_CPU_SECOND (default 10,277: the fastest rate a SIMD scrypt solver was measured at, on a
 * quiet machine; the rates docs/pow.md measures on a loaded one are lower, so the default is conservative) and
 * DOLLARS_PER_CORE_HOUR (default 0.02) set the cost model; RISK_POLICY (JSON) prices with another app policy.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectedAttempts } from '@gatehouse/core/pow';
import { PLANS } from '../../api/src/apps/plans.ts';
import { makePow } from '../../api/src/challenges/kinds.ts';
import { RiskEngine } from '../../api/src/risk/engine.ts';
import { resolvePolicy } from '../../api/src/risk/policy.ts';
import { pricedPowParams } from '../../api/src/risk/pressure.ts';
import { loadDatacenterRanges } from '../../api/src/risk/ranges.ts';
import { MemoryVelocity } from '../../api/src/risk/velocity.ts';

const RATE = Number(process.env.NATIVE_HASHES_PER_CPU_SECOND ?? 10_277);
const DOLLARS_PER_CORE_HOUR = Number(process.env.DOLLARS_PER_CORE_HOUR ?? 0.02);
const HOUR = 3_600_000;
const DOC = join(import.meta.dirname, '../../docs/security.md');
const BEGIN = '<!-- pressure-curve:begin (loadtest/bench/pressure-curve.ts --write) -->';
const END = '<!-- pressure-curve:end -->';

const CHROME = {
  userAgent:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  acceptLanguage: 'en-GB,en;q=0.9',
  secChUa: '"Chromium";v="131", "Not_A Brand";v="24"',
  secChUaMobile: '?0',
  secChUaPlatform: '"Linux"',
  platform: 'web',
};
const SIGNALS = { webdriver: false, languages: ['en-GB'], screen: { w: 1440, h: 900 } };
/** RISK_POLICY (JSON): another app policy to price with (the defaults unless set). */
const policy = resolvePolicy(JSON.parse(process.env.RISK_POLICY ?? '{}'));
/** The free plan's units: a source past its share of them is priced at the image stage. */
const MONTHLY_QUOTA = PLANS.free.monthlyQuota;

type Hour = { served: number; atBase: number; hashes: number; refused: number };

/**
 * One attacker at `perHour` inits an hour from `addresses` in turn, for `hours` simulated hours, on a
 * fresh engine: what each hour served and cost. A refusal's Retry-After is waited out.
 */
async function attack(addresses: string[], perHour: number, hours: number): Promise<Hour[]> {
  const engine = new RiskEngine(new MemoryVelocity(), undefined, loadDatacenterRanges());
  const start = Date.UTC(2026, 0, 5);
  let now = start;
  engine.clock = () => now;
  const gap = HOUR / perHour;
  const base = expectedAttempts(makePow(10, 'invisible', false).puzzle);
  const result: Hour[] = Array.from({ length: hours }, () => ({
    served: 0,
    atBase: 0,
    hashes: 0,
    refused: 0,
  }));
  let until = 0;
  for (let i = 0; now < start + hours * HOUR; i++, now += gap) {
    if (now < until) continue;
    const hour = result[Math.floor((now - start) / HOUR)]!;
    const ip = addresses[i % addresses.length]!;
    try {
      const risk = await engine.assess({
        appId: 'bench',
        facts: { ...CHROME, ip },
        signals: SIGNALS,
        policy,
        serverToken: false,
        attested: false,
        monthlyQuota: MONTHLY_QUOTA,
      });
      if (risk.tier === 'reject') {
        hour.refused++;
        until = now + (risk.retryAfterSeconds ?? 60) * 1000;
        continue;
      }
      const pow = risk.tier === 'image' ? undefined : makePow(risk.score, risk.tier, false).puzzle;
      const hashes = pow ? expectedAttempts(pricedPowParams(pow, risk.score, risk.pressure.multiplier)) : 0;
      hour.served++;
      hour.hashes += hashes;
      if (risk.tier === 'invisible' && hashes <= base) hour.atBase++;
    } catch {
      // Rate limited per minute: nothing served, a minute waited.
      hour.refused++;
      until = now + 60_000;
    }
  }
  return result;
}

const dollars = (hashes: number) => (hashes / RATE / 3600) * DOLLARS_PER_CORE_HOUR;
const per1000 = (h: Hour) => (h.served === 0 ? '—' : `$${(dollars(h.hashes) / h.served) * 1000}`);
const money = (text: string) =>
  text.startsWith('$')
    ? `$${Number(text.slice(1))
        .toPrecision(2)
        .replace(/\.?0+$/, '')}`
    : text;

const ONE = ['198.51.100.7'];
const SLASH24 = Array.from({ length: 254 }, (_, i) => `203.0.113.${i + 1}`);
const HOSTED24 = Array.from({ length: 254 }, (_, i) => `3.5.140.${i + 1}`);

const rows: string[] = [];
const header =
  '| Source | Inits an hour | Passes in the first hour | Of them at the base price | $ per 1,000 passes, first hour | Passes an hour, sustained (third hour) | $ per 1,000 passes, sustained |';
rows.push(header, '|---|---:|---:|---:|---:|---:|---:|');
const scenarios: Array<[string, string[], number[]]> = [
  ['one address', ONE, [10, 30, 60, 120, 180, 360, 1000, 3455]],
  ['one /24 (254 addresses)', SLASH24, [60, 100, 200, 400, 1000, 3455, 10_000]],
  ['one hosting /24 (AWS)', HOSTED24, [60, 100, 200, 1000, 3455]],
];
let best1000: { cost: number; pace: number } | undefined;
let most24 = 0;
for (const [name, addresses, paces] of scenarios) {
  for (const pace of paces) {
    const [first, , third] = await attack(addresses, pace, 3);
    rows.push(
      `| ${name} | ${pace.toLocaleString('en')} | ${first!.served} | ${first!.atBase} | ${money(per1000(first!))} | ${third!.served} | ${money(per1000(third!))} |`,
    );
    if (addresses === SLASH24) {
      most24 = Math.max(most24, first!.served, third!.served);
      for (const h of [first!, third!]) {
        if (h.served >= 1000) {
          const cost = (dollars(h.hashes) / h.served) * 1000;
          if (!best1000 || cost < best1000.cost) best1000 = { cost, pace };
        }
      }
    }
  }
}

const farm = '$0.40–3 per 1,000 (reCAPTCHA v2 at human solving farms)';
const summary = [
  `Cost model: expected hashes of every puzzle served ÷ ${RATE.toLocaleString('en')} hashes per CPU-second (the fastest native solver measured: 16 AVX-512 lanes; docs/pow.md's own runs measured less on a loaded machine, so these costs are a lower bound) at $${DOLLARS_PER_CORE_HOUR} per core-hour; images free and always solved, refusals waited out. Farms: ${farm}.`,
  '',
  best1000
    ? `1,000 passes from one /24 within an hour: cheapest at ${best1000.pace} inits an hour, $${best1000.cost.toPrecision(2)} per 1,000.`
    : `1,000 passes from one /24 within an hour: not obtainable at any pace (at most ${most24} passes in an hour from one /24 are served; the rest are refused).`,
  '',
  'A hosting address scores the image tier before any pressure (an image, no proof-of-work): $0 in this model until its sources are priced.',
];
const table = [...summary, '', ...rows].join('\n');
console.log(table);

if (process.argv.includes('--write')) {
  const doc = readFileSync(DOC, 'utf8');
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${DOC} has no ${BEGIN} … ${END} markers`);
  writeFileSync(DOC, `${doc.slice(0, from + BEGIN.length)}\n${table}\n${doc.slice(to)}`);
  console.log(`written into ${DOC}`);
}
