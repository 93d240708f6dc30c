/**
 * The outbound request guard: every request the server sends to a URL a user supplied (tool
 * webhooks, agent webhooks) goes through it, so a user cannot make the server talk to itself or
 * to the private network it runs in (SSRF).
 *
 * - Only http and https; never a Unix socket (got's `http://unix:/path.sock:/…` form).
 * - The address is checked after resolution: loopback, private, link-local, unique-local,
 *   multicast, unspecified, reserved and the other special ranges are refused (IPv4, IPv6, and
 *   IPv4 embedded in IPv6 as `::ffff:a.b.c.d`). Decimal, octal and hex IPv4 forms need no special
 *   case: the WHATWG URL parser turns `http://2130706433/` into `127.0.0.1` before we look.
 * - The socket connects to exactly the address that was checked: the check runs inside the DNS
 *   lookup the connection uses, so a name that resolves differently a moment later (DNS
 *   rebinding) gains nothing. It runs again for every redirect and every new connection; a
 *   kept-alive connection stays with the address it was checked for. Each guard has its own
 *   connection pool, so no request reuses a socket another guard (another allow-list) opened.
 * - Refusals say which address and why, before any connection is tried, so they reveal nothing
 *   about what listens there.
 *
 * WEBHOOK_ALLOWED_NETWORKS (comma-separated CIDRs, addresses or host names) opens chosen private
 * targets, e.g. `10.0.5.0/24,crm.internal`.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Options } from 'got';

export const OUTBOUND_BLOCKED = 'ERR_OUTBOUND_BLOCKED';
const SETTING = 'WEBHOOK_ALLOWED_NETWORKS';

export class OutboundBlockedError extends Error {
  readonly code = OUTBOUND_BLOCKED;
}

/** Resolves a host name to every address it has (dns.lookup semantics: /etc/hosts included). */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

// ipaddr.js range names, as a person would say them.
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a carrier-grade NAT',
  private: 'a private',
  uniqueLocal: 'a unique-local',
  deprecatedSiteLocal: 'a site-local',
};

type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface AllowList {
  networks: Network[];
  hosts: Set<string>;
}

/** Parses WEBHOOK_ALLOWED_NETWORKS; throws naming the entry that is neither a network nor a host name. */
export function parseAllowList(value: string | undefined): AllowList {
  const list: AllowList = { networks: [], hosts: new Set() };
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (ipaddr.isValidCIDR(entry)) list.networks.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) {
      const addr = ipaddr.parse(entry);
      list.networks.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry)) list.hosts.add(entry.toLowerCase());
    else throw new Error(`"${entry}" is neither a CIDR network, an IP address nor a host name`);
  }
  return list;
}

/** An IPv4 address hidden in an IPv6 one (::ffff:a.b.c.d) is judged as the IPv4 address. */
function normalise(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const addr = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

export class OutboundGuard {
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  constructor(
    private readonly allow: AllowList,
    private readonly resolver: Resolver = systemResolver,
  ) {}

  /** Why a request to this address is refused (`blocked: …`), or null when it may go out. */
  addressProblem(address: string, hostname?: string): string | null {
    if (hostname && this.allow.hosts.has(hostname.toLowerCase())) return null;
    let addr: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      addr = normalise(address);
    } catch {
      return `blocked: ${address} is not an IP address`;
    }
    const range = addr.range();
    if (range === 'unicast') return null;
    if (this.allow.networks.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return null;
    const what = `${RANGE_WORDS[range] ?? 'a reserved'} address; allow it with ${SETTING}`;
    return hostname ? `blocked: ${hostname} resolves to ${addr.toString()}, ${what}` : `blocked: ${addr.toString()} is ${what}`;
  }

  /** Checks what can be checked without DNS: scheme, Unix sockets, literal addresses. */
  urlProblem(url: URL): string | null {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `blocked: only http and https URLs are allowed, not ${url.protocol}`;
    const host = url.hostname;
    if (host === 'unix') return 'blocked: Unix sockets are not allowed';
    if (ipaddr.isValid(host.replace(/^\[|\]$/g, ''))) return this.addressProblem(host);
    return null;
  }

  /** Resolves a host name and returns its first allowed address; throws OutboundBlockedError otherwise. */
  async resolve(hostname: string): Promise<{ address: string; family: number }> {
    if (ipaddr.isValid(hostname)) {
      const problem = this.addressProblem(hostname);
      if (problem) throw new OutboundBlockedError(problem);
      return { address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv4' ? 4 : 6 };
    }
    const addresses = await this.resolver(hostname);
    // Every address of the name must pass: a name that mixes public and private answers is refused.
    for (const { address } of addresses) {
      const problem = this.addressProblem(address, hostname);
      if (problem) throw new OutboundBlockedError(problem);
    }
    const first = addresses[0];
    if (!first) throw Object.assign(new Error(`DNS lookup failed for ${hostname}`), { code: 'ENOTFOUND', hostname });
    return first;
  }

  /** A dns.lookup replacement for http.request: the connection goes to the address checked here. */
  readonly lookup = (
    hostname: string,
    options: LookupOptions | number | ((...args: unknown[]) => void),
    callback?: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const cb = (typeof options === 'function' ? options : callback)!;
    const all = typeof options === 'object' && options?.all === true;
    this.resolve(hostname).then(
      ({ address, family }) => (all ? cb(null, [{ address, family }]) : cb(null, address, family)),
      (err: NodeJS.ErrnoException) => cb(err, all ? [] : '', 0),
    );
  };

  /** got options that route every request and redirect through the guard. */
  gotOptions(): Pick<Options, 'lookup' | 'hooks' | 'dnsCache' | 'agent'> {
    return {
      agent: this.agents,
      lookup: this.lookup as unknown as Options['lookup'],
      dnsCache: undefined,
      hooks: {
        // Runs before the first request and before each redirect is followed.
        beforeRequest: [
          (options) => {
            const problem = this.urlProblem(options.url);
            if (problem) throw new OutboundBlockedError(problem);
          },
        ],
      },
    };
  }
}

/** The guard configured by WEBHOOK_ALLOWED_NETWORKS. */
export function outboundGuard(config: { WEBHOOK_ALLOWED_NETWORKS?: string }, resolver?: Resolver): OutboundGuard {
  return new OutboundGuard(parseAllowList(config.WEBHOOK_ALLOWED_NETWORKS), resolver);
}
