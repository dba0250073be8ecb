// Server-side roles (issue 43): every signed-in route names the permission it needs, as its first
// handler, `r.get(path, can('keys:read'), handler)`. The check reads the member's role from the
// session (read with every request: a role changed holds at once) and answers a refusal page, 403,
// in the member's language. A route that names none cannot slip through: once the routes are added,
// everyRouteGuarded refuses to build the dashboard if a signed-in route lacks `can` first.
import type { NextFunction, Request, Response, Router } from 'express';
import { allows, type Permission } from '../domain/dashboard-roles.ts';
import { html } from '../infra/html.ts';
import { BASE, page } from './pages/layout.ts';
import { locals, send } from './http.ts';
import { ROLE_LABELS } from './role-words.ts';

const NEEDS = Symbol('dashboard permission');
type Guard = ((req: Request, res: Response, next: NextFunction) => void) & { [NEEDS]: Permission };

/** The first handler of every signed-in route: lets the request on when the member's role grants `permission`. */
export function can(permission: Permission): Guard {
  const guard = (_req: Request, res: Response, next: NextFunction): void => {
    const v = locals(res);
    if (allows(v.session.role, permission)) return next();
    send(res, 403, page(v, v.t('team.refused.title'), '', html`<p>${v.t('team.refused.text', { role: v.t(ROLE_LABELS[v.session.role]) })}</p>
<p><a href="${BASE}">${v.t('dash.home_link')}</a></p>`));
  };
  return Object.assign(guard, { [NEEDS]: permission });
}

/** One route of a router: its method, path and the permission its guard names (undefined: none). */
export interface RouteNeed { method: string; path: string; permission: Permission | undefined }

interface RouteLayer { route?: { path: string; methods: Record<string, boolean>; stack: Array<{ handle: unknown }> } }

/** The routes of `router` from layer `from` on, each with the permission it names (in order). */
export function routesOf(router: Router, from = 0): RouteNeed[] {
  return (router.stack as RouteLayer[]).slice(from).flatMap((layer) => {
    const route = layer.route;
    if (!route) return [];
    const first = route.stack[0]?.handle as Partial<Guard> | undefined;
    return Object.keys(route.methods).map((method) => ({ method: method.toUpperCase(), path: route.path, permission: first?.[NEEDS] }));
  });
}

/** Throws (the service does not start) when a route added from layer `from` on names no permission. */
export function everyRouteGuarded(router: Router, from: number): void {
  const open = routesOf(router, from).filter((r) => r.permission === undefined);
  if (open.length > 0) {
    throw new Error(`dashboard routes without a permission (add can(…) first): ${open.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  }
}
