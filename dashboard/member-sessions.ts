// A member's own sessions (issue 43 point 3): the list the sessions page shows and ending one or all
// the others. Only the member's own rows are ever read or deleted (user_id is the session's), and a
// session is named by its public id, never by the cookie or its hash.
import type { ApiServices } from '../api/services.ts';
import { MAX_SESSION_MS, type Session } from './session.ts';

export interface MemberSession {
  publicId: string;
  userAgent: string | null;
  ip: string | null;
  createdAt: string;
  lastSeenAt: string;
  current: boolean;
}

/** At most this many rows on the page: sessions expire in a week, so a member rarely has more. */
const MAX_LISTED = 100;

/** The member's sessions still valid, the latest used first. */
export async function sessionsOf(s: ApiServices, session: Session): Promise<MemberSession[]> {
  const now = s.clock.now().getTime();
  const rows = await s.knex('dashboard_sessions').where({ user_id: session.userId })
    .andWhere('expires_at', '>', new Date(now)).andWhere('created_at', '>', new Date(now - MAX_SESSION_MS))
    .orderBy([{ column: 'last_seen_at', order: 'desc' }, { column: 'public_id', order: 'asc' }]).limit(MAX_LISTED)
    .select('public_id', 'user_agent', 'ip', 'created_at', 'last_seen_at');
  return rows.map((r) => ({
    publicId: r.public_id, userAgent: r.user_agent, ip: r.ip,
    createdAt: new Date(r.created_at).toISOString(), lastSeenAt: new Date(r.last_seen_at).toISOString(),
    current: r.public_id === session.publicId,
  }));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ends one of the member's sessions; false when it is not theirs or already ended. */
export async function endMemberSession(s: ApiServices, session: Session, publicId: string): Promise<boolean> {
  if (!UUID.test(publicId)) return false;
  return (await s.knex('dashboard_sessions').where({ user_id: session.userId, public_id: publicId }).delete()) > 0;
}

/** Ends every session of the member but this one. */
export async function endOtherSessions(s: ApiServices, session: Session): Promise<void> {
  await s.knex('dashboard_sessions').where({ user_id: session.userId }).whereNot({ id_hash: session.idHash }).delete();
}
