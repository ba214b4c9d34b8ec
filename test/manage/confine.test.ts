// A JWT caller (payload 2.0 events with the JWT authoriser's claims), confined
// to `users/{sub}/`, against LocalStack: what it may name under its prefix
// works as an IAM caller's does, and every key, listing prefix, batch or claim
// outside it is a 403 with nothing written, read or deleted.

import { beforeAll, describe, expect, it } from 'vitest';
import { prefixTemplateProblem, refuseConfined, UNCONFINED } from '../../lambda/manage/confine';
import { ManageError } from '../../lambda/manage/errors';
import { createTestManage, postUpload, type TestManage } from './support';

let manage: TestManage;
const alice = { sub: 'alice', iss: 'https://issuer.example.com', aud: 'app' };

beforeAll(async () => {
  manage = await createTestManage('manage-jwt', {}, { jwtPrefix: 'users/{sub}/' });
  await Promise.all(['users/alice/a.jpg', 'users/alice/b.jpg', 'users/alicia/c.jpg', 'users/bob/d.jpg'].map((key) => manage.put(key, 'x')));
});

const forbidden = (key: string, what = 'The key') => ({
  error: 'forbidden_key',
  message: `${what} ${JSON.stringify(key)} is not under "users/alice/", the prefix your token's {sub} confines you to.`,
});

describe('a JWT caller confined to users/{sub}/', () => {
  it('uploads under its prefix through a real presigned POST, and nowhere else', async () => {
    const upload = { key: 'users/alice/new.jpg', contentType: 'image/jpeg', contentLength: 5 };
    const ticket = await manage.call('POST', '/user/uploads', upload, alice);
    expect(ticket.status).toBe(200);
    expect(ticket.body.fields.key).toBe('_uploads/users/alice/new.jpg');
    expect((await postUpload(ticket.body, 'bytes')).status).toBe(204);

    for (const key of ['users/bob/new.jpg', 'users/alicia/new.jpg', 'users/alice', 'new.jpg']) {
      const refused = await manage.call('POST', '/user/uploads', { ...upload, key }, alice);
      expect(refused).toMatchObject({ status: 403, body: forbidden(key) });
    }
    expect((await manage.sourceKeys()).filter((key) => key.startsWith('_uploads/'))).toEqual(['_uploads/users/alice/new.jpg']);
  });

  it("tells the status of its own keys only, even of another's that exists", async () => {
    expect(await manage.call('GET', '/user/images/users/alice/a.jpg', undefined, alice)).toMatchObject({
      status: 200,
      body: { key: 'users/alice/a.jpg', status: 'ready' },
    });
    expect(await manage.call('GET', '/user/images/users/bob/d.jpg', undefined, alice)).toMatchObject({
      status: 403,
      body: forbidden('users/bob/d.jpg'),
    });
  });

  it('lists its own prefix when it names none, and only prefixes under it', async () => {
    const own = await manage.call('GET', '/user/images', undefined, alice);
    expect(own.status).toBe(200);
    expect(own.body.images.map((image: { key: string }) => image.key)).toEqual(['users/alice/a.jpg', 'users/alice/b.jpg']);
    const narrower = await manage.call('GET', '/user/images?prefix=users%2Falice%2Fb', undefined, alice);
    expect(narrower.body.images.map((image: { key: string }) => image.key)).toEqual(['users/alice/b.jpg']);
    for (const prefix of ['users/', 'users/ali', 'users/bob/']) {
      const refused = await manage.call('GET', `/user/images?prefix=${encodeURIComponent(prefix)}`, undefined, alice);
      expect(refused).toMatchObject({ status: 403, body: forbidden(prefix, 'The prefix') });
    }
  });

  it('deletes a batch only when every key is its own: one other refuses the batch, and nothing is deleted', async () => {
    const refused = await manage.call('DELETE', '/user/images', { keys: ['users/alice/a.jpg', 'users/bob/d.jpg'] }, alice);
    expect(refused).toMatchObject({ status: 403, body: forbidden('users/bob/d.jpg', 'keys[1]') });
    expect(await manage.sourceKeys()).toEqual(expect.arrayContaining(['users/alice/a.jpg', 'users/bob/d.jpg']));

    const deleted = await manage.call('DELETE', '/user/images', { keys: ['users/alice/a.jpg'] }, alice);
    expect(deleted).toMatchObject({ status: 200, body: { succeeded_files: ['users/alice/a.jpg'] } });
    expect(await manage.sourceKeys()).not.toContain('users/alice/a.jpg');
  });

  it('is refused, 403 forbidden_claim, when its claim is missing or would make an unsafe prefix', async () => {
    for (const sub of [undefined, '', 'a/b', '..', '.', 'tab\there', 'nul\u0000', 7, ['alice']]) {
      const refused = await manage.call('GET', '/user/images', undefined, { ...alice, sub });
      expect(refused.status, JSON.stringify(sub)).toBe(403);
      expect(refused.body.error).toBe('forbidden_claim');
      expect(refused.body.message).toMatch(
        /^The token's claim "sub" (is missing|is not a string|is ".*"), so it names no prefix of users\/\{sub\}\/\.$/,
      );
    }
  });

  it('reaches only the JWT routes, and an IAM caller only the others', async () => {
    const jwtOnIam = await manage.call('GET', '/images', undefined, alice);
    expect(jwtOnIam).toMatchObject({ status: 404, body: { error: 'route_not_found' } });
    expect(jwtOnIam.body.message).toContain('/user/uploads, /user/images, /user/images/{key}');
    const iamOnJwt = await manage.call('GET', '/user/images');
    expect(iamOnJwt).toMatchObject({ status: 404, body: { error: 'route_not_found' } });
    // An IAM caller is not confined.
    expect((await manage.call('GET', '/images/users/bob/d.jpg')).status).toBe(200);
  });
});

describe('a deployment without a JWT prefix', () => {
  it('refuses any JWT caller, 403, rather than leave it unconfined', async () => {
    const unconfined = await createTestManage('manage-nojwt');
    const refused = await unconfined.call('GET', '/user/images', undefined, alice);
    expect(refused).toMatchObject({ status: 403, body: { error: 'forbidden_claim' } });
  });
});

describe('refuseConfined', () => {
  it('refuses a confined caller a route for IAM callers (imports), and lets an IAM caller through', () => {
    expect(() => refuseConfined(UNCONFINED, 'Imports')).not.toThrow();
    const refusal = (() => {
      try {
        refuseConfined({ prefix: 'users/alice/', claim: '{sub}' }, 'Imports');
      } catch (error) {
        return error as ManageError;
      }
    })();
    expect(refusal).toBeInstanceOf(ManageError);
    expect(refusal).toMatchObject({ status: 403, code: 'forbidden_route', message: expect.stringContaining('users/alice/') });
  });
});

describe('prefixTemplateProblem', () => {
  it('takes a prefix with one claim, ending with /', () => {
    for (const template of ['users/{sub}/', '{sub}/', 'tenants/{custom:tenant}/photos/', 'u-{cognito:username}/']) {
      expect(prefixTemplateProblem(template), template).toBeUndefined();
    }
  });

  it('names what is wrong with any other', () => {
    expect(prefixTemplateProblem('users/')).toMatch(/exactly one \{claim\}/);
    expect(prefixTemplateProblem('{iss}/{sub}/')).toMatch(/exactly one \{claim\}/);
    expect(prefixTemplateProblem('users/{sub}/{')).toMatch(/exactly one \{claim\}/);
    expect(prefixTemplateProblem('users/{s b}/')).toMatch(/exactly one \{claim\}/);
    expect(prefixTemplateProblem('users/{sub}')).toMatch(/ending with \//);
    expect(prefixTemplateProblem('/users/{sub}/')).toMatch(/safe key prefix/);
    expect(prefixTemplateProblem('users/../{sub}/')).toMatch(/safe key prefix/);
    expect(prefixTemplateProblem('_uploads/{sub}/')).toMatch(/safe key prefix/);
  });
});
