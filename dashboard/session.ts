import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from './api.js';

// The signed-in person and what their role lets the pages offer. The server decides every change
// (a viewer's forged write is still refused there); this only keeps controls they cannot use away.

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session & { role: Role; canWrite: boolean; canManage: boolean } {
  const session = useContext(SessionContext);
  if (!session?.member) throw new Error('useSession outside a workspace');
  const role = session.member.role;
  return { ...session, role, canWrite: role !== 'viewer', canManage: role === 'owner' || role === 'admin' };
}
