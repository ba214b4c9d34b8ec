// ImageTransformerProps, management: the API that takes uploads, tells an image's status and deletes images (docs/manage.md).

/** The props of the management API. */
export interface ManageProps {
  /**
   * Deploy the management API (docs/manage.md): an API Gateway HTTP API,
   * IAM-authorised (SigV4, service `execute-api`) on every route, throttled and
   * access-logged, whose Lambda signs presigned POST uploads to the source
   * bucket's `_uploads/` prefix, reports an image's status, lists and deletes
   * images; and the validator Lambda, which EventBridge's Object Created events
   * under `_uploads/` invoke, moving each upload to its key or to `_quarantine/`.
   * It turns on EventBridge delivery for the source bucket (beside its other
   * notifications). It is never reachable through the CloudFront distribution;
   * its URL is the stack output `ManageApiUrl`.
   * @default true
   */
  readonly manageApi?: boolean;

  /**
   * The web origins allowed to upload from a browser straight to the source
   * bucket with the API's presigned POSTs: a CORS rule of the bucket, for POST
   * only, from these origins (`https://app.example.com`; `*` for any). A
   * server or command line uploads without one. Only a bucket this construct
   * creates: an existing `sourceBucket`'s CORS is its owner's. The images'
   * own CORS (`cors`) is another matter: it says who may read the images.
   * @default - none: no CORS rule (a browser's fetch of an upload fails; a server's works)
   */
  readonly manageCorsOrigins?: string[];

  /**
   * The issuer of the JSON Web Tokens that browsers call the management API
   * with (an OpenID Connect provider's `https://` URL, such as a Cognito user
   * pool's `https://cognito-idp.<region>.amazonaws.com/<pool id>`): a JWT
   * authoriser on a second set of the API's routes, under `/user`
   * (`/user/uploads`, `/user/images`, `/user/images/{key}`), which confine each
   * caller to the prefix `manageJwtPrefix` makes of its token's claim. The
   * routes without `/user` stay IAM's, unconfined. With `manageCorsOrigins`,
   * the API answers those origins' CORS preflights too.
   * @default - none: IAM callers only
   */
  readonly manageJwtIssuer?: string;

  /**
   * The audiences a token must name one of (its `aud`, or for an access token
   * without one its `client_id`), such as the app client's id. Required with `manageJwtIssuer`.
   * @default - none
   */
  readonly manageJwtAudience?: string[];

  /**
   * The key prefix a JWT caller is confined to: a template naming exactly one
   * claim of its token, `{claim}`, ending with `/` (`users/{sub}/`,
   * `tenants/{custom:tenant}/`). Every key such a caller names (an upload, a
   * status, a deletion, a listing's prefix) must lie under it with the claim's
   * value filled in; a claim value that is empty, holds `/`, is `.` or `..`,
   * or has a control character refuses the call (403).
   * @default 'users/{sub}/' (with manageJwtIssuer)
   */
  readonly manageJwtPrefix?: string;

  /**
   * Store each upload validated by the management API with its location
   * removed, its pixels untouched (no re-encode): GPS in EXIF, every XMP
   * property but those `metadata=keep` keeps, IPTC-IIM but its kept datasets,
   * and the containers' other text blocks, each format as docs/manage.md
   * lists; the orientation and the colour profile are kept. Off, an upload is
   * stored byte for byte as it came. The outputs never carry a location either way.
   * @default false
   */
  readonly manageStripLocation?: boolean;
}
