/**
 * The session: a JWT from POST /api/auth/login kept in localStorage, the user it belongs to
 * (GET /api/auth/me: email and role), and logout — by the user, at the token's expiry, or when the
 * API answers 401. The role only decides what is shown; the API enforces it on every request.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, setUnauthorizedHandler, tokenStore, unwrap } from './api/client';
import type { Me } from './api/types';

interface Session {
  user: Me | null;
  /** Why the last session ended (shown on the login page). */
  endedBecause: string | null;
  isAdmin: boolean;
  loading: boolean;
  login(email: string, password: string): Promise<void>;
  logout(reason?: string): void;
}

const SessionContext = createContext<Session | null>(null);

/** Seconds since the epoch at which a JWT expires, or null when it is not a readable JWT (an API key). */
function expiryOf(token: string): number | null {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    return typeof payload.exp === 'number' ? payload.exp : null;
  } catch {
    return null;
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [user, setUser] = useState<Me | null>(null);
  const [loading, setLoading] = useState(() => tokenStore.get() !== null);
  const [endedBecause, setEndedBecause] = useState<string | null>(null);

  const logout = useCallback(
    (reason?: string) => {
      tokenStore.clear();
      setUser(null);
      setLoading(false);
      setEndedBecause(reason ?? null);
      queryClient.clear();
    },
    [queryClient],
  );

  const loadUser = useCallback(async () => {
    try {
      setUser(await unwrap(api.GET('/api/auth/me')));
    } catch {
      // A 401 has already ended the session with its reason; anything else ends it here.
      if (tokenStore.get()) logout('Please log in again.');
    } finally {
      setLoading(false);
    }
  }, [logout]);

  useEffect(() => {
    setUnauthorizedHandler((detail) => {
      if (tokenStore.get()) logout(detail === 'Token expired' ? 'Your session expired. Please log in again.' : `Signed out: ${detail}`);
    });
    if (tokenStore.get()) void loadUser();
  }, [loadUser, logout]);

  // Log out when the token expires, rather than at the first failing request.
  useEffect(() => {
    const token = tokenStore.get();
    const exp = user && token ? expiryOf(token) : null;
    if (!exp) return;
    const timer = setTimeout(() => logout('Your session expired. Please log in again.'), Math.max(0, exp * 1000 - Date.now()));
    return () => clearTimeout(timer);
  }, [user, logout]);

  const login = useCallback(
    async (email: string, password: string) => {
      const { access_token } = await unwrap(api.POST('/api/auth/login', { body: { email, password } }));
      tokenStore.set(access_token);
      setEndedBecause(null);
      setLoading(true);
      await loadUser();
    },
    [loadUser],
  );

  const value = useMemo<Session>(
    () => ({ user, endedBecause, loading, isAdmin: user?.role === 'admin', login, logout }),
    [user, endedBecause, loading, login, logout],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
