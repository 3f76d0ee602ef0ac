import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Logs the standby store's state changes, once each: lost (a warning, at the first error) and connected
 * (again). ioredis retries forever and, with no 'error' listener, prints "[ioredis] Unhandled error event"
 * to stderr at every attempt; this listener is that listener. Never logs the URL (it holds the password).
 */
export function logStoreState(redis: Redis, logger: Logger): void {
  let state: 'starting' | 'connected' | 'lost' = 'starting';
  redis.on('ready', () => {
    if (state === 'connected') return;
    logger.info(state === 'lost' ? 'standby store reachable again' : 'standby store connected');
    state = 'connected';
  });
  redis.on('error', (err: Error) => {
    if (state === 'lost') return;
    state = 'lost';
    logger.warn(
      { err: err.message },
      'standby store unreachable: offline tokens cannot be checked, the standby fails closed until it is back',
    );
  });
}
