/**
 * The operator's entry point: `node operator/src/main.ts [--flag value ...]` (flags and their
 * environment variables: config.ts). Kubernetes credentials come from the pod's service account or
 * KUBECONFIG. SIGTERM and SIGINT stop the controllers, release the leader lease and exit 0.
 */
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { loadOperatorConfig } from './config.ts';
import { Manager } from './manager.ts';

const config = loadOperatorConfig();
const logger = pino({ level: config.logLevel, redact: ['adminToken', 'standbyToken', '*.app_secret'] }).child(
  {
    component: 'gatehouse-operator',
  },
);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();

const manager = new Manager({ kubeConfig, config, logger, processMetrics: true });
await manager.start();
logger.info(
  {
    identity: manager.identity,
    health: manager.healthUrl,
    metrics: manager.metricsUrl,
    leaderElection: config.leaderElection.enabled,
    watchNamespace: config.watchNamespace ?? '(all)',
    adminUrl: config.adminUrl,
  },
  'operator started',
);
if (!config.standbyToken) {
  logger.warn(
    'GATEHOUSE_STANDBY_SYNC_TOKEN is not set: the operator cannot switch traffic to the standbys (they accept only their sync credential)',
  );
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    manager.stop().then(
      () => process.exit(0),
      (err: Error) => {
        logger.error({ err: err.message }, 'stop failed');
        process.exit(1);
      },
    );
  });
}
