// A consumer's CDK app, as a platform team writes it: the construct and the URL
// helpers imported from the installed package, nothing from a checkout.
// test/package/consumer.test.ts type-checks it with cdk init's tsconfig and synthesizes it.

import { App, Duration, Stack } from 'aws-cdk-lib';
import { ImageTransformer, type ImageTransformerProps } from 'edge-image-transformer';
import { imageUrl, srcset } from 'edge-image-transformer/client';
import { createManageClient, ManageApiError, type DeleteReport, type ImageStatus } from 'edge-image-transformer/manage';
import { nextImageLoader } from 'edge-image-transformer/next';
import { signedImageUrl } from 'edge-image-transformer/sign';

const props: ImageTransformerProps = {
  sizes: [320, 640, 1280],
  presets: { thumb: { width: '320', height: '320', fit: 'cover' } },
  memorySize: 1536,
  variantExpiration: Duration.days(30),
};

const app = new App();
const stack = new Stack(app, 'Photos', { env: { account: '123456789012', region: 'eu-west-1' } });
new ImageTransformer(stack, 'Images', props);
app.synth();

// The declarations are real types, not `any`: each misuse below must be a type error.
export function misuses(scope: Stack): void {
  // @ts-expect-error memorySize is a number of MB
  new ImageTransformer(scope, 'Wrong', { memorySize: '2048' });
  // @ts-expect-error an unknown image parameter
  imageUrl('img.example.com', 'a.jpg', { widht: 640 });
}

// The management client's declarations: its answers are the API's types.
export async function manageImages(): Promise<void> {
  const manage = createManageClient({ endpoint: 'https://abc123.execute-api.eu-west-1.amazonaws.com/' });
  const status: ImageStatus = await manage.status('photos/cat.jpg');
  // @ts-expect-error a status is ready, pending or quarantined
  const wrong: typeof status.status = 'deleted';
  const report: DeleteReport = await manage.delete(['photos/cat.jpg']);
  // @ts-expect-error an upload declares its content type
  await manage.upload('photos/cat.jpg', new Uint8Array(1), {});
  console.log(wrong, report.failed_files.map(({ key, reason }) => `${key}: ${reason}`), new ManageApiError(400, 'invalid_key', 'bad').code);
}

// What the helpers build, for the test to compare with the checkout's.
const base = 'img.example.com';
console.log(
  JSON.stringify({
    imageUrl: imageUrl(base, 'photos/my cat.jpg', { width: 640, format: 'webp' }),
    srcset: srcset(base, 'photos/cat.jpg', [320, 640]),
    signed: signedImageUrl(base, 'photos/cat.jpg', { width: 320 }, 'a secret'),
    next: nextImageLoader(base)({ src: '/photos/cat.jpg', width: 640, quality: 70 }),
  }),
);
