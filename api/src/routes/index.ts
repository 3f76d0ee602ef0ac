import { consoleAdminRoutes } from '../console/admin-routes.ts';
import { consoleRoutes } from '../console/routes.ts';
import { consoleSessionRoutes } from '../console/session-routes.ts';
import type { Route } from '../route-table.ts';
import { adminRoutes } from './admin.ts';
import { challengeRoutes } from './challenge.ts';
import { docsRoutes } from './docs.ts';
import { healthRoutes } from './health.ts';
import { openapiRoutes } from './openapi.ts';
import { rootRoutes } from './root.ts';
import { serverTokenRoutes } from './server-tokens.ts';
import { siteverifyRoutes } from './siteverify.ts';
import { standbyRoutes } from './standby.ts';
import { standbyKeyRoutes } from './standby-keys.ts';
import { validateRoutes } from './validate.ts';
import { widgetRoutes } from './widget.ts';

/**
 * Every route of the main API, in the order the router tries them and the document lists them. A path
 * two routes share is tried in this order: the siteverify paths come before the widget's compatibility
 * scripts under the same prefixes.
 */
export const API_ROUTES: readonly Route[] = [
  ...siteverifyRoutes,
  ...validateRoutes,
  ...serverTokenRoutes,
  ...challengeRoutes,
  ...standbyRoutes,
  ...widgetRoutes,
  ...healthRoutes,
  ...openapiRoutes,
  ...adminRoutes,
  ...consoleAdminRoutes,
  ...consoleSessionRoutes,
  ...standbyKeyRoutes,
  ...rootRoutes,
  ...docsRoutes,
  ...consoleRoutes,
];
