/**
 * The URL a vendor called, rebuilt for signature checks: vendors sign the public URL they were
 * given, which a TLS-terminating proxy changes (scheme, host, port, a stripped path prefix), so it
 * is rebuilt from public_base_url and the request's original path — never from `Host`.
 */

/**
 * The URL the vendor called: the public base URL's origin (and path prefix, when the proxy strips it)
 * followed by the request's original path and query.
 */
export function publicRequestUrl(publicBaseUrl: string, originalUrl: string): string {
  const base = new URL(publicBaseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const path = originalUrl.startsWith('/') ? originalUrl : `/${originalUrl}`;
  const withPrefix = prefix && !path.startsWith(`${prefix}/`) && path !== prefix ? `${prefix}${path}` : path;
  return `${base.origin}${withPrefix}`;
}
