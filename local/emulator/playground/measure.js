// An image fetched as a page would, with what its response says about itself.
//
// Each image is fetched with fetch() rather than put straight into an <img>,
// so that the page can read its status, Content-Type, size, X-Cache, X-Origin
// and Server-Timing, and show a service error as the JSON it is. The bytes
// shown are exactly the bytes measured.

/** `fetch;dur=12.3, transform;dur=80` → [{ name, dur }] */
function parseServerTiming(header) {
  if (!header) return [];
  return header
    .split(',')
    .map((metric) => {
      const [name, ...params] = metric.trim().split(';');
      const dur = params.map((param) => param.trim().match(/^dur=([\d.]+)$/)).find(Boolean);
      return { name: name.trim(), dur: dur ? Number(dur[1]) : undefined };
    })
    .filter((metric) => metric.name);
}

/** Fetches an image URL as a page would, and keeps what the response says about itself. */
export async function measure(url, accept, signal) {
  const started = performance.now();
  const response = await fetch(url, { headers: { Accept: accept }, cache: 'no-store', signal });
  const body = await response.blob();
  const total = performance.now() - started;
  const header = (name) => response.headers.get(name) ?? undefined;
  return {
    url,
    accept,
    status: response.status,
    ok: response.ok,
    body,
    bytes: body.size,
    contentType: header('content-type') ?? '',
    xCache: header('x-cache'),
    xOrigin: header('x-origin'),
    cacheControl: header('cache-control'),
    vary: header('vary'),
    // Every header as the browser got it, after CloudFront's viewer-response function (same origin: none is hidden).
    headers: [...response.headers].map(([name, value]) => `${name}: ${value}`),
    etag: header('etag'),
    serverTiming: parseServerTiming(header('server-timing')),
    total,
  };
}
