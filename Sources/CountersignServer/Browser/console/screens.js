// The console's screens, one function each: it draws its frame at once and fills it as the admin API
// answers. Every screen draws into its own element, so an answer that comes after the operator moved on
// lands in a detached element and shows nowhere.
import { act, api, showDone, showError } from './api.js';
import { approvalChart } from './chart.js';
import { journeyDiagram } from './diagram.js';

// Building blocks -----------------------------------------------------------------------------------

let ids = 0;
/** An id no other element of the page has: a screen may show the same form once per row. */
const uid = (name) => `c${++ids}-${name}`;

/** An element: `on…` attributes are listeners, `true` is an empty attribute, null/false/undefined none. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  element.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

/** Where an action's outcome goes: announced when it changes. */
export function slot() {
  return h('div', { class: 'slot', 'aria-live': 'polite' });
}

const enc = encodeURIComponent;
const lines = (text) => text.split('\n').map((line) => line.trim()).filter(Boolean);
/** A list the API answers bare or wrapped in `{key: [...]}`. */
const listOf = (body, key) => (Array.isArray(body) ? body : body?.[key] ?? []);
const sameList = (a, b) => JSON.stringify(a && [...a].sort()) === JSON.stringify(b && [...b].sort());
const words = (key) => key.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());
const value = (form, name) => form.elements.namedItem(name).value.trim();

function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return h('time', { datetime: iso }, Number.isNaN(date.getTime()) ? iso : date.toLocaleString());
}

function code(text) {
  return text ? h('code', {}, text) : '—';
}

function userLink(id) {
  return id ? h('a', { href: `#/users/${enc(id)}` }, id) : '—';
}

const good = ['active', 'approved', 'delivered', 'valid', 'enrolled'];
const bad = ['revoked', 'denied', 'rejected', 'gave_up', 'token_invalid', 'failed', 'invalid', 'expired'];

function badge(status) {
  const tone = good.includes(status) ? 'good' : bad.includes(status) ? 'bad' : 'neutral';
  return h('span', { class: `badge badge-${tone}` }, status ?? '—');
}

/** The screen's `<h1>`, its introduction, and a status line for what its actions did. */
function pageHead(screen, title, intro) {
  const heading = h('h1', { tabindex: '-1' }, title);
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  screen.append(heading, ...(intro ? [h('p', { class: 'muted intro' }, intro)] : []), status);
  return { heading, status };
}

function section(title, ...children) {
  const id = uid('section');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id, tabindex: '-1' }, title), ...children);
}

/** A labelled control; `hint` is read with it. */
function field(label, control, hint) {
  control.id ||= uid(control.getAttribute('name') ?? 'field');
  const parts = [h('label', { for: control.id }, label), control];
  if (hint) {
    const hintId = uid('hint');
    control.setAttribute('aria-describedby', hintId);
    parts.push(h('small', { id: hintId, class: 'muted' }, hint));
  }
  return h('div', { class: 'field' }, ...parts);
}

/** A control in a table row: a short label shown, completed for screen readers with what the row is. */
function cellField(label, more, control) {
  control.id ||= uid(control.getAttribute('name') ?? 'field');
  return h('div', { class: 'cell-field' },
    h('label', { for: control.id, class: 'cell-label' }, label, h('span', { class: 'visually-hidden' }, ` ${more}`)), control);
}

function select(name, options, chosen) {
  return h('select', { name }, ...options.map(([optionValue, label]) => h('option', { value: optionValue, selected: optionValue === chosen }, label)));
}

/** A button that acts; `more` completes its name for screen readers ("Save" → "Save bank"). */
function button(action, label, { more, type = 'button', tone } = {}) {
  return h('button', { type, 'data-action': action, class: tone }, label, more ? h('span', { class: 'visually-hidden' }, ` ${more}`) : null);
}

/** A table that scrolls sideways on its own when it is wider than the screen. */
function table(caption, headers, body) {
  const captionId = uid('caption');
  return h('div', { class: 'table-wrap', role: 'region', 'aria-labelledby': captionId, tabindex: '0' },
    h('table', {},
      h('caption', { id: captionId, class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
      body));
}

function fill(body, rows, columns, empty) {
  body.replaceChildren(...(rows.length ? rows : [h('tr', {}, h('td', { colspan: columns, class: 'muted' }, empty))]));
}

function detailsList(pairs) {
  return h('dl', { class: 'details' }, ...pairs
    .filter(([, shown]) => shown !== undefined && shown !== null && shown !== '')
    .flatMap(([term, shown]) => [h('dt', {}, term), h('dd', {}, shown)]));
}

/** Reads `path` and hands the answer to `render`; a refusal is shown in `where`. */
async function load(where, path, render) {
  try {
    await render(await api('GET', path));
  } catch (error) {
    if (error.status !== 401) showError(where, error.message || 'Something went wrong.');
  }
}

/**
 * Asks before `run`: the first press shows the question with a confirm and a cancel button, so nothing
 * irreversible happens on one stray keypress.
 */
function confirmed(first, question, confirmLabel, run) {
  first.addEventListener('click', () => {
    const result = slot();
    const confirm = button('confirm', confirmLabel, { tone: 'danger' });
    const cancel = button('cancel', 'Cancel', { tone: 'secondary' });
    const ask = h('div', { class: 'confirm', role: 'group', 'aria-label': question },
      h('p', {}, question), h('div', { class: 'actions' }, confirm, cancel), result);
    first.hidden = true;
    first.after(ask);
    confirm.focus();
    cancel.addEventListener('click', () => {
      ask.remove();
      first.hidden = false;
      first.focus();
    });
    confirm.addEventListener('click', () => act(confirm, result, run));
  });
}

/** Saves `text` as a file named `filename`. */
function saveFile(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    throw new Error('The browser did not let the page copy; select the text and copy it instead.');
  }
}

/** Says `message` in the screen's status line and moves focus to `heading` (what was acted on is gone). */
function afterChange(status, message, heading) {
  status.textContent = message;
  heading?.focus();
}

// Applications ---------------------------------------------------------------------------------------

function applications(screen) {
  pageHead(screen, 'Applications',
    'An application groups its clients: web pages, phone apps and backends. Pages of its web origins may call the API; '
    + 'its allowed journeys limit what its clients may start.');
  const applicationsBody = h('tbody');
  const clientsBody = h('tbody');
  const listResult = slot();
  const applicationChoice = h('select', { name: 'application_id' });
  const reload = () => load(listResult, '/admin/v1/applications', (answer) => {
    const all = listOf(answer, 'applications');
    fill(applicationsBody, all.map(applicationRow), 6, 'No applications yet.');
    fill(clientsBody, all.flatMap((application) => application.clients.map(clientRow)), 5, 'No clients yet.');
    const chosen = applicationChoice.value;
    applicationChoice.replaceChildren(...all.map((application) =>
      h('option', { value: application.id, selected: application.id === chosen }, `${application.name} (${application.id})`)));
  });
  screen.append(
    createApplicationForm(reload),
    section('All applications', listResult,
      table('Applications', ['ID', 'Name', 'Allowed web origins', 'Allowed journeys', 'Clients', 'Actions'], applicationsBody)),
    section('Clients', table('Clients of every application', ['ID', 'Name', 'Kind', 'Application', 'Backchannel'], clientsBody)),
    createClientForm(applicationChoice, reload));
  return reload();
}

function createApplicationForm(reload) {
  const result = slot();
  const submit = button('create', 'Create application', { type: 'submit' });
  const form = h('form', { novalidate: true, 'data-form': 'create-application' },
    field('ID', h('input', { name: 'id', autocomplete: 'off', spellcheck: 'false' }), "1 to 64 letters, digits, '-' or '_'; it cannot change."),
    field('Name', h('input', { name: 'name', autocomplete: 'off' })),
    field('Allowed web origins', h('textarea', { name: 'allowed_origins', rows: 3, spellcheck: 'false' }),
      'One per line, such as https://bank.example. Empty: no web page may call the API for it.'),
    field('Allowed journeys', h('textarea', { name: 'allowed_journeys', rows: 3, spellcheck: 'false' }),
      'One journey id per line. Empty: any journey its clients’ kind may start.'),
    result, h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(submit, result, async () => {
      const body = { id: value(form, 'id'), name: value(form, 'name') };
      const origins = lines(value(form, 'allowed_origins'));
      const journeys = lines(value(form, 'allowed_journeys'));
      if (origins.length) body.allowed_origins = origins;
      if (journeys.length) body.allowed_journeys = journeys;
      const created = await api('POST', '/admin/v1/applications', body);
      form.reset();
      showDone(result, `The application ${created.id} was created.`);
      await reload();
    });
  });
  return section('New application', form);
}

function applicationRow(application) {
  const id = application.id;
  const name = h('input', { name: 'name', value: application.name, autocomplete: 'off' });
  const origins = h('textarea', { name: 'allowed_origins', rows: 2, spellcheck: 'false' }, (application.allowed_origins ?? []).join('\n'));
  const journeys = h('textarea', { name: 'allowed_journeys', rows: 2, spellcheck: 'false', placeholder: 'Any' },
    (application.allowed_journeys ?? []).join('\n'));
  const result = slot();
  const save = button('save', 'Save', { more: id });
  save.addEventListener('click', () => act(save, result, async () => {
    // Only what changed is sent: each change is a security event in the operator's name.
    const change = {};
    if (name.value.trim() !== application.name) change.name = name.value.trim();
    const newOrigins = lines(origins.value);
    if (!sameList(newOrigins, application.allowed_origins ?? [])) change.allowed_origins = newOrigins;
    // An empty list lifts the limit: the clients may start any journey their kind may.
    const newJourneys = lines(journeys.value).length ? lines(journeys.value) : null;
    if (!sameList(newJourneys, application.allowed_journeys ?? null)) change.allowed_journeys = newJourneys;
    if (!Object.keys(change).length) return showDone(result, 'Nothing changed.');
    Object.assign(application, await api('PATCH', `/admin/v1/applications/${enc(id)}`, change));
    // The server's spelling of what it stored (origins normalised and sorted).
    origins.value = (application.allowed_origins ?? []).join('\n');
    journeys.value = (application.allowed_journeys ?? []).join('\n');
    return showDone(result, 'Saved.');
  }));
  return h('tr', { 'data-row': id },
    h('th', { scope: 'row' }, id),
    h('td', {}, cellField('Name', `of ${id}`, name)),
    h('td', {}, cellField('One per line', `: allowed web origins of ${id}`, origins)),
    h('td', {}, cellField('One per line; empty: any', `: allowed journeys of ${id}`, journeys)),
    h('td', {}, application.clients.length
      ? h('ul', { class: 'plain' }, ...application.clients.map((client) => h('li', {}, `${client.id} (${client.kind})`)))
      : h('span', { class: 'muted' }, 'None')),
    h('td', {}, save, result));
}

function clientRow(client) {
  const backchannel = client.kind === 'backend' ? [
    client.backchannel_token_delivery_mode,
    client.backchannel_client_notification_endpoint && `to ${client.backchannel_client_notification_endpoint}`,
    client.backchannel_authentication_request_signing_alg && `signed requests (${client.backchannel_authentication_request_signing_alg})`,
    client.authorization_details_types?.length && `details: ${client.authorization_details_types.join(', ')}`,
  ].filter(Boolean).join('; ') : '—';
  return h('tr', { 'data-row': client.id },
    h('th', { scope: 'row' }, client.id), h('td', {}, client.name), h('td', {}, client.kind),
    h('td', {}, client.application_id), h('td', {}, backchannel));
}

function createClientForm(applicationChoice, reload) {
  const result = slot();
  const submit = button('create', 'Add client', { type: 'submit' });
  const kind = select('kind', [['web', 'Web: pages in a browser'], ['native', 'Native: a phone app'], ['backend', 'Backend: a server (OpenID CIBA)']], 'web');
  const backend = h('fieldset', { hidden: true },
    h('legend', {}, 'Backend client'),
    field('Public keys (JWKS)', h('textarea', { name: 'jwks', rows: 5, spellcheck: 'false', class: 'mono' }),
      'A JSON object {"keys": [...]}: the public keys of its signed requests and client assertions.'),
    field('Token delivery', select('backchannel_token_delivery_mode', [['poll', 'poll: it asks the token endpoint'], ['ping', 'ping: it is called back']], 'poll')),
    field('Notification endpoint', h('input', { name: 'backchannel_client_notification_endpoint', type: 'url', spellcheck: 'false' }),
      'For ping: the https URL the server calls back.'),
    field('Request signing algorithm', select('backchannel_authentication_request_signing_alg', [['', 'None: plain requests'], ['ES256', 'ES256'], ['PS256', 'PS256']], '')),
    field('Authorization details types', h('textarea', { name: 'authorization_details_types', rows: 2, spellcheck: 'false' }),
      'One per line, such as payment_initiation.'));
  kind.addEventListener('change', () => { backend.hidden = kind.value !== 'backend'; });
  const form = h('form', { novalidate: true, 'data-form': 'create-client' },
    field('Application', applicationChoice), field('Client ID', h('input', { name: 'id', autocomplete: 'off', spellcheck: 'false' })),
    field('Name', h('input', { name: 'name', autocomplete: 'off' })), field('Kind', kind), backend,
    result, h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(submit, result, async () => {
      const body = { id: value(form, 'id'), name: value(form, 'name'), kind: kind.value };
      if (kind.value === 'backend') {
        const jwks = value(form, 'jwks');
        if (jwks) {
          try {
            body.jwks = JSON.parse(jwks);
          } catch {
            throw new Error('The public keys (JWKS) are not valid JSON.');
          }
        }
        body.backchannel_token_delivery_mode = value(form, 'backchannel_token_delivery_mode');
        const endpoint = value(form, 'backchannel_client_notification_endpoint');
        if (endpoint) body.backchannel_client_notification_endpoint = endpoint;
        const alg = value(form, 'backchannel_authentication_request_signing_alg');
        if (alg) body.backchannel_authentication_request_signing_alg = alg;
        const types = lines(value(form, 'authorization_details_types'));
        if (types.length) body.authorization_details_types = types;
      }
      const created = await api('POST', `/admin/v1/applications/${enc(applicationChoice.value)}/clients`, body);
      form.reset();
      backend.hidden = true;
      showDone(result, `The ${created.kind} client ${created.id} was added.`);
      await reload();
    });
  });
  return section('New client', form);
}

// Push -----------------------------------------------------------------------------------------------

function push(screen) {
  const { status } = pageHead(screen, 'Push',
    'How the server reaches phones: an Apple (APNs) or Google (FCM) configuration per app. Key material is sent once and never shown again.');
  const body = h('tbody');
  const listResult = slot();
  const list = section('Configurations', listResult,
    table('Push configurations', ['Name', 'Provider', 'App', 'Key', 'Environment', 'Updated', 'Test push', 'Actions'], body));
  const reload = () => load(listResult, '/admin/v1/push-configs', (answer) => fill(body,
    listOf(answer, 'push_configs').map((config) => pushRow(config, () => {
      afterChange(status, `The configuration ${config.name} was deleted.`, list.querySelector('h2'));
      return reload();
    })), 8, 'No push configuration yet.'));
  screen.append(createPushForm(reload), list);
  return reload();
}

function createPushForm(reload) {
  const result = slot();
  const submit = button('create', 'Add configuration', { type: 'submit' });
  const type = select('type', [['apns', 'Apple (APNs)'], ['fcm', 'Google (FCM)']], 'apns');
  const apns = h('fieldset', {},
    h('legend', {}, 'Apple Push Notification service'),
    field('Signing key (.p8 file)', h('input', { type: 'file', name: 'private_key_pem', accept: '.p8,.pem,text/plain' }),
      'The key file from Apple Developer, Certificates, Identifiers & Profiles, Keys.'),
    field('Key ID', h('input', { name: 'key_id', autocomplete: 'off', spellcheck: 'false' })),
    field('Team ID', h('input', { name: 'team_id', autocomplete: 'off', spellcheck: 'false' })),
    field('Bundle ID', h('input', { name: 'bundle_id', autocomplete: 'off', spellcheck: 'false' }), 'The app’s bundle id: the topic of its pushes.'),
    field('Environment', select('environment', [['production', 'production: App Store and TestFlight builds'], ['sandbox', 'sandbox: development builds']], 'production')));
  const fcm = h('fieldset', { hidden: true },
    h('legend', {}, 'Firebase Cloud Messaging'),
    field('Service account (JSON file)', h('input', { type: 'file', name: 'service_account', accept: '.json,application/json' }),
      'From the Firebase console, Project settings, Service accounts, Generate new private key.'),
    field('Project ID', h('input', { name: 'project_id', autocomplete: 'off', spellcheck: 'false' }), 'Optional: read from the service account.'));
  const advanced = h('details', {},
    h('summary', {}, 'Another endpoint (a push proxy, a test server)'),
    field('Endpoint', h('input', { name: 'endpoint', type: 'url', spellcheck: 'false' }), 'An https URL with no path. Empty: the provider’s own.'),
    field('Token endpoint (FCM)', h('input', { name: 'token_endpoint', type: 'url', spellcheck: 'false' })),
    field('Certificate authority (PEM)', h('textarea', { name: 'ca_certificate_pem', rows: 3, spellcheck: 'false', class: 'mono' }),
      'Trusted for these endpoints instead of the system’s.'));
  const showType = () => {
    apns.hidden = type.value !== 'apns';
    fcm.hidden = type.value !== 'fcm';
  };
  type.addEventListener('change', showType);
  const form = h('form', { novalidate: true, 'data-form': 'create-push-config' },
    field('Provider', type), field('Name', h('input', { name: 'name', autocomplete: 'off' }), 'Optional: the bundle id or project by default.'),
    apns, fcm, advanced, result, h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(submit, result, async () => {
      const body = { type: type.value };
      // Only what was given: the server names what is missing.
      const put = (name, given) => { if (given) body[name] = given; };
      const fileText = (name) => form.elements.namedItem(name).files[0]?.text();
      put('name', value(form, 'name'));
      if (type.value === 'apns') {
        for (const name of ['key_id', 'team_id', 'bundle_id', 'environment']) put(name, value(form, name));
        put('private_key_pem', await fileText('private_key_pem'));
      } else {
        // The service account goes as the file's text: the server reads it as Google wrote it.
        put('service_account', await fileText('service_account'));
        put('project_id', value(form, 'project_id'));
      }
      for (const name of ['endpoint', 'token_endpoint', 'ca_certificate_pem']) put(name, value(form, name));
      const created = await api('POST', '/admin/v1/push-configs', body);
      form.reset();
      showType();
      showDone(result, `The configuration ${created.name} was added.`);
      await reload();
    });
  });
  return section('New configuration', form);
}

function pushRow(config, deleted) {
  const app = config.bundle_id ?? config.project_id ?? '—';
  const deviceID = h('input', { name: 'device_id', autocomplete: 'off', spellcheck: 'false' });
  const testResult = slot();
  const test = button('test-push', 'Send test', { type: 'submit', more: `with ${config.name}` });
  const testForm = h('form', { novalidate: true, class: 'inline' },
    cellField('Device ID', `for a test push with ${config.name}`, deviceID), test, testResult);
  testForm.addEventListener('submit', (event) => {
    event.preventDefault();
    act(test, testResult, async () => {
      const answer = await api('POST', `/admin/v1/push-configs/${enc(config.id)}/test`, { device_id: deviceID.value.trim() });
      const said = [answer.delivered ? 'Delivered.' : 'Not delivered.'];
      if (answer.status !== null && answer.status !== undefined) said.push(`Provider status ${answer.status}.`);
      if (answer.reason) said.push(`Reason: ${answer.reason}.`);
      if (answer.apns_id) said.push(`apns-id ${answer.apns_id}.`);
      testResult.replaceChildren(h('p', {
        'data-test-push-result': '', 'data-delivered': String(Boolean(answer.delivered)), class: answer.delivered ? 'done' : 'refused',
      }, said.join(' ')));
    });
  });
  const remove = button('remove', 'Delete', { more: config.name, tone: 'secondary' });
  const actions = h('td', {}, remove);
  confirmed(remove, `Delete ${config.name}? Phones of ${app} get no pushes until a configuration for it is added again.`, 'Yes, delete',
    async () => {
      await api('DELETE', `/admin/v1/push-configs/${enc(config.id)}`);
      await deleted();
    });
  return h('tr', { 'data-row': config.id },
    h('th', { scope: 'row' }, config.name, h('br'), h('code', { class: 'small' }, config.id)),
    h('td', {}, config.type === 'apns' ? 'APNs' : config.type === 'fcm' ? 'FCM' : config.type),
    h('td', {}, app),
    h('td', {}, config.key_id || '—', h('br'), h('span', { class: 'muted' }, config.team_id ?? config.client_email ?? '')),
    h('td', {}, config.environment ?? '—', config.endpoint ? [h('br'), h('span', { class: 'muted' }, config.endpoint)] : null),
    h('td', {}, when(config.updated_at ?? config.created_at)),
    h('td', {}, testForm),
    actions);
}

// Journeys -------------------------------------------------------------------------------------------

const languages = [['javascript', 'JavaScript (browser SDK)'], ['swift', 'Swift (iOS SDK)'], ['kotlin', 'Kotlin (Android SDK)']];

function journeys(screen, { param }) {
  if (param) return journey(screen, param);
  pageHead(screen, 'Journeys', 'The journeys this server runs. Open one for its diagram, its check, its source and code to run it from an app.');
  const body = h('tbody');
  const listResult = slot();
  screen.append(section('All journeys', listResult, table('Journeys', ['ID', 'Name', 'First step'], body)));
  return load(listResult, '/admin/v1/journeys', (answer) => fill(body, listOf(answer, 'journeys').map((item) => h('tr', { 'data-row': item.id },
    h('th', { scope: 'row' }, h('a', { href: `#/journeys/${enc(item.id)}` }, item.id)),
    h('td', {}, item.name), h('td', {}, item.start))), 3, 'No journeys.'));
}

function journey(screen, id) {
  pageHead(screen, `Journey ${id}`);
  const result = slot();
  const content = h('div');
  screen.append(h('p', {}, h('a', { href: '#/journeys' }, 'All journeys')), result, content);
  return load(result, `/admin/v1/journeys/${enc(id)}`, (shown) => {
    const steps = shown.steps ?? [];
    const stepsBody = h('tbody');
    fill(stepsBody, steps.map((step) => h('tr', { 'data-row': step.id },
      h('th', { scope: 'row' }, step.id), h('td', {}, step.type), h('td', {}, step.next ?? '—'), h('td', {}, step.failure ?? '—'),
      h('td', {}, step.cancel ?? '—'),
      h('td', {}, Object.entries(step.branches ?? {}).map(([name, target]) => `${name} → ${target}`).join(', ') || '—'))), 6, 'No steps.');
    const lint = shown.lint ?? { ok: true, problems: [] };
    content.append(
      h('p', { class: 'lead' }, shown.name ?? ''),
      section('Diagram',
        h('p', { class: 'muted' }, 'From the first step down; solid arrows go on, red dashed on failure, grey dotted on cancel, blue ones are named branches.'),
        h('div', { class: 'diagram-box' }, journeyDiagram(shown)),
        table('The steps and where each goes', ['Step', 'Type', 'Next', 'On failure', 'On cancel', 'Branches'], stepsBody)),
      section('Check', lint.ok
        ? h('p', { class: 'done', 'data-lint': 'ok' }, 'No problems found.')
        : h('div', { 'data-lint': 'problems' }, h('p', { class: 'refused' }, 'Problems found:'),
          h('ul', {}, ...(lint.problems ?? []).map((problem) => h('li', {}, problem))))),
      section('Source', h('pre', { class: 'code', tabindex: '0' }, shown.yaml ?? '')),
      section('Integration code',
        h('p', { class: 'muted' }, 'A handler for each step of this journey, for each SDK: a start to copy into an app.'),
        ...languages.map(([language, title]) => codeBlock(id, language, title))));
  });
}

function codeBlock(journeyID, language, title) {
  const headingID = uid('code');
  const result = slot();
  const block = h('section', { class: 'code-block', 'aria-labelledby': headingID }, h('h3', { id: headingID }, title), result);
  load(result, `/admin/v1/journeys/${enc(journeyID)}/integration-code?language=${language}`, (answer) => {
    const copyButton = button('copy', 'Copy', { more: `the ${title} code`, tone: 'secondary' });
    const download = button('download', `Download ${answer.filename}`, { tone: 'secondary' });
    copyButton.addEventListener('click', () => act(copyButton, result, async () => {
      await copy(answer.code);
      showDone(result, 'Copied.');
    }));
    download.addEventListener('click', () => saveFile(answer.filename, answer.code, 'text/plain'));
    block.append(h('div', { class: 'actions' }, copyButton, download), result,
      h('pre', { class: 'code', tabindex: '0', 'data-code': language }, answer.code));
  });
  return block;
}

// Users and devices ----------------------------------------------------------------------------------

function users(screen, { param }) {
  if (param) return user(screen, param);
  pageHead(screen, 'Users and devices',
    'Find a user by the id your application knows them by (often their email) to see their phones and keys, and revoke one that is lost.');
  const result = slot();
  const find = button('find', 'Find', { type: 'submit' });
  const form = h('form', { novalidate: true, class: 'inline-form', 'data-form': 'find-user' },
    field('External user ID', h('input', { name: 'external_user_id', type: 'search', spellcheck: 'false' }),
      'Empty: the newest users.'),
    find, result);
  const body = h('tbody');
  const list = section('Newest users', table('Users', ['External user ID', 'Email', 'Created', 'ID'], body));
  const show = (answer, title, empty) => {
    list.querySelector('h2').textContent = title;
    fill(body, listOf(answer, 'users').map((item) => h('tr', { 'data-row': item.id },
      h('th', { scope: 'row' }, h('a', { href: `#/users/${enc(item.id)}` }, item.external_user_id)),
      h('td', {}, item.email ?? '—'), h('td', {}, when(item.created_at)), h('td', {}, code(item.id)))), 4, empty);
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const wanted = value(form, 'external_user_id');
    act(find, result, async () => {
      if (!wanted) return show(await api('GET', '/admin/v1/users?limit=50'), 'Newest users', 'No users yet.');
      return show(await api('GET', `/admin/v1/users?external_user_id=${enc(wanted)}`), `Users with the ID ${wanted}`, `No user has the ID ${wanted}.`);
    });
  });
  screen.append(section('Find a user', form), list);
  return load(result, '/admin/v1/users?limit=50', (answer) => show(answer, 'Newest users', 'No users yet.'));
}

function user(screen, id) {
  const { heading, status } = pageHead(screen, 'User');
  const result = slot();
  const content = h('div');
  screen.append(h('p', {}, h('a', { href: '#/users' }, 'All users')), result, content);
  // After a revocation the user is read again: revoking a device revokes its keys too.
  const revoked = async (message, part) => {
    await show();
    afterChange(status, message, content.querySelector(`[data-part="${part}"] h2`));
  };
  const show = () => load(result, `/admin/v1/users/${enc(id)}`, (shown) => {
    heading.textContent = `User ${shown.external_user_id}`;
    const devicesBody = h('tbody');
    const keysBody = h('tbody');
    fill(devicesBody, (shown.devices ?? []).map((device) => deviceRow(device, revoked)), 8, 'No devices.');
    fill(keysBody, (shown.biometric_keys ?? []).map((key) => keyRow(key, revoked)), 7, 'No biometric keys.');
    const devices = section('Devices',
      table('Devices of this user', ['Device', 'Model', 'Push', 'Status', 'Registered', 'Last used', 'Revoked', 'Actions'], devicesBody));
    devices.dataset.part = 'devices';
    const keys = section('Biometric keys',
      table('Biometric keys of this user', ['Key', 'Family', 'OS', 'Device', 'Status', 'Registered', 'Actions'], keysBody));
    keys.dataset.part = 'keys';
    content.replaceChildren(
      section('Details', detailsList([
        ['ID', code(shown.id)], ['External user ID', shown.external_user_id], ['Email', shown.email], ['Created', when(shown.created_at)],
        ['Applications', (shown.applications ?? []).join(', ') || 'None'],
      ])),
      devices, keys);
  });
  return show();
}

function deviceRow(device, revoked) {
  const push = `${device.push_channel}, token ${device.push_token_status}${device.push_token_invalid_reason ? ` (${device.push_token_invalid_reason})` : ''}`;
  const actions = h('td', {});
  if (device.status === 'active') {
    const revoke = button('revoke', 'Revoke', { more: device.name, tone: 'secondary' });
    confirmed(revoke, `Revoke ${device.name}? It can no longer approve anything, and its biometric keys stop working.`, 'Yes, revoke',
      async () => {
        await api('POST', `/admin/v1/devices/${enc(device.id)}/revoke`);
        await revoked(`The device ${device.name} was revoked.`, 'devices');
      });
    actions.append(revoke);
  } else {
    actions.append('—');
  }
  return h('tr', { 'data-row': device.id },
    h('th', { scope: 'row' }, device.name, h('br'), h('code', { class: 'small' }, device.id)),
    h('td', {}, `${device.model} · ${device.os}`), h('td', {}, push), h('td', {}, badge(device.status)),
    h('td', {}, when(device.created_at)), h('td', {}, when(device.last_used_at)), h('td', {}, when(device.revoked_at)), actions);
}

function keyRow(key, revoked) {
  const actions = h('td', {});
  if (key.status === 'active') {
    const revoke = button('revoke', 'Revoke', { more: `key ${key.public_key_id}`, tone: 'secondary' });
    confirmed(revoke, `Revoke the biometric key ${key.public_key_id}? Signing with it is refused from now on.`, 'Yes, revoke',
      async () => {
        await api('POST', `/admin/v1/biometric-keys/${enc(key.id)}/revoke`);
        await revoked(`The biometric key ${key.public_key_id} was revoked.`, 'keys');
      });
    actions.append(revoke);
  } else {
    actions.append('—');
  }
  return h('tr', { 'data-row': key.id },
    h('th', { scope: 'row' }, h('code', {}, key.public_key_id)), h('td', {}, key.key_family), h('td', {}, key.os),
    h('td', {}, code(key.device_id)), h('td', {}, badge(key.status)), h('td', {}, when(key.created_at)), actions);
}

// Approvals ------------------------------------------------------------------------------------------

function approvals(screen) {
  pageHead(screen, 'Approvals', 'The latest requests sent to phones, how each ended, and every push attempt behind them.');
  const approvalsBody = h('tbody');
  const deliveriesBody = h('tbody');
  const approvalsResult = slot();
  const deliveriesResult = slot();
  screen.append(
    section('Recent approvals', approvalsResult, table('The latest approvals, newest first',
      ['Created', 'Outcome', 'Reason', 'User', 'Journey', 'Application', 'Device', 'Decided'], approvalsBody)),
    section('Push deliveries', deliveriesResult, table('The latest push attempts, newest first',
      ['Attempted', 'Outcome', 'Reason', 'Channel', 'Device', 'Approval', 'Attempt', 'Next attempt'], deliveriesBody)));
  load(approvalsResult, '/admin/v1/approvals?limit=50', (answer) => fill(approvalsBody, listOf(answer, 'approvals').map((approval) =>
    h('tr', { 'data-row': approval.id },
      h('th', { scope: 'row' }, when(approval.created_at)), h('td', {}, badge(approval.status)), h('td', {}, approval.reason ?? '—'),
      h('td', {}, userLink(approval.user_id)), h('td', {}, approval.journey_id ?? '—'), h('td', {}, approval.application_id ?? '—'),
      h('td', {}, code(approval.device_id)), h('td', {}, when(approval.decided_at)))), 8, 'No approvals yet.'));
  load(deliveriesResult, '/admin/v1/push-deliveries?limit=50', (answer) => fill(deliveriesBody, listOf(answer, 'push_deliveries').map((delivery) =>
    h('tr', { 'data-row': delivery.id },
      h('th', { scope: 'row' }, when(delivery.attempted_at)), h('td', {}, badge(delivery.status)), h('td', {}, delivery.reason ?? '—'),
      h('td', {}, delivery.channel), h('td', {}, code(delivery.device_id)), h('td', {}, code(delivery.approval_id)),
      h('td', {}, String(delivery.attempt)), h('td', {}, when(delivery.next_attempt_at)))), 8, 'No push attempts yet.'));
}

// Evidence -------------------------------------------------------------------------------------------

/** What a bundle's phone signed, in one line. */
function signedSummary(bundle) {
  const data = Object.entries(bundle.approval_data ?? {});
  if (data.length) return data.map(([key, shown]) => `${key}: ${shown}`).join(', ');
  return bundle.authorization_request ? 'A backend client’s authorization request' : '—';
}

function evidence(screen, { param }) {
  if (param) return evidenceBundle(screen, param);
  pageHead(screen, 'Evidence',
    'Transactions signed on a phone. Each is a bundle that verifies offline: what the phone showed, its signature over exactly that, and the server’s seal.');
  const body = h('tbody');
  const result = slot();
  screen.append(section('Signed transactions', result,
    table('Evidence, newest first', ['Evidence', 'Signed', 'User', 'What was signed', 'Journey', 'Device'], body)));
  return load(result, '/admin/v1/evidence?limit=50', (answer) => fill(body, listOf(answer, 'evidence').map((bundle) =>
    h('tr', { 'data-row': bundle.id },
      h('th', { scope: 'row' }, h('a', { href: `#/evidence/${enc(bundle.id)}` }, bundle.id)), h('td', {}, when(bundle.signed_at)),
      h('td', {}, bundle.external_user_id), h('td', {}, signedSummary(bundle)), h('td', {}, bundle.journey_id), h('td', {}, code(bundle.device_id)))),
  6, 'No signed transactions yet.'));
}

/** `sha256:` and the hex SHA-256 of the key's DER, as `base64 -d | sha256sum` gives it. */
async function fingerprint(publicKey) {
  try {
    const bytes = Uint8Array.from(atob(publicKey), (character) => character.charCodeAt(0));
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    return `sha256:${[...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
  } catch {
    return null;
  }
}

function evidenceBundle(screen, id) {
  pageHead(screen, `Evidence ${id}`);
  const result = slot();
  const content = h('div');
  screen.append(h('p', {}, h('a', { href: '#/evidence' }, 'All evidence')), result, content);
  return load(result, `/admin/v1/evidence/${enc(id)}`, async (bundle) => {
    const downloadResult = slot();
    const download = button('download', `Download ${id}.json`);
    download.addEventListener('click', () => act(download, downloadResult, async () => {
      // The server's own bytes, as they were sealed and as `countersign evidence verify` reads them.
      const text = await api('GET', `/admin/v1/evidence/${enc(id)}`, undefined, { text: true });
      saveFile(`${id.replace(/[^A-Za-z0-9._-]/g, '_')}.json`, text, 'application/json');
      showDone(downloadResult, 'Downloaded.');
    }));
    const check = h('div', { 'data-verification': '' });
    const checkResult = slot();
    const signed = Object.entries(bundle.approval_data ?? {});
    content.append(
      h('div', { class: 'actions' }, download), downloadResult,
      section('What was signed',
        signed.length ? detailsList(signed) : h('p', { class: 'muted' }, 'No approval data.'),
        bundle.authorization_request
          ? [h('h3', {}, 'Authorization request'), h('pre', { class: 'code', tabindex: '0' }, JSON.stringify(bundle.authorization_request, null, 2))]
          : null),
      section('Who signed', detailsList([
        ['User', bundle.external_user_id], ['User ID', userLink(bundle.user_id)], ['Device', code(bundle.device_id)],
        ['Key', code(bundle.public_key_id)], ['Key fingerprint', code(await fingerprint(bundle.public_key))],
        ['Journey', bundle.journey_id], ['Approval', code(bundle.approval_id)], ['Signed', when(bundle.signed_at)],
        ['Sealed by the server', bundle.seal ? 'Yes' : 'No'],
      ])),
      section('Check', checkResult, check),
      section('The bundle', h('details', {}, h('summary', {}, 'Show its JSON'),
        h('pre', { class: 'code', tabindex: '0' }, JSON.stringify(bundle, null, 2)))));
    await load(checkResult, `/admin/v1/evidence/${enc(id)}/verification`, (verification) => {
      check.dataset.signatureValid = String(Boolean(verification.signature_valid));
      check.dataset.sealValid = String(Boolean(verification.seal_valid));
      check.append(detailsList([
        ['Signature', verification.signature_valid
          ? badge('valid') : badge('invalid')],
        ['Seal', verification.seal_valid ? badge('valid') : badge('invalid')],
        ['Detail', verification.detail],
      ]));
    });
  });
}

// Security events ------------------------------------------------------------------------------------

const eventKinds = [
  'not_me', 'rate_limited', 'admin_auth_failed', 'signature_replayed', 'otp_exhausted', 'signing_key_rotated', 'push_config_changed',
  'application_changed', 'credential_revoked', 'user_applications_changed', 'database_backed_up', 'enrollment_code_issued',
  'operator_changed', 'console_signed_in', 'console_signed_out', 'console_refused',
];

function securityEvents(screen) {
  pageHead(screen, 'Security events',
    'What must be seen afterwards: requests denied as not mine, rate limits, revocations, and every change made here, with who made it.');
  const result = slot();
  const filter = button('filter', 'Filter', { type: 'submit' });
  const form = h('form', { novalidate: true, class: 'filters', 'data-form': 'filter-security-events' },
    field('Kind', select('kind', [['', 'Any kind'], ...eventKinds.map((kind) => [kind, kind])], '')),
    field('User ID', h('input', { name: 'user_id', autocomplete: 'off', spellcheck: 'false' })),
    field('Actor', h('input', { name: 'actor', autocomplete: 'off', spellcheck: 'false' }), 'An operator’s email, or admin_key.'),
    field('At most', h('input', { name: 'limit', type: 'number', min: 1, max: 1000, value: 100 })),
    h('div', { class: 'actions' }, filter), result);
  const body = h('tbody');
  const show = (answer) => fill(body, listOf(answer, 'security_events').map((event) => h('tr', { 'data-row': event.id },
    h('th', { scope: 'row' }, when(event.created_at)), h('td', {}, h('code', {}, event.kind)), h('td', {}, event.detail),
    h('td', {}, event.actor ?? '—'), h('td', {}, userLink(event.user_id)), h('td', {}, code(event.approval_id)), h('td', {}, code(event.device_id)))),
  7, 'No events match.');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const name of ['kind', 'user_id', 'actor', 'limit']) if (value(form, name)) query.set(name, value(form, name));
    act(filter, result, async () => show(await api('GET', `/admin/v1/security-events?${query}`)));
  });
  screen.append(section('Filters', form),
    section('Events', table('Security events, newest first', ['Time', 'Kind', 'What happened', 'Actor', 'User', 'Approval', 'Device'], body)));
  return load(result, '/admin/v1/security-events?limit=100', show);
}

// Statistics -----------------------------------------------------------------------------------------

function stats(screen) {
  pageHead(screen, 'Statistics', 'How approvals ended hour by hour, and what the server holds now.');
  const chartResult = slot();
  const chartBox = h('div');
  const countsResult = slot();
  const counts = h('ul', { class: 'counts' });
  screen.append(section('Approvals in the last 24 hours', chartResult, chartBox), section('Records', countsResult, counts));
  load(chartResult, '/admin/v1/stats/approvals?hours=24', (answer) => chartBox.replaceChildren(approvalChart(answer.hours ?? [])));
  load(countsResult, '/admin/v1/stats', (answer) => counts.replaceChildren(...Object.entries(answer ?? {}).map(([key, count]) =>
    h('li', { class: 'count' }, h('span', {}, words(key)), h('strong', {}, String(count))))));
}

// Operators ------------------------------------------------------------------------------------------

function operators(screen, { session }) {
  const { status } = pageHead(screen, 'Operators',
    'The people who may sign in to this console with their phone. An admin changes things; an auditor reads.');
  const result = slot();
  const enrollment = h('div');
  const invite = button('invite', 'Invite', { type: 'submit' });
  const form = h('form', { novalidate: true, 'data-form': 'invite-operator' },
    field('Email', h('input', { name: 'email', type: 'email' })),
    field('Role', select('role', [['auditor', 'Auditor: reads'], ['admin', 'Admin: reads and changes']], 'auditor')),
    result, h('div', { class: 'actions' }, invite));
  const body = h('tbody');
  const listResult = slot();
  const list = section('All operators', listResult, table('Operators', ['Email', 'Role', 'Phone enrolled', 'Invited', 'Actions'], body));
  const reload = () => load(listResult, '/admin/v1/operators', (answer) => fill(body, listOf(answer, 'operators').map((operator) => {
    const remove = button('remove', 'Remove', { more: operator.email, tone: 'secondary' });
    confirmed(remove, `Remove ${operator.email}? They can no longer sign in to the console.`, 'Yes, remove', async () => {
      await api('DELETE', `/admin/v1/operators/${enc(operator.id)}`);
      afterChange(status, `${operator.email} was removed.`, list.querySelector('h2'));
      await reload();
    });
    return h('tr', { 'data-row': operator.id },
      h('th', { scope: 'row' }, operator.email, operator.id === session?.operator?.id ? ' (you)' : ''),
      h('td', {}, operator.role), h('td', {}, operator.enrolled ? 'Yes' : 'Not yet'), h('td', {}, when(operator.created_at)), h('td', {}, remove));
  }), 5, 'No operators.'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(invite, result, async () => {
      const answer = await api('POST', '/admin/v1/operators', { email: value(form, 'email'), role: value(form, 'role') });
      form.reset();
      const card = enrollmentCard(answer);
      enrollment.replaceChildren(card);
      card.querySelector('h2').focus();
      await reload();
    });
  });
  screen.append(section('Invite an operator', form), enrollment, list);
  return reload();
}

/** The new operator's enrollment code and link: shown this once, never stored in clear. */
function enrollmentCard(answer) {
  const headingID = uid('enrollment');
  const result = slot();
  const copyLink = button('copy', 'Copy the link', { tone: 'secondary' });
  copyLink.addEventListener('click', () => act(copyLink, result, async () => {
    await copy(answer.enrollment_uri);
    showDone(result, 'Copied.');
  }));
  const until = answer.expires_at ? new Date(answer.expires_at).toLocaleString() : 'it expires';
  return h('section', { class: 'card enrollment', 'aria-labelledby': headingID },
    h('h2', { id: headingID, tabindex: '-1' }, `Enroll the phone of ${answer.operator?.email ?? 'the new operator'}`),
    h('p', {}, `Give them this code to type in the Countersign app on their phone, or the link to open there. It works once, until ${until}, and is not shown again.`),
    h('p', { class: 'enrollment-code', 'data-enrollment-code': '' }, answer.enrollment_code),
    h('p', {}, 'Link: ', h('code', { 'data-enrollment-uri': '' }, answer.enrollment_uri)),
    h('div', { class: 'actions' }, copyLink), result);
}

/** The screens by the name in the address (`#/name`) and in `data-nav`/`data-screen`. */
export const screens = {
  applications, push, journeys, users, approvals, evidence, 'security-events': securityEvents, stats, operators,
};
