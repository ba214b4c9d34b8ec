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
