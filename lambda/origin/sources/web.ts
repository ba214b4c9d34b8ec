// The web source: a key prefix served from a site over HTTP(S)
// (lambda/origin/web/). No event says a site's image changed, so its
// variants are kept where no viewer's request can name them (cache-keys.ts)
// and served by the Lambda alone, revalidated with the site as
// web/revalidate.ts says.

import { webVariantPrefix } from '../cache-keys';
import { checkedWebOrigins, webSourceAt, type WebOrigin } from '../web/origins';
import { webSourcing } from '../web/revalidate';
import type { SourceKind } from './source';

export const webSource: SourceKind<WebOrigin> = {
  setting: {
    name: 'webOrigins',
    env: 'WEB_ORIGINS',
    description:
      'Key prefixes served from web sites, as JSON, e.g. {"shop/":{"url":"https://shop.example.com/images/","revalidateSeconds":3600}} (default: none).',
    check: checkedWebOrigins,
  },
  routes: ({ webOrigins }) => webOrigins,
  ownBehavior: true,
  records: (prefix) => [webVariantPrefix(prefix)],
  sourcing: (ctx, { prefix, settings }) => webSourcing(ctx, webSourceAt(ctx.request.key, prefix, settings)),
};
