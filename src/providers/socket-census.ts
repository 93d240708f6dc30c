/**
 * Every vendor WebSocket this process holds open, counted in the one place they are all opened
 * (openSpeechSocket): from the socket's `open` to its `close`, so the count is what the vendor
 * sees against its per-account connection limit, not an estimate. `voice_vendor_sockets` reads it
 * on scrape. Sockets a vendor SDK opens itself (Azure Speech) are counted from the SDK's own
 * connected / disconnected callbacks through a VendorConnection.
 *
 * A socket's kind is read from its SocketRole when counted, not fixed when it opened: a ready TTS
 * session's sockets are `tts_spare` until a call takes the session (src/gateway/speech/tts-spares.ts
 * flips the role), then `tts`, without reopening anything.
 */
import type WebSocket from 'ws';
import { trackVendorSockets, type VendorSocketKind } from '../observability/metrics';

export type { VendorSocketKind };

/** What a session's sockets are for; shared by all of them, changed in place when a call takes a spare. */
export interface SocketRole {
  kind: VendorSocketKind;
}

export const sttRole = (): SocketRole => ({ kind: 'stt' });
export const ttsRole = (): SocketRole => ({ kind: 'tts' });

interface Entry {
  vendor: string;
  role: SocketRole;
}
const open = new Set<Entry>();
// Series seen once stay at 0 rather than vanish, so "no sockets" and "no data" differ on a graph.
const seen = new Set<string>();

/** Counts `ws` while it is open; `vendor` is the registry name (deepgram, elevenlabs…). */
export function countVendorSocket(ws: WebSocket, vendor: string, role: SocketRole): void {
  ws.once('open', () => {
    const entry = { vendor, role };
    open.add(entry);
    ws.once('close', () => open.delete(entry));
  });
}

/** A connection an SDK opens and closes itself: report both; either may come more than once. */
export interface VendorConnection {
  opened(): void;
  closed(): void;
}

export function vendorConnection(vendor: string, role: SocketRole): VendorConnection {
  const entry: Entry = { vendor, role };
  return {
    opened: () => void open.add(entry),
    closed: () => void open.delete(entry),
  };
}

/** Open vendor sockets by vendor and kind (kinds seen before and now without sockets: 0). */
export function openVendorSockets(): Array<{ vendor: string; kind: VendorSocketKind; count: number }> {
  const counts = new Map<string, number>();
  for (const key of seen) counts.set(key, 0);
  for (const { vendor, role } of open) {
    const key = `${vendor}\u0000${role.kind}`;
    seen.add(key);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => {
    const [vendor, kind] = key.split('\u0000') as [string, VendorSocketKind];
    return { vendor, kind, count };
  });
}

trackVendorSockets(openVendorSockets);
