// Outbound URL rules (CONTRACT.md §1): unless ALLOW_PRIVATE_URLS, only https (webhooks) and only
// hosts that resolve to public unicast addresses. Checked when a URL is configured and again at
// connect time (see safeLookup), so a DNS answer that changes cannot reach an internal address.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** True when the address is a public unicast address (not loopback, private, link-local, CGNAT, metadata…). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
}

export interface UrlPolicy {
  allowPrivate: boolean;
  /** Schemes allowed when private URLs are not. */
  schemes: Array<'https:' | 'http:'>;
  resolver?: Resolver;
}

export async function checkUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UnsafeUrlError('only http(s) URLs are accepted');
  if (url.username || url.password) throw new UnsafeUrlError('URLs with credentials are not accepted');
  if (policy.allowPrivate) return url;
  if (!policy.schemes.includes(url.protocol as 'https:')) throw new UnsafeUrlError(`the URL must use ${policy.schemes.join(' or ').replace(/:/g, '')}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host) ? [{ address: host, family: net.isIP(host) }] : await (policy.resolver ?? systemResolver)(host).catch(() => {
    throw new UnsafeUrlError('the host name does not resolve');
  });
  if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address))) {
    throw new UnsafeUrlError('the host resolves to a non-public address');
  }
  return url;
}

/**
 * Refusals that need no DNS answer: scheme, credentials, IP-literal hosts. An outbound request checks
 * this before opening anything (node:net does not call `lookup` for an IP literal), then relies on
 * safeLookup for names.
 */
export function staticRefusal(raw: string, policy: UrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'only http(s) URLs are accepted';
  if (url.username || url.password) return 'URLs with credentials are not accepted';
  if (policy.allowPrivate) return undefined;
  if (!policy.schemes.includes(url.protocol as 'https:')) return `the URL must use ${policy.schemes.join(' or ').replace(/:/g, '')}`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !isPublicAddress(host)) return 'refused non-public address';
  return undefined;
}

/**
 * A `lookup` for http(s).request that refuses non-public answers at connect time (DNS rebinding).
 */
export function safeLookup(policy: UrlPolicy): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    (policy.resolver ?? systemResolver)(hostname).then((addresses) => {
      const ok = policy.allowPrivate ? addresses : addresses.filter((a) => isPublicAddress(a.address));
      if (ok.length === 0 || ok.length !== addresses.length) {
        callback(Object.assign(new Error(`refused non-public address for ${hostname}`), { code: 'EUNSAFEADDRESS' }), '', 0);
        return;
      }
      if (options.all) callback(null, ok.map((a) => ({ address: a.address, family: a.family })));
      else callback(null, ok[0]!.address, ok[0]!.family);
    }, (err) => callback(err as NodeJS.ErrnoException, '', 0));
  }) as unknown as net.LookupFunction;
}

/** Where webhooks may be sent: https only, and no private address unless ALLOW_PRIVATE_URLS. */
export function webhookUrlPolicy(s: { config: { allowPrivateUrls: boolean }; resolver: Resolver }): UrlPolicy {
  return { allowPrivate: s.config.allowPrivateUrls, schemes: ['https:'], resolver: s.resolver };
}
