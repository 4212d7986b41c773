// Unit tests of the browser SDK, run with Node's own test runner against the npm package as an app
// would install it: scripts/test.sh packs Sources/CountersignServer/Browser/sdk with `npm pack`, installs
// the tarball into Tests/BrowserSDK/node_modules, then runs node --test Tests/BrowserSDK.
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import {
  ClientResponseOptionType, CountersignClient, CountersignError, ErrorCode, JourneyStepId,
  initialize, restoreFromSerializedState, serializeState, startJourney,
} from '@countersign/browser-sdk';

/** A server played by `answer(request)`, which returns `{status, body, headers}` or throws. */
function fakeServer(answer) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    const request = {
      url, method: init.method ?? 'GET', headers: init.headers ?? {},
      body: init.body ? JSON.parse(init.body) : undefined, signal: init.signal,
    };
    requests.push(request);
    const { status = 200, body = null, headers = {}, raw } = await answer(request);
    return new Response(raw ?? JSON.stringify(body), { status, headers });
  };
  return { fetch, requests };
}

/** Time that passes only when the SDK sleeps; each sleep is recorded. */
function virtualTime() {
  const clock = { now: 0, sleeps: [] };
  clock.sleep = async (milliseconds, signal) => {
    clock.sleeps.push(milliseconds);
    if (!signal?.aborted) clock.now += milliseconds;
  };
  return clock;
}

let tokens = 0;
function wire(stepId, data = {}, extra = {}) {
  tokens += 1;
  return {
    interaction_id: 'int_1', interaction_token: `itk_${tokens}`, journey_id: 'web_login', journey_step_id: stepId, data,
    client_response_options: { client_input: { type: 'client_input', id: 'client_input', label: 'Continue' } }, ...extra,
  };
}
const waiting = (extra = {}) => wire(JourneyStepId.MobileApproveAuthentication, { polling_interval: 2, push_status: 'queued', ...extra });
const noEvents = (request) => request.url.endsWith('/events') ? { status: 404, body: { error: { code: 'not_found', message: 'no' } } } : null;

test('module functions need initialize first', async () => {
  await assert.rejects(startJourney('web_login'), (error) => error instanceof CountersignError && error.errorCode === ErrorCode.NotInitialized);
});

test('startJourney sends the client id and options; responses are camelCase', async () => {
  const server = fakeServer(() => ({ body: wire('login', { form_id: 'login' }) }));
  const client = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example/', fetch: server.fetch });
  const response = await client.startJourney('web_login', {
    additionalParams: { locale: 'en' }, correlationId: 'c-1', approvalData: { amount: '10' },
  });
  assert.equal(server.requests[0].url, 'https://cs.example/v1/journeys/web_login/start');
  assert.deepEqual(server.requests[0].body, {
    client_id: 'demo-web', additional_params: { locale: 'en' }, correlation_id: 'c-1', approval_data: { amount: '10' },
  });
  assert.equal(response.journeyStepId, 'login');
  assert.equal(response.interactionId, 'int_1');
  assert.deepEqual(response.data, { form_id: 'login' });
});

test('submitClientResponse sends the option and data with the latest interaction token', async () => {
  const server = fakeServer(() => ({ body: waiting() }));
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch });
  await client.startJourney('web_login');
  const token = client.interactionToken;
  await client.submitClientResponse(ClientResponseOptionType.ClientInput, { email: 'ada@example.com' });
  await client.submitClientResponse(ClientResponseOptionType.Resend);
  assert.equal(server.requests[1].url, '/v1/interactions/int_1/submit');
  assert.equal(server.requests[1].headers.Authorization, `Bearer ${token}`);
  assert.deepEqual(server.requests[1].body, { option: 'client_input', data: { email: 'ada@example.com' } });
  assert.equal(server.requests[2].body.option, 'resend');
  assert.notEqual(server.requests[2].headers.Authorization, server.requests[1].headers.Authorization);
});

test('the polling fallback never polls faster than polling_interval', async () => {
  let polls = 0;
  const pollTimes = [];
  const time = virtualTime();
  const server = fakeServer((request) => {
    const refused = noEvents(request);
    if (refused) return refused;
    if (request.url.endsWith('/start')) return { body: waiting() };
    polls += 1;
    pollTimes.push(time.now);
    return { body: polls < 4 ? waiting({ push_status: 'sent' }) : wire(JourneyStepId.Success, {}, { token: 'eyJ.token' }) };
  });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep: time.sleep });
  const first = await client.startJourney('web_login');
  const updates = [];
  const done = await client.waitForMobileApproval(first, { onUpdate: (response) => updates.push(response.data.push_status) });
  assert.equal(done.journeyStepId, JourneyStepId.Success);
  assert.equal(done.token, 'eyJ.token');
  assert.deepEqual(updates, ['sent', 'sent', 'sent']);
  assert.ok(time.sleeps.every((milliseconds) => milliseconds >= 2000), `sleeps ${time.sleeps}`);
  for (let index = 1; index < pollTimes.length; index += 1) {
    assert.ok(pollTimes[index] - pollTimes[index - 1] >= 2000, `polls at ${pollTimes}`);
  }
});

test('slow_down backs off for at least Retry-After', async () => {
  let polls = 0;
  const time = virtualTime();
  const server = fakeServer((request) => {
    const refused = noEvents(request);
    if (refused) return refused;
    if (request.url.endsWith('/start')) return { body: waiting() };
    polls += 1;
    if (polls === 1) {
      return { status: 429, headers: { 'Retry-After': '7' }, body: { error: { code: 'slow_down', message: 'Poll no more often than the polling interval.' } } };
    }
    return { body: wire(JourneyStepId.Success, {}, { token: 't' }) };
  });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep: time.sleep });
  const done = await client.waitForMobileApproval(await client.startJourney('web_login'));
  assert.equal(done.journeyStepId, JourneyStepId.Success);
  assert.deepEqual(time.sleeps, [2000, 7000]);
});

test('an approval event on the stream ends the wait without waiting out the interval', { timeout: 2000 }, async () => {
  const sleeps = [];
  // A wait that only ends when woken: the stream must be what wakes it.
  const sleep = (milliseconds, signal) => new Promise((resolve) => {
    sleeps.push(milliseconds);
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', resolve, { once: true });
  });
  const server = fakeServer((request) => {
    if (request.url.endsWith('/events')) {
      return { raw: ': keep-alive\n\nevent: approval\ndata: {"status":"approved"}\n\n', headers: { 'Content-Type': 'text/event-stream' } };
    }
    if (request.url.endsWith('/start')) return { body: waiting() };
    return { body: wire(JourneyStepId.Success, {}, { token: 't' }) };
  });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep });
  const done = await client.waitForMobileApproval(await client.startJourney('web_login'));
  assert.equal(done.token, 't');
  assert.equal(sleeps.length, 1);
  // Checked here, not in the fake: a failed check inside the stream reader would only end the stream.
  const stream = server.requests.find((request) => request.url.endsWith('/events'));
  assert.match(stream.headers.Authorization, /^Bearer itk_/);
});

test('a wait given an aborted signal rejects with aborted at once, sending nothing and sleeping not at all', { timeout: 2000 }, async () => {
  const time = virtualTime();
  const server = fakeServer((request) => noEvents(request) ?? { body: waiting() });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep: time.sleep });
  const step = await client.startJourney('web_login');
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(client.waitForMobileApproval(step, { signal: controller.signal }), (error) => error.errorCode === ErrorCode.Aborted);
  assert.deepEqual(server.requests.map((request) => request.url.split('/').pop()), ['start'], 'no events stream, no poll');
  assert.deepEqual(time.sleeps, []);
});

test('an events stream that ends is opened again, and its approval event ends the wait', { timeout: 2000 }, async () => {
  // The first sleep is the poll's: it ends only when the stream wakes it. Later ones (before the stream
  // is opened again) end at once.
  let sleeps = 0;
  const sleep = (milliseconds, signal) => new Promise((resolve) => {
    sleeps += 1;
    if (sleeps > 1 || signal?.aborted) return resolve();
    signal?.addEventListener('abort', resolve, { once: true });
  });
  let streams = 0;
  const server = fakeServer((request) => {
    if (request.url.endsWith('/events')) {
      streams += 1;
      // The first stream ends with no event (its instance was lost); the second carries the approval.
      const raw = streams === 1 ? ': keep-alive\n\n' : 'event: approval\ndata: {"status":"approved"}\n\n';
      return { raw, headers: { 'Content-Type': 'text/event-stream' } };
    }
    if (request.url.endsWith('/start')) return { body: waiting() };
    return { body: wire(JourneyStepId.Success, {}, { token: 't' }) };
  });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep });
  const done = await client.waitForMobileApproval(await client.startJourney('web_login'));
  assert.equal(done.token, 't');
  const opened = server.requests.filter((request) => request.url.endsWith('/events'));
  assert.equal(opened.length, 2);
  assert.equal(server.requests.filter((request) => request.url.endsWith('/submit')).length, 1, 'the poll was woken by the second stream');
});

test('an events stream refused 401 (a token a poll had just replaced) is opened again; one refused 404 is left to the polls', { timeout: 2000 }, async () => {
  for (const [status, reopened] of [[401, true], [404, false]]) {
    let sleeps = 0;
    const sleep = (milliseconds, signal) => new Promise((resolve) => {
      sleeps += 1;
      if (sleeps > 1 || signal?.aborted) return resolve();
      signal?.addEventListener('abort', resolve, { once: true });
      // With no stream to wake it, the poll's wait ends when the test gives up on the stream.
      if (!reopened) setTimeout(resolve, 50);
    });
    let streams = 0;
    const server = fakeServer((request) => {
      if (request.url.endsWith('/events')) {
        streams += 1;
        if (streams === 1) return { status, body: { error: { code: 'refused', message: 'no' } } };
        return { raw: 'event: approval\ndata: {"status":"approved"}\n\n', headers: { 'Content-Type': 'text/event-stream' } };
      }
      if (request.url.endsWith('/start')) return { body: waiting() };
      return { body: wire(JourneyStepId.Success, {}, { token: 't' }) };
    });
    const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep });
    const done = await client.waitForMobileApproval(await client.startJourney('web_login'));
    assert.equal(done.token, 't');
    assert.equal(streams, reopened ? 2 : 1, `after ${status}`);
  }
});

test('a wait aborted while it sleeps rejects with aborted at once', { timeout: 2000 }, async () => {
  const controller = new AbortController();
  // A sleep that ends only when aborted; the test aborts once the SDK sleeps.
  const sleep = (milliseconds, signal) => new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', resolve, { once: true });
    controller.abort();
  });
  const server = fakeServer((request) => noEvents(request) ?? { body: waiting() });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep });
  await assert.rejects(
    client.waitForMobileApproval(await client.startJourney('web_login'), { signal: controller.signal }),
    (error) => error.errorCode === ErrorCode.Aborted);
  assert.equal(server.requests.filter((request) => request.url.endsWith('/submit')).length, 0, 'no poll after the abort');
});

test('a poll lost to the network or a server error is tried again at the interval until expires_at; onRetry sees each', async () => {
  const time = virtualTime();
  let polls = 0;
  const expiresAt = new Date(Date.now() + 60_000).toISOString();
  const server = fakeServer((request) => {
    if (noEvents(request)) return noEvents(request);
    if (request.url.endsWith('/start')) return { body: waiting({ expires_at: expiresAt }) };
    polls += 1;
    if (polls === 1) throw new TypeError('fetch failed');
    if (polls === 2) return { status: 502, raw: 'Bad Gateway' };
    return { body: wire(JourneyStepId.Success, {}, { token: 't' }) };
  });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep: time.sleep });
  const retried = [];
  const done = await client.waitForMobileApproval(await client.startJourney('web_login'), {
    onRetry: (error) => retried.push(error.errorCode),
  });
  assert.equal(done.token, 't');
  assert.deepEqual(retried, [ErrorCode.NetworkError, ErrorCode.ServerError]);
  assert.deepEqual(time.sleeps, [2000, 2000, 2000]);
});

test('past expires_at a lost poll is not tried again', async () => {
  const time = virtualTime();
  const server = fakeServer((request) => {
    if (noEvents(request)) return noEvents(request);
    if (request.url.endsWith('/start')) return { body: waiting({ expires_at: new Date(Date.now() - 1000).toISOString() }) };
    throw new TypeError('fetch failed');
  });
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch, sleep: time.sleep });
  await assert.rejects(
    client.waitForMobileApproval(await client.startJourney('web_login')), (error) => error.errorCode === ErrorCode.NetworkError);
});

test('restoreFromSerializedState sets up a page that was never initialized, on its own origin only; a bad saved state is invalid_state', async () => {
  // A fresh copy of the module: its client is not set up yet.
  const fresh = await import('../../Sources/CountersignServer/Browser/sdk/countersign.js?never-initialized');
  assert.throws(() => fresh.restoreFromSerializedState('not json'), (error) => error.errorCode === ErrorCode.InvalidState);
  const server = fakeServer(() => ({ body: waiting() }));
  // A state naming another server would send the page's answers there: refused until initialize names it.
  const elsewhere = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://attacker.example', fetch: server.fetch });
  await elsewhere.startJourney('web_login');
  assert.throws(() => fresh.restoreFromSerializedState(elsewhere.serializeState()), (error) => error.errorCode === ErrorCode.InvalidState);
  const notText = JSON.stringify({ ...JSON.parse(elsewhere.serializeState()), serverPath: 7 });
  assert.throws(() => fresh.restoreFromSerializedState(notText), (error) => error.errorCode === ErrorCode.InvalidState);
  assert.throws(() => fresh.serializeState(), (error) => error.errorCode === ErrorCode.NotInitialized);

  const original = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch });
  const response = await original.startJourney('web_login');
  assert.deepEqual(fresh.restoreFromSerializedState(original.serializeState()), response);
  assert.equal(JSON.parse(fresh.serializeState()).clientId, 'demo-web');
  assert.equal(JSON.parse(fresh.serializeState()).serverPath, '');
});

test('serializeState and restoreFromSerializedState round-trip; the restored client goes on with the same interaction', async () => {
  const server = fakeServer(() => ({ body: waiting() }));
  initialize({ clientId: 'demo-web', serverPath: 'https://cs.example', fetch: server.fetch });
  const first = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example', fetch: server.fetch });
  const response = await first.startJourney('web_login');
  const saved = first.serializeState();

  const restored = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example/', fetch: server.fetch });
  assert.deepEqual(restored.restoreFromSerializedState(saved), response);
  assert.equal(restored.serializeState(), saved);
  await restored.submitClientResponse(ClientResponseOptionType.ClientInput, {});
  assert.equal(server.requests[1].url, 'https://cs.example/v1/interactions/int_1/submit');
  assert.equal(server.requests[1].headers.Authorization, `Bearer ${JSON.parse(saved).interactionToken}`);

  assert.deepEqual(restoreFromSerializedState(saved), response);
  assert.equal(JSON.parse(serializeState()).interactionId, 'int_1');
  for (const bad of ['not json', '{"version": 99}']) {
    assert.throws(() => restored.restoreFromSerializedState(bad), (error) => error.errorCode === ErrorCode.InvalidState);
  }
});

test('a client refuses a state saved for another client or server, and sends nothing with it', async () => {
  const server = fakeServer(() => ({ body: waiting() }));
  const first = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example', fetch: server.fetch });
  await first.startJourney('web_login');
  const saved = JSON.parse(first.serializeState());
  for (const [clientId, serverPath] of [['demo-web', 'https://attacker.example'], ['other-web', 'https://cs.example']]) {
    const client = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example', fetch: server.fetch });
    const forged = JSON.stringify({ ...saved, clientId, serverPath });
    assert.throws(() => client.restoreFromSerializedState(forged), (error) => error.errorCode === ErrorCode.InvalidState);
    await assert.rejects(
      client.submitClientResponse(ClientResponseOptionType.ClientInput, { email: 'ada@example.com' }),
      (error) => error.errorCode === ErrorCode.NoInteraction);
  }
  assert.equal(server.requests.length, 1);
});

test('a browser credential a success hands out is kept per server and client, sent on later calls, and not shown to the page', async () => {
  const kept = new Map();
  const storage = { getItem: (key) => kept.get(key) ?? null, setItem: (key, value) => kept.set(key, value) };
  const success = wire(JourneyStepId.Success, { device_id: 'dev_1', browser_credential: 'secret-1' }, { token: 'jwt' });
  const server = fakeServer((request) => ({ body: request.url.endsWith('/start') ? wire('login') : success }));
  const client = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example', fetch: server.fetch, storage });
  await client.startJourney('web_login');
  assert.equal(server.requests[0].headers['Countersign-Browser-Credential'], undefined);
  const done = await client.submitClientResponse(ClientResponseOptionType.ClientInput, {});
  assert.deepEqual(done.data, { device_id: 'dev_1' });
  assert.deepEqual([...kept.values()], ['secret-1']);

  const next = new CountersignClient({ clientId: 'demo-web', serverPath: 'https://cs.example', fetch: server.fetch, storage });
  await next.startJourney('web_login');
  assert.equal(server.requests[2].headers['Countersign-Browser-Credential'], 'secret-1');
  const otherClient = new CountersignClient({ clientId: 'shop-web', serverPath: 'https://cs.example', fetch: server.fetch, storage });
  await otherClient.startJourney('web_login');
  assert.equal(server.requests[3].headers['Countersign-Browser-Credential'], undefined);
});

test('a step repeated with a refusal resolves with its error, and the next call uses its new token', async () => {
  const repeated = waiting({ resend_attempts_left: 0 });
  repeated.error = { code: 'resend_limit_reached', message: 'No resend attempts are left.' };
  const answers = [{ body: waiting({ resend_attempts_left: 0 }) }, { status: 400, body: repeated }, { body: waiting() }];
  const server = fakeServer(() => answers.shift());
  const client = new CountersignClient({ clientId: 'demo-web', fetch: server.fetch });
  await client.startJourney('web_login');
  const refused = await client.submitClientResponse(ClientResponseOptionType.Resend);
  assert.equal(refused.error.code, 'resend_limit_reached');
  assert.equal(refused.journeyStepId, JourneyStepId.MobileApproveAuthentication);
  await client.submitClientResponse(ClientResponseOptionType.ClientInput, {});
  assert.equal(server.requests[2].headers.Authorization, `Bearer ${repeated.interaction_token}`);
});

test('errors carry their codes', async () => {
  const cases = [
    [() => { throw new TypeError('connection refused'); }, ErrorCode.NetworkError, undefined],
    [() => ({ status: 500, body: { error: { code: 'internal_error', message: 'boom' } } }), ErrorCode.ServerError, 500],
    [() => ({ status: 502, raw: '<html>bad gateway</html>' }), ErrorCode.ServerError, 502],
    [() => ({ status: 400, body: { error: { code: 'client_response_not_valid', message: "'email' is required" } } }), ErrorCode.ClientResponseNotValid, 400],
    [() => ({ status: 401, body: { error: { code: 'invalid_credentials', message: 'wrong' } } }), ErrorCode.InvalidCredentials, 401],
    [() => ({ status: 401, body: { error: { code: 'invalid_token', message: 'superseded' } } }), ErrorCode.InvalidToken, 401],
    [() => ({ status: 410, body: { error: { code: 'expired', message: 'ended' } } }), ErrorCode.Expired, 410],
    [() => ({ status: 429, body: { error: { code: 'slow_down', message: 'later' } }, headers: { 'Retry-After': '4' } }), ErrorCode.SlowDown, 429],
  ];
  for (const [answer, code, status] of cases) {
    const client = new CountersignClient({ clientId: 'demo-web', fetch: fakeServer(answer).fetch });
    await assert.rejects(client.startJourney('web_login'), (error) => {
      assert.ok(error instanceof CountersignError);
      assert.equal(error.errorCode, code);
      assert.equal(error.status, status);
      assert.equal(error.retryAfter, code === ErrorCode.SlowDown ? 4 : undefined);
      return true;
    });
  }
  const idle = new CountersignClient({ clientId: 'demo-web', fetch: fakeServer(() => ({ body: waiting() })).fetch });
  await assert.rejects(idle.submitClientResponse(ClientResponseOptionType.Cancel), (error) => error.errorCode === ErrorCode.NoInteraction);
  assert.throws(() => new CountersignClient({}), (error) => error.errorCode === ErrorCode.NotInitialized);
});

test('countersign.d.ts declares every export of the module, and nothing else', async () => {
  const module = await import('@countersign/browser-sdk');
  const declarations = await readFile(new URL(import.meta.resolve('@countersign/browser-sdk/countersign.d.ts')), 'utf8');
  const declared = [...declarations.matchAll(/^export declare (?:const|class|function) (\w+)/gm)].map((match) => match[1]);
  assert.deepEqual(declared.sort(), Object.keys(module).sort());
});

test('the package is an ES module with its types, a version and nothing but the SDK', async () => {
  const manifest = JSON.parse(await readFile(new URL(import.meta.resolve('@countersign/browser-sdk/package.json')), 'utf8'));
  assert.equal(manifest.type, 'module');
  assert.match(manifest.version, /^\d+\.\d+\.\d+$/);
  assert.deepEqual(manifest.exports['.'], { types: './countersign.d.ts', default: './countersign.js' });
  assert.deepEqual(manifest.files, ['countersign.js', 'countersign.d.ts']);
  // What the packed tarball really installed: the two files and the manifest.
  const installed = await readdir(new URL('.', import.meta.resolve('@countersign/browser-sdk/package.json')));
  assert.deepEqual(installed.sort(), ['countersign.d.ts', 'countersign.js', 'package.json']);
  assert.equal(manifest.dependencies, undefined);
  assert.equal(manifest.scripts, undefined, 'no build step');
  // The module imported above is the installed one, not the source tree's.
  assert.match(import.meta.resolve('@countersign/browser-sdk'), /\/node_modules\/@countersign\/browser-sdk\/countersign\.js$/);
});
