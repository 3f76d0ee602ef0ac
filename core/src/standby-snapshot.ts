import { z } from 'zod';
import { standbyKeyEntry } from './standby-keys.ts';

/**
 * The snapshot the main API serves at /internal/v1/standby/snapshot (api/src/routes/standby.ts) and a
 * region's standby keeps (standby/src/snapshot.ts): one declaration for the answer, its document and the
 * standby's check of what it reads.
 */
export const snapshotSchema = z.object({
  generated_at: z.string(),
  region: z.string(),
  offline_keys: z.array(standbyKeyEntry),
  apps: z.array(
    z.object({
      id: z.string(),
      app_key: z.string(),
      secret_hash: z.string(),
      previous_secret_hash: z.string().nullable(),
      previous_secret_expires_at: z.string().nullable(),
      // Absent from snapshots written before key rotation existed (a file on disk may be one).
      previous_app_key: z.string().nullable().default(null),
      previous_app_key_expires_at: z.string().nullable().default(null),
      disabled: z.boolean(),
      test_mode: z.boolean(),
      client_ip_policy: z.string(),
      allowed_domains: z.array(z.string()),
      // The image kinds the app's risk policy serves (defaults filled in by the main API). Absent from
      // snapshots written before the standby served them; kinds this standby does not know are ignored,
      // never a reason to refuse the whole snapshot (offline-challenges.ts picks among the rest).
      image_kinds: z.array(z.string().max(32)).max(16).optional(),
    }),
  ),
});
export type StandbySnapshot = z.output<typeof snapshotSchema>;
