import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { internalListener, listenHttp } from '@gatehouse/core/http';
import { createLogger } from '@gatehouse/core/logging';
import {
  type ConsumptionStore,
  MemoryConsumptionStore,
  RedisConsumptionStore,
} from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust, type OfflineTrust, RedisOfflineTrust } from '@gatehouse/core/offline-trust';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createStandbyApp } from './app.ts';
import type { StandbyConfig } from './config.ts';
import { MainHealth } from './main-health.ts';
import { MemoryOutageBoard, type OutageBoard, RedisOutageBoard } from './outage-board.ts';
import { SnapshotKeeper } from './snapshot.ts';
import { enforceStandbyStore, standbyProcessStore } from './store-check.ts';
import { logStoreState } from './store-events.ts';
import { WidgetMirror } from './widget-mirror.ts';

/** How often a standby without any snapshot asks for its first one. */
const FIRST_SNAPSHOT_RETRY_MS = 1000;

export interface RunningStandby {
  /** URLs by role, e.g. `{ bypass: 'http://127.0.0.1:8081' }`. */
  /** Per role, and `internal` (STANDBY_INTERNAL_PORT: the operator's mode endpoint) when configured. */
  urls: Partial<Record<'bypass' | 'fallback' | 'internal', string>>;
  health: MainHealth;
  snapshots: SnapshotKeeper;
  /** The copy of the main API's widget files served at /widget/ (bypass role). */
  widget: WidgetMirror;
  close(): Promise<void>;
}

/**
 * Starts the standby's roles: probes of the main API, the snapshot (from disk, then refreshed while the
 * main API is up), the shared store (offline tokens' consumption and the outage board), and one listener
 * per role. `options.store` lets `npm start` share an in-memory store with the main API in the same
 * process; `options.board` lets tests put two standbys on one board without Redis.
 */
export async function startStandby(
  config: StandbyConfig,
  options: {
    store?: ConsumptionStore;
    trust?: OfflineTrust;
    board?: OutageBoard;
    logger?: Logger;
    syncTokenFile?: string;
  } = {},
): Promise<RunningStandby> {
  const logger =
    options.logger ??
    createLogger({ level: config.logLevel, format: config.logFormat }).child({ service: 'standby' });
  // Outage tokens lost after a recovery: refused in production, the start's loudest line elsewhere.
  const storeState = standbyProcessStore(config.storeUrl, options.store !== undefined);
  enforceStandbyStore(storeState, process.env, (message) => logger.warn(message));
  const redis = config.storeUrl
    ? new Redis(config.storeUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 })
    : undefined;
  if (redis) logStoreState(redis, logger);
  const store = options.store ?? (redis ? new RedisConsumptionStore(redis) : new MemoryConsumptionStore());
  const trust = options.trust ?? (redis ? new RedisOfflineTrust(redis) : new MemoryOfflineTrust());
  const tokenFile = options.syncTokenFile ?? join(config.dataDir, '..', 'standby-sync-token');
  const syncToken = () =>
    config.syncToken ?? (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '');

  const board =
    options.board ?? (redis ? new RedisOutageBoard(redis, config.mainApiUrl) : new MemoryOutageBoard());
  const health = new MainHealth(config.mainApiUrl, config.probe, board, (by, startMs, untilMs) =>
    trust.recordOutage(config.region, by, startMs, untilMs),
  );
  const snapshots = new SnapshotKeeper(
    join(config.dataDir, 'snapshot.json'),
    config.mainApiUrl,
    syncToken,
    config.region,
  );
  if (snapshots.loadFromDisk()) logger.info(snapshots.status(), 'snapshot loaded from disk');
  const widget = new WidgetMirror(config.widgetSourceUrl, join(config.dataDir, 'widget'));
  if (widget.loadFromDisk()) logger.info(widget.status(), 'widget files loaded from disk');
  // Not awaited by the start: the main API may be building its widget on the first request.
  const copyWidget = () =>
    widget.refresh().catch((err: Error) => logger.warn({ err: err.message }, 'widget copy failed'));
  const refresh = () => {
    void copyWidget();
    return snapshots
      .refresh()
      .catch((err: Error) => logger.warn({ err: err.message }, 'snapshot refresh failed'));
  };
  health.on('change', (state) => {
    logger.warn(
      { main: state },
      state === 'down' ? 'main API down: standby serving' : 'main API back: standby online',
    );
    if (state === 'up') void refresh();
  });
  await refresh();
  let stopFirstSnapshot = () => {};
  const refresher = setInterval(() => {
    if (!health.serving) void refresh();
  }, config.snapshotIntervalMs);
  refresher.unref();
  // Without any snapshot the standby can serve nothing, whatever its mode: until the first one arrives it
  // asks every second (the main API may still be starting), also when told to serve, instead of waiting
  // for the next refresh, which a serving standby never makes. The first failure was logged above.
  if (!snapshots.snapshot) {
    const firstSnapshot = setInterval(() => {
      if (snapshots.snapshot) clearInterval(firstSnapshot);
      else
        void snapshots.refresh().then(
          () => clearInterval(firstSnapshot),
          () => {},
        );
    }, FIRST_SNAPSHOT_RETRY_MS);
    firstSnapshot.unref();
    stopFirstSnapshot = () => clearInterval(firstSnapshot);
  }
  health.start();

  const roles = config.role === 'both' ? (['bypass', 'fallback'] as const) : ([config.role] as const);
  const servers: Server[] = [];
  const urls: RunningStandby['urls'] = {};
  for (const role of roles) {
    const app = createStandbyApp(role, {
      region: config.region,
      health,
      snapshots,
      widget,
      store,
      trust,
      logger: logger.child({ role }),
      controlToken: syncToken,
      separateInternal: config.internalPort !== undefined,
      alternativeSeconds: config.alternativeSeconds,
      keyboardSeconds: config.keyboardSeconds,
      mainApiUrl: config.mainApiUrl,
      storeState,
      clientAddress: config.clientAddress,
    });
    const port = role === 'bypass' ? config.bypassPort : config.fallbackPort;
    const server = await listenHttp(app.callback(), port, config.host, config.http);
    urls[role] = `http://${urlHost(config.host)}:${(server.address() as AddressInfo).port}`;
    servers.push(server);
    // One internal listener per process (the mode is the process's, whatever its roles).
    if (config.internalPort !== undefined && !urls.internal) {
      const internal = await listenHttp(
        internalListener(app.callback()),
        config.internalPort,
        config.host,
        config.http,
      );
      urls.internal = `http://${urlHost(config.host)}:${(internal.address() as AddressInfo).port}`;
      servers.push(internal);
    }
  }
  return {
    urls,
    health,
    snapshots,
    widget,
    async close() {
      health.stop();
      clearInterval(refresher);
      stopFirstSnapshot();
      await Promise.all(
        servers.map((s) => {
          s.closeAllConnections();
          return new Promise((resolve) => s.close(resolve));
        }),
      );
      redis?.disconnect();
    },
  };
}

/** A host usable in a URL: a wildcard listen address becomes loopback, IPv6 gets brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
