// What a target may ask for beyond the cells' narrow child permissions (its
// `childPermissions` export), and where declared paths are resolved from.
import type { ChildPermissions } from "../../harness/permissions.ts";
export type { ChildPermissions };

/**
 * Where a target's declared paths are resolved from, at run time (in the parent, which
 * may read the environment: the children may not).
 *
 * @example
 * ```ts
 * import type { ChildPermissions, PermissionContext } from "./child_permissions.ts";
 * export function childPermissions({ npmCache }: PermissionContext): ChildPermissions {
 *   return { read: [npmCache], ffi: [`${npmCache}/registry.npmjs.org/@libsql`] };
 * }
 * ```
 */
export interface PermissionContext {
  /** Deno's cache folder: `DENO_DIR`, else the platform's default. */
  denoDir: string;
  /** Deno's npm package cache, `<denoDir>/npm`: where an npm package's native addon lives. */
  npmCache: string;
}

/**
 * A target's `childPermissions` export (optional, beside `openStore`; default none): the
 * extra permissions its store needs in the cells' children, or a function of the run's
 * {@linkcode PermissionContext} that returns them. Type the export with it: the harness
 * checks it at run time and grants exactly these, never net, a shell or an unnamed program.
 *
 * @example
 * ```ts
 * import type { ChildPermissionsDeclaration } from "./child_permissions.ts";
 * export const childPermissions: ChildPermissionsDeclaration = { env: ["MY_STORE_KEY"] };
 * ```
 */
export type ChildPermissionsDeclaration =
  | ChildPermissions
  | ((context: PermissionContext) => ChildPermissions);
