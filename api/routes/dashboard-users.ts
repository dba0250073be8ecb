// Operator API: a merchant's dashboard users. Creating one (or inviting an existing one again, to
// reset a lost password) answers a one-time invitation: the token, shown once and stored only as a
// hash, opens /dashboard/invite?token=… where the user chooses a password, then signs in.
import type { ApiModule } from '../module.ts';
import { body, errors, idParam, json, ref } from '../openapi/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { inviteUser, listUsers, userView } from '../../commands/dashboard-users.ts';
import { resetTwoFactor } from '../../commands/dashboard-two-factor.ts';
import { ROLES } from '../../domain/dashboard-roles.ts';

const tags = ['Operator'];
const mid = idParam('merchant_id');
const role = { type: 'string', enum: [...ROLES], description: 'What the member may do in the dashboard (docs/DASHBOARD-TEAM.md)' };

const schemas = {
  DashboardUser: {
    type: 'object',
    required: ['id', 'merchant_id', 'email', 'role', 'status', 'created_at', 'password_set_at', 'last_sign_in_at'],
    properties: {
      id: ref('Uuid'), merchant_id: ref('Uuid'), email: { type: 'string', format: 'email' }, role,
      status: { type: 'string', enum: ['invited', 'active'], description: 'invited until a password is set' },
      created_at: ref('DateTime'),
      password_set_at: { type: ['string', 'null'], format: 'date-time' },
      last_sign_in_at: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  DashboardInvitation: {
    type: 'object',
    description: 'The user plus a one-time invitation (shown once; valid 7 days; a new invitation replaces it).',
    required: [
      'id', 'merchant_id', 'email', 'role', 'status', 'created_at', 'password_set_at', 'last_sign_in_at', 'invitation_token', 'invitation_path', 'invitation_expires_at',
    ],
    properties: {
      id: ref('Uuid'), merchant_id: ref('Uuid'), email: { type: 'string' }, role, status: { type: 'string' }, created_at: ref('DateTime'),
      password_set_at: { type: ['string', 'null'] }, last_sign_in_at: { type: ['string', 'null'] },
      invitation_token: { type: 'string', description: 'Shown once' },
      invitation_path: { type: 'string', description: 'Open this path on the service (e.g. http://127.0.0.1:3000/dashboard/invite?token=…) to set the password' },
      invitation_expires_at: ref('DateTime'),
    },
  },
};

export const dashboardUsersModule: ApiModule = {
  schemas,
  paths: {
    '/admin/merchants/{merchant_id}/dashboard-users': {
      post: {
        'x-auth': 'admin', tags, operationId: 'adminInviteDashboardUser',
        'x-audit': { action: 'dashboard_user.invited', target: { type: 'dashboard_user', id: 'answer:id' }, merchant: 'path:merchant_id' },
        summary: 'Create a merchant dashboard user (or invite one again); answers a one-time set-password link',
        description: 'An e-mail address belongs to one merchant (another merchant\'s address is a 400). Inviting an existing ' +
          'user again issues a new link (the old one stops working) and ends their dashboard sessions at once; the password ' +
          'changes only when the link is used. `role`: a new user\'s role (default `owner`); an existing user keeps theirs ' +
          'unless `role` is given. A change that would leave the merchant without an owner is a 400.',
        parameters: [mid],
        requestBody: body({
          type: 'object', additionalProperties: false, required: ['email'],
          properties: { email: { type: 'string', minLength: 3, maxLength: 254 }, role },
        }),
        responses: { 201: json(ref('DashboardInvitation'), 'Invited'), 400: errors[400], 401: errors[401], 404: errors[404] },
      },
      get: {
        'x-auth': 'admin', tags, operationId: 'adminListDashboardUsers', summary: "A merchant's dashboard users",
        description: 'The merchant\'s dashboard users: invited until they set a password, then active.',
        parameters: [mid],
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('DashboardUser') } } }), 401: errors[401], 404: errors[404] },
      },
    },
    '/admin/merchants/{merchant_id}/dashboard-users/{user_id}/two-factor': {
      delete: {
        'x-auth': 'admin', tags, operationId: 'adminResetDashboardUserTwoFactor',
        'x-audit': { action: 'two_factor.reset', target: { type: 'dashboard_user', id: 'path:user_id' }, merchant: 'path:merchant_id' },
        summary: "Reset a dashboard user's two-step sign-in (lost phone and recovery codes)",
        description: 'Removes the user\'s TOTP key and recovery codes and ends their dashboard sessions and any sign-in waiting for a code, ' +
          'at once. They then sign in with their password alone, or are sent to enrol again when the merchant requires two-step sign-in. ' +
          'Check who is asking before calling it: it is the way past the second factor.',
        parameters: [mid, idParam('user_id')],
        responses: { 200: json(ref('DashboardUser'), 'Reset'), 401: errors[401], 404: errors[404] },
      },
    },
  },
  handlers: {
    adminResetDashboardUserTwoFactor: async (ctx) => {
      const user = await resetTwoFactor(ctx.services.knex, ctx.params.merchant_id!, ctx.params.user_id!);
      if (!user) throw new DomainError('not_found', 'Dashboard user not found');
      return { status: 200, body: userView(user) };
    },
    adminInviteDashboardUser: async (ctx) => {
      const { user, token, expiresAt } = await inviteUser(ctx.services, ctx.params.merchant_id!, ctx.body.email, ctx.body.role);
      return {
        status: 201,
        body: {
          ...userView(user), invitation_token: token,
          invitation_path: `/dashboard/invite?token=${token}`, invitation_expires_at: expiresAt.toISOString(),
        },
      };
    },
    adminListDashboardUsers: async (ctx) => {
      const merchant = await ctx.services.knex('merchants').where({ id: ctx.params.merchant_id }).first('id');
      if (!merchant) throw new DomainError('not_found', 'Merchant not found');
      return { status: 200, body: { data: (await listUsers(ctx.services.knex, ctx.params.merchant_id!)).map(userView) } };
    },
  },
};
