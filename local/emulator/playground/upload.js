// The playground's upload, through the management API as a browser client
// uses it (docs/manage.md): a signed `POST /_manage/uploads` for a presigned
// POST; the file posted with its fields straight to S3 (LocalStack, whose
// bucket's CORS the emulator set for its own origin); then the key's status,
// asked every half second until the validator has made it ready or
// quarantined it, for at most a minute.

import { $, setStatus } from './dom.js';
import { signedFetch, uriEncode } from './sigv4.js';
import { formatBytes } from './units.js';

const POLL_MS = 500;
const POLL_LIMIT_MS = 60_000;

/** What a refusal says: the API's JSON `{error, message}`, S3's XML `<Error><Code/><Message/></Error>`, or its status. */
async function refusal(response) {
  const text = await response.text();
  try {
    const { error, message } = JSON.parse(text);
    if (message) return `${error}: ${message}`;
  } catch {
    const xml = new DOMParser().parseFromString(text, 'application/xml');
    const code = xml.querySelector('Error > Code')?.textContent;
    if (code) return `${code}: ${xml.querySelector('Error > Message')?.textContent ?? ''}`;
  }
  return `HTTP ${response.status}`;
}

async function ok(response) {
  if (!response.ok) throw new Error(await refusal(response));
  return response;
}

/** The presigned POST for `file` at `key`; the API checks the key, the type and the size. */
async function ticketFor(key, file) {
  const request = { key, contentType: file.type || 'application/octet-stream', contentLength: file.size };
  return (await ok(await signedFetch('POST', '/_manage/uploads', JSON.stringify(request)))).json();
}

async function postToS3(ticket, file) {
  const form = new FormData();
  for (const [name, value] of Object.entries(ticket.fields)) form.append(name, value);
  // The file last: S3 ignores the fields after it.
  form.append('file', file);
  await ok(await fetch(ticket.url, { method: 'POST', body: form }));
}

/** The key's status once the validator has decided (ready or quarantined), or still pending after a minute. */
async function decided(key) {
  const started = performance.now();
  for (;;) {
    const status = await (await ok(await signedFetch('GET', `/_manage/images/${uriEncode(key)}`))).json();
    if (status.status !== 'pending' || performance.now() - started > POLL_LIMIT_MS) return status;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function upload(file, onReady) {
  const status = $('#upload-status');
  const key = $('#upload-key').value.trim() || `uploads/${file.name}`;
  try {
    setStatus(status, `Asking the API to upload ${key} (${formatBytes(file.size)})…`);
    const ticket = await ticketFor(key, file);
    setStatus(status, `Posting ${file.name} to S3…`);
    await postToS3(ticket, file);
    setStatus(status, `${key}: pending, the validator reads it…`);
    const result = await decided(key);
    if (result.status === 'quarantined') return setStatus(status, `${key}: quarantined (${result.reason}), never served.`, 'bad');
    if (result.status !== 'ready') return setStatus(status, `${key}: still ${result.status} after a minute.`, 'bad');
    setStatus(status, `${key}: ready, ${result.width} × ${result.height} ${result.format}.`, 'good');
    await onReady(key);
  } catch (error) {
    setStatus(status, `Upload failed: ${error.message}`, 'bad');
  }
}

/** A file chosen or dropped is uploaded through the API; `onReady(key)` shows it once it is ready. */
export function wireUploads(onReady) {
  $('#upload').addEventListener('change', (event) => {
    const file = event.target.files?.[0];
    if (file) void upload(file, onReady);
    event.target.value = '';
  });
  const drop = $('#drop');
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const file = event.dataTransfer?.files?.[0];
    if (file) void upload(file, onReady);
  });
}
