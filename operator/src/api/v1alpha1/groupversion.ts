/** The App API's group, version and names: every path, manifest and printer column starts here. */
export const GROUP = 'gatehouse.dev';
/** The version the operator reads and writes. */
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/**
 * Every version the CRD serves, oldest first. They share one schema, so the apiserver converts between
 * them by changing apiVersion alone (conversion `None`); a schema that differs needs a conversion webhook.
 */
export const SERVED_VERSIONS = ['v1alpha1', 'v1beta1'] as const;
/** The version etcd holds Apps in; moving it is a storage-version migration (crd-migrate.ts). */
export const STORAGE_VERSION = 'v1alpha1';
export const KIND = 'App';
export const LIST_KIND = 'AppList';
export const PLURAL = 'apps';
export const SINGULAR = 'app';
/** `kubectl get ghapp`: `app` alone would be ambiguous in clusters with other "App" kinds. */
export const SHORT_NAMES = ['ghapp', 'ghapps'];
export const CATEGORIES = ['gatehouse'];
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** The finalizer that disables the app in the service's database before the App goes away. */
export const FINALIZER = `${GROUP}/app-registration`;
/** The field manager of every server-side apply the operator makes. */
export const FIELD_MANAGER = 'gatehouse-operator';
/**
 * `gatehouse.dev/skip-cleanup: "true"` on an App: its deletion does not wait for the service (the app
 * stays as it is in the service's database). The operator removes its finalizer, or never adds it:
 * the escape hatch for deleting an App while the admin API is down, and what chart-declared Apps
 * carry, so `helm uninstall` (which removes the operator and the admin API at the same time) completes.
 */
export const SKIP_CLEANUP_ANNOTATION = `${GROUP}/skip-cleanup`;
