/**
 * `npm run risk:refresh-ranges`: rebuilds api/src/risk/datacenter-ranges.txt, the hosting/datacenter
 * address ranges the risk engine knows out of the box (docs/decisions.md, "Hosting/datacenter ranges out of the box").
 *
 * Sources, each optional (a source that cannot be reached is reported and left out; `--strict` fails then):
 * - the address ranges announced by the hosting providers' autonomous systems (HOSTING_ASNS below), from the
 *   @ip-location-db/asn package (RouteViews, NRO and DB-IP data, CC BY 4.0): fetched with `npm pack`, or
 *   read from `--asn-dir DIR` (a folder holding its asn-ipv4.csv and asn-ipv6.csv);
 * - the lists the cloud providers publish about themselves (PUBLISHED below), over HTTPS.
 *
 * Usage: node api/scripts/refresh-datacenter-ranges.ts [--asn-dir DIR] [--no-published] [--strict] [--out FILE]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  DATACENTER_RANGES_FILE,
  disjoint,
  type Interval,
  intervalText,
  parseInterval,
} from '../src/risk/ranges.ts';

/** The ASN package and the version last used (bump it here after checking its notes). */
const ASN_PACKAGE = '@ip-location-db/asn@2.3.2026061719';

/**
 * Autonomous systems that serve hosting, cloud and VPS customers rather than people at home or at work.
 * Deliberately absent: Cloudflare (13335: its WARP app carries real users), CDNs, and mobile or residential
 * carriers. Microsoft's 8075 also carries some corporate traffic: its weight is the same as any datacenter.
 */
const HOSTING_ASNS: Record<string, number[]> = {
  'Amazon Web Services': [16509, 14618, 8987],
  'Google Cloud': [396982, 15169, 19527],
  'Microsoft Azure': [8075],
  'Oracle Cloud': [31898],
  'IBM Cloud': [36351],
  'Alibaba Cloud': [45102, 37963],
  'Tencent Cloud': [132203, 45090],
  'Huawei Cloud': [136907],
  DigitalOcean: [14061],
  'Akamai Linode': [63949],
  Vultr: [20473],
  Hetzner: [24940, 213230, 212317],
  OVHcloud: [16276, 35540],
  Scaleway: [12876],
  Contabo: [51167],
  Leaseweb: [60781, 16265, 28753],
  Hostinger: [47583],
  M247: [9009],
  netcup: [197540],
  IONOS: [8560],
  Kamatera: [36007],
  GoDaddy: [26496],
  HostPapa: [54290, 36352],
  'Psychz Networks': [40676],
  Datacamp: [60068],
  'FranTech (BuyVM)': [53667],
  Aruba: [31034],
  UpCloud: [202053],
  Zenlayer: [21859],
  'Equinix Metal': [54825],
  'Servers.com': [7979],
  'G-Core Labs': [199524],
  Selectel: [49505],
  'Yandex Cloud': [200350],
  Timeweb: [9123],
};

/** Lists providers publish of their own ranges, and how to read each. */
const PUBLISHED: Array<{ provider: string; url: string; read: (body: string) => string[] }> = [
  {
    provider: 'Amazon Web Services',
    url: 'https://ip-ranges.amazonaws.com/ip-ranges.json',
    read: (body) => {
      const json = JSON.parse(body);
      return [
        ...json.prefixes.map((p: { ip_prefix: string }) => p.ip_prefix),
        ...json.ipv6_prefixes.map((p: { ipv6_prefix: string }) => p.ipv6_prefix),
      ];
    },
  },
  {
    provider: 'Google Cloud',
    url: 'https://www.gstatic.com/ipranges/cloud.json',
    read: (body) =>
      JSON.parse(body).prefixes.map(
        (p: { ipv4Prefix?: string; ipv6Prefix?: string }) => p.ipv4Prefix ?? p.ipv6Prefix,
      ),
  },
  {
    provider: 'Oracle Cloud',
    url: 'https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json',
    read: (body) =>
      JSON.parse(body).regions.flatMap((r: { cidrs: Array<{ cidr: string }> }) => r.cidrs.map((c) => c.cidr)),
  },
  {
    provider: 'DigitalOcean',
    url: 'https://digitalocean.com/geo/google.csv',
    read: (body) => body.split('\n').map((line) => line.split(',')[0] ?? ''),
  },
  {
    provider: 'Akamai Linode',
    url: 'https://geoip.linode.com/',
    read: (body) =>
      body
        .split('\n')
        .filter((line) => !line.startsWith('#'))
        .map((line) => line.split(',')[0] ?? ''),
  },
];

/** Splits one CSV line with optional double-quoted fields. */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(field);
      field = '';
    } else field += ch;
  }
  out.push(field);
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'asn-dir': { type: 'string' },
      'no-published': { type: 'boolean', default: false },
      strict: { type: 'boolean', default: false },
      out: { type: 'string', default: DATACENTER_RANGES_FILE },
    },
  });
  const providers = [...new Set([...Object.keys(HOSTING_ASNS), ...PUBLISHED.map((p) => p.provider)])];
  const tagOf = (name: string) => providers.indexOf(name);
  const intervals: Interval[] = [];
  const used: string[] = [];
  const failed: string[] = [];

  // 1. The providers' own lists first: where they overlap an ASN range of another provider, they win.
  if (!values['no-published']) {
    for (const source of PUBLISHED) {
      try {
        const res = await fetch(source.url, { signal: AbortSignal.timeout(30_000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        let count = 0;
        for (const text of source.read(await res.text())) {
          const interval = text ? parseInterval(text.trim(), tagOf(source.provider)) : null;
          if (interval) {
            intervals.push(interval);
            count++;
          }
        }
        if (count === 0) throw new Error('no range in the answer');
        used.push(`${source.provider}'s published list (${source.url}), ${count} ranges`);
      } catch (error) {
        failed.push(`${source.url}: ${(error as Error).message}`);
      }
    }
  }

  // 2. The hosting ASNs' announced ranges.
  let asnDir = values['asn-dir'];
  let scratch: string | undefined;
  try {
    if (!asnDir) {
      scratch = mkdtempSync(join(tmpdir(), 'gatehouse-asn-'));
      const tarball = execFileSync('npm', ['pack', ASN_PACKAGE, '--silent', '--pack-destination', scratch], {
        encoding: 'utf8',
      }).trim();
      execFileSync('tar', ['xzf', join(scratch, tarball.split('\n').pop() ?? ''), '-C', scratch]);
      asnDir = join(scratch, 'package');
    }
    const byAsn = new Map<number, number>();
    for (const [name, asns] of Object.entries(HOSTING_ASNS))
      for (const asn of asns) byAsn.set(asn, tagOf(name));
    let count = 0;
    for (const file of ['asn-ipv4.csv', 'asn-ipv6.csv']) {
      for (const line of readFileSync(join(asnDir, file), 'utf8').split('\n')) {
        if (!line) continue;
        const [start = '', end = '', asn = ''] = csvFields(line);
        const tag = byAsn.get(Number(asn));
        if (tag === undefined) continue;
        const interval = parseInterval(`${start}-${end}`, tag);
        if (interval) {
          intervals.push(interval);
          count++;
        }
      }
    }
    let version = ASN_PACKAGE;
    try {
      version = `@ip-location-db/asn@${JSON.parse(readFileSync(join(asnDir, 'package.json'), 'utf8')).version}`;
    } catch {}
    used.push(
      `${count} ranges announced by ${byAsn.size} hosting autonomous systems, from ${version} (RouteViews, NRO and DB-IP data, CC BY 4.0: IP to ASN data by https://db-ip.com, https://www.routeviews.org, https://www.nro.net)`,
    );
  } catch (error) {
    failed.push(`${ASN_PACKAGE}: ${(error as Error).message}`);
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }

  for (const line of failed) console.error(`refresh-datacenter-ranges: left out ${line}`);
  if (intervals.length === 0 || (values.strict && failed.length > 0)) process.exit(1);

  const merged = [...disjoint(intervals.filter((i) => !i.v6)), ...disjoint(intervals.filter((i) => i.v6))];
  const lines = [
    '# Hosting and datacenter address ranges known to the risk engine out of the box (api/src/risk/ranges.ts).',
    `# Generated ${new Date().toISOString().slice(0, 10)} by npm run risk:refresh-ranges (api/scripts/refresh-datacenter-ranges.ts) from:`,
    ...used.map((u) => `# - ${u}`),
    ...failed.map((f) => `# - not reachable at generation, left out: ${f}`),
    '# Format: provider,<index>,<name> lines, then <first address>,<last address>,<provider index> (inclusive).',
    ...providers.map((name, i) => `provider,${i},${name}`),
    ...merged.map((interval) => [...intervalText(interval), interval.tag].join(',')),
  ];
  writeFileSync(values.out, `${lines.join('\n')}\n`);
  console.log(`refresh-datacenter-ranges: ${merged.length} ranges written to ${values.out}`);
}

await main();
