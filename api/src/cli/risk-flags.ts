import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { riskPolicy } from '../risk/policy.ts';
import { UsageError } from './errors.ts';

/** What `--force-challenge` can pin every visitor of an app to, and `off` to return to scoring. */
export const FORCED_CHALLENGES = [
  'invisible',
  'image',
  'slide',
  'click',
  'select',
  'hard',
  'reject',
  'off',
] as const;
export type ForcedChallenge = (typeof FORCED_CHALLENGES)[number];

/** The policy fields `--force-challenge` sets; `off` removes them, so the defaults apply again. */
const TIER_FIELDS = ['invisible_below', 'image_below', 'high', 'image_kinds'] as const;

/**
 * The policy with every score mapped to one tier (the score is 0 to 100): `invisible_below: 101` sends
 * everyone to the invisible tier, `invisible_below: 0, image_below: 101` everyone to an image challenge,
 * both 0 everyone to the high tier. Other fields (velocity, rate limits, reputation) are kept.
 */
export function forcePolicy(base: Record<string, unknown>, kind: ForcedChallenge): Record<string, unknown> {
  const policy = { ...base };
  for (const field of TIER_FIELDS) delete policy[field];
  switch (kind) {
    case 'off':
      return policy;
    case 'invisible':
      return { ...policy, invisible_below: 101, image_below: 101 };
    case 'image':
      return { ...policy, invisible_below: 0, image_below: 101 };
    case 'slide':
    case 'click':
    case 'select':
      return { ...policy, invisible_below: 0, image_below: 101, image_kinds: [kind] };
    case 'hard':
    case 'reject':
      return { ...policy, invisible_below: 0, image_below: 0, high: kind };
  }
}

/**
 * `--risk-policy` as JSON text, `@file.json` (relative to the working folder) or `default` (no override),
 * checked against the policy schema so a typo is refused here rather than stored and ignored.
 */
export function readPolicyFlag(raw: string, cwd: string): Record<string, unknown> {
  if (raw === 'default') return {};
  let text = raw;
  if (raw.startsWith('@')) {
    const file = resolve(cwd, raw.slice(1));
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--risk-policy: cannot read ${file} (${(error as NodeJS.ErrnoException).code}).`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--risk-policy must be a JSON object, @file.json or 'default'; got '${raw}'.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--risk-policy must be a JSON object, @file.json or 'default'; got '${raw}'.`);
  }
  return checkPolicy(parsed as Record<string, unknown>, '--risk-policy');
}

/** Refuses a policy the risk engine would not accept, naming the field. */
export function checkPolicy(policy: Record<string, unknown>, flag: string): Record<string, unknown> {
  // A misspelt field first, in words and with where the fields are listed; then the schema's own checks.
  const unknown = Object.keys(policy).filter((k) => !(k in riskPolicy.shape));
  if (unknown.length) {
    throw new UsageError(`${flag}: unknown field ${unknown[0]} (docs/cli.md lists the policy's fields).`);
  }
  const result = riskPolicy.safeParse(policy);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new UsageError(`${flag}: ${issue.path.join('.') || 'policy'}: ${issue.message}.`);
  }
  return policy;
}
