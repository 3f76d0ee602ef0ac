/**
 * The attacker's cost per 1,000 passes of the invisible tier's proof-of-work, per attack, at $0.02 per
 * core-hour, beside human solving farms ($0.40-3 per 1,000). Inputs are measured rates (attacker.ts); the
 * rows marked as estimates say what they assume.
 */

export type EconomicsInput = {
  /** Expected hashes of one pass at low risk and at score 100 (the default policy). */
  hashesLow: number;
  hashesHigh: number;
  /** Hashes per CPU-second: the widget's worker in Chromium, OpenSSL one at a time, the best SIMD lanes. */
  chromium: number;
  openssl: number;
  lanes: number;
  lanesId: string;
  /** The server's CPU per verified hash (OpenSSL through node:crypto), in ms. */
  serverMsPerHash: number;
};

export const CORE_HOUR_USD = 0.02;
export const FARM_USD_PER_1000 = [0.4, 3] as const;
/** A client's CPU for one init and one submit over HTTP, for the no-work attack (an assumption, not measured). */
const CLIENT_MS_PER_SUBMIT = 1;
/** Attempts per sub-puzzle at low risk and at score 100 under the check before the hash binding. */
const OLD_ATTEMPTS_PER_CHECK = { low: 52, high: 360 };
/** An RTX 4090 at 512 KiB, hashes per second (docs/pow.md, "What a GPU gains"), rented at $0.40 an hour. */
const GPU = { low: 180_000, high: 900_000, usdPerHour: 0.4 };

const power = (x: number) => {
  const [mantissa, exponent] = x.toExponential(1).split('e');
  return `${mantissa} × 10^${Number(exponent)}`;
};
const usd = (x: number) => (x >= 1e6 ? `$${power(x)}` : x >= 1 ? `$${x.toFixed(2)}` : `$${x.toPrecision(2)}`);
const perThousand = (cpuSecondsPerPass: number) => (cpuSecondsPerPass * 1000 * CORE_HOUR_USD) / 3600;

export function economicsTable(x: EconomicsInput): string {
  const farm = FARM_USD_PER_1000[0];
  const row = (attack: string, low: number, high: number, note: string) =>
    `| ${attack} | ${usd(low)} | ${usd(high)} | ${low / farm >= 1e6 ? power(low / farm) : (low / farm).toPrecision(2)}× | ${note} |`;
  const hashing = (rate: number) => [perThousand(x.hashesLow / rate), perThousand(x.hashesHigh / rate)];
  const [bLow, bHigh] = hashing(x.chromium);
  const [oLow, oHigh] = hashing(x.openssl);
  const [lLow, lHigh] = hashing(x.lanes);
  const gpu = (hashes: number, rate: number) => ((hashes / rate) * 1000 * GPU.usdPerHour) / 3600;
  return [
    `| attack (invisible tier, default policy) | $ per 1,000 passes, low risk (${Math.round(x.hashesLow)} hashes) | at score 100 (${Math.round(x.hashesHigh).toLocaleString('en')} hashes) | low risk ÷ the cheapest farm ($${farm.toFixed(2)}) | basis |`,
    '|---|---|---|---|---|',
    row(
      'junk answers, no hashing, before the hash binding (one sub-puzzle spot-checked by its target)',
      perThousand((OLD_ATTEMPTS_PER_CHECK.low * CLIENT_MS_PER_SUBMIT) / 1000),
      perThousand((OLD_ATTEMPTS_PER_CHECK.high * CLIENT_MS_PER_SUBMIT) / 1000),
      `a pass per 52 (360) submits; ${CLIENT_MS_PER_SUBMIT} ms of client CPU per init + submit, assumed`,
    ),
    row(
      'junk answers now (a made-up 64-bit hash prefix)',
      perThousand((2 ** 64 * CLIENT_MS_PER_SUBMIT) / 1000),
      perThousand((2 ** 64 * CLIENT_MS_PER_SUBMIT) / 1000),
      'a pass per 2^64 submits',
    ),
    row(
      'headless Chromium, the widget’s worker',
      bLow!,
      bHigh!,
      `${Math.round(x.chromium).toLocaleString('en')} hashes per CPU-s, measured`,
    ),
    row(
      'OpenSSL, one hash at a time',
      oLow!,
      oHigh!,
      `${Math.round(x.openssl).toLocaleString('en')} hashes per CPU-s, measured`,
    ),
    row(
      `SIMD lanes (${x.lanesId})`,
      lLow!,
      lHigh!,
      `${Math.round(x.lanes).toLocaleString('en')} hashes per CPU-s, measured`,
    ),
    row(
      'one RTX 4090 (estimate)',
      gpu(x.hashesLow, GPU.high),
      gpu(x.hashesHigh, GPU.low),
      `${GPU.low.toLocaleString('en')}-${GPU.high.toLocaleString('en')} hashes/s (docs/pow.md, not measured) at $${GPU.usdPerHour} an hour; the cells take the fast end at low risk, the slow end at score 100`,
    ),
    '',
    `Farms charge $${FARM_USD_PER_1000[0].toFixed(2)}-${FARM_USD_PER_1000[1]} per 1,000. The server's CPU per honest submit's proof-of-work: one hash, ${x.serverMsPerHash.toFixed(2)} ms (OpenSSL through node:crypto, same run).`,
  ].join('\n');
}
