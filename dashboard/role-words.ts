// Each role's name and what it may do, in the catalogue (i18n/*/team.ts), by role.
import type { Role } from '../domain/dashboard-roles.ts';
import type { MessageKey } from '../i18n/catalogue.ts';

export const ROLE_LABELS: Record<Role, MessageKey> = {
  owner: 'team.role.owner', admin: 'team.role.admin', developer: 'team.role.developer', finance: 'team.role.finance', viewer: 'team.role.viewer',
};

export const ROLE_HELP: Record<Role, MessageKey> = {
  owner: 'team.role_help.owner', admin: 'team.role_help.admin', developer: 'team.role_help.developer', finance: 'team.role_help.finance', viewer: 'team.role_help.viewer',
};
