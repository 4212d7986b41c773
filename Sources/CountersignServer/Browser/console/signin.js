// Signing in to the console: the operator's phone approves a web_login journey (number matching), and
// the token it ends with is traded for the console's session cookie.
import {
  ClientResponseOptionType, ErrorCode, JourneyStepId, initialize, startJourney, submitClientResponse, waitForMobileApproval,
} from '/sdk/countersign.js';
import { api, showError } from './api.js';
import { h, slot } from './screens.js';

const clientId = 'countersign-console';
const journeyId = 'web_login';

/** Why the sign-in ended, in words; keyed by the reason the journey reports. */
const reasonsInWords = {
  no_registered_devices: 'No phone is registered for this email.',
  mobile_rejected: 'The sign-in was denied on the phone.',
  mobile_not_authenticated: 'The phone did not confirm who you are.',
  otp_attempts_exceeded: 'The code was typed wrong on the phone too many times.',
  push_token_invalid: 'This phone can no longer receive requests. Enroll it again.',
  expired: 'The request expired before the phone answered.',
  approval_superseded: 'A newer sign-in for this account replaced this request.',
  resend_limit_reached: 'No more resends are allowed.',
};

const pushStatusInWords = { queued: 'Sending to your phone…', sent: 'Delivered to your phone.', failed: 'Could not reach your phone.' };

let main = null;
let signedIn = () => {};
/** The wait for the phone in progress: `{controller, promise, response}`. */
let waiting = null;
let countdown = null;
/** When the waited-on request expires (ms since the epoch); a resend may move it. */
let expiresAt = NaN;
let busy = false;
/** Where the shown view puts refusals. */
let errors = null;

/** Shows the sign-in in `into`; `onSignedIn(session)` runs once the session is open. */
export function showSignIn(into, { note = '', onSignedIn }) {
  main = into;
  signedIn = onSignedIn;
  stopWaiting();
  initialize({ clientId });
  showForm({ note });
}

function show(title, ...content) {
  clearInterval(countdown);
  main.dataset.screen = 'sign-in';
  const heading = h('h1', { tabindex: '-1' }, title);
  main.replaceChildren(h('section', { class: 'card narrow' }, heading, ...content));
  document.title = `${title} — Countersign console`;
  heading.focus();
}

function showForm({ note = '', error = '' } = {}) {
  const email = h('input', { id: 'signin-email', name: 'email', type: 'email', autocomplete: 'email', required: true });
  errors = slot();
  const form = h('form', { novalidate: true },
    h('label', { for: 'signin-email' }, 'Email'), email, errors,
    h('div', { class: 'actions' }, h('button', { type: 'submit', 'data-action': 'sign-in' }, 'Continue')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const address = email.value.trim();
    if (!address || !email.checkValidity()) {
      email.setAttribute('aria-invalid', 'true');
      showError(errors, 'Enter the email you were invited with.');
      email.focus();
      return;
    }
    step(async () => {
      await startJourney(journeyId);
      return submitClientResponse(ClientResponseOptionType.ClientInput, { email: address });
    });
  });
  show('Sign in to the console',
    h('p', { class: 'muted' }, 'Enter your operator email. The phone you enrolled is asked to approve.'),
    h('p', { class: 'note', role: 'status', 'aria-live': 'polite' }, note),
    form);
  if (error) showError(errors, error);
}

function showDevices(response) {
  errors = slot();
  const prompt = h('p', { id: 'signin-devices-prompt' }, 'Send the request to:');
  const choices = response.data.devices.map((device) => h('button', {
    type: 'button', class: 'secondary', 'data-action': 'select-device', 'data-device-code': device.code,
    onclick: () => step(() => submitClientResponse(ClientResponseOptionType.ClientInput, { selected_device_code: device.code })),
  }, device.name));
  show('Choose a phone', prompt,
    h('div', { class: 'choices', role: 'group', 'aria-labelledby': 'signin-devices-prompt' }, choices),
    errors, cancelButton());
  if (response.error) showError(errors, describe(response.error.code, response.error.message));
}

function showWaiting(response) {
  const data = response.data ?? {};
  const status = `We sent a request to your phone. Open it and approve. ${pushStatusInWords[data.push_status] ?? ''}`;
  const left = Number(data.resend_attempts_left ?? 0);
  expiresAt = Date.parse(data.expires_at);
  // Updates of the same wait (a poll's push status) change the text in place, keeping focus where it is.
  const shown = main.querySelector('[data-waiting]');
  if (shown) {
    shown.querySelector('[data-push-status]').textContent = status;
    const resend = shown.querySelector('[data-action="resend"]');
    resend.textContent = `Resend (${left} left)`;
    resend.disabled = left <= 0;
    return;
  }
  errors = slot();
  const timeLeft = h('p', { class: 'muted' });
  const otp = data.otp ? [
    h('p', {}, 'Type this code on your phone'),
    // Read out digit by digit.
    h('p', { class: 'otp', role: 'img', 'aria-label': `Code ${[...data.otp].join(' ')}`, 'data-otp': data.otp }, data.otp),
  ] : [];
  const resend = h('button', {
    type: 'button', 'data-action': 'resend', disabled: left <= 0,
    onclick: () => answerWhileWaiting(ClientResponseOptionType.Resend),
  }, `Resend (${left} left)`);
  show('Approve on your phone',
    h('div', { 'data-waiting': '' },
      h('p', { role: 'status', 'aria-live': 'polite', 'data-push-status': '' }, status),
      ...otp, timeLeft, errors,
      h('div', { class: 'actions' }, resend, cancelButton())));
  const tick = () => {
    const seconds = Math.max(0, Math.round((expiresAt - Date.now()) / 1000));
    timeLeft.textContent = Number.isNaN(expiresAt) ? ''
      : seconds > 0 ? `Time left: ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}` : 'The request has expired.';
  };
  tick();
  countdown = setInterval(tick, 1000);
}

function cancelButton() {
  return h('button', {
    type: 'button', class: 'secondary', 'data-action': 'cancel',
    onclick: () => answerWhileWaiting(ClientResponseOptionType.Cancel),
  }, 'Cancel');
}

/** Shows the step the server answered with; at success, opens the console's session. */
async function render(response) {
  switch (response.journeyStepId) {
    case JourneyStepId.Success:
      return openSession(response.token);
    case JourneyStepId.Rejection: {
      const reason = response.data?.reason ?? response.error?.code;
      if (reason === 'cancelled') return showForm({ note: 'You cancelled the sign-in.' });
      return showForm({ error: describe(reason, response.error?.message) });
    }
    case JourneyStepId.MobileApproveAuthentication:
      if (Array.isArray(response.data?.devices)) return showDevices(response);
      showWaiting(response);
      if (response.error) showError(errors, describe(response.error.code, response.error.message));
      return waitForPhone(response);
    default:
      // The console's sign-in has no other step.
      return showForm({ error: 'The sign-in journey asked for something this page cannot show.' });
  }
}

async function openSession(token) {
  try {
    const session = await api('POST', '/console/session', { token }, { signedOutIsFine: true });
    signedIn(session);
  } catch (error) {
    // Not an operator (403), or a token too old or used (401): said on the sign-in form.
    showForm({ error: error.message });
  }
}

function waitForPhone(response) {
  const controller = new AbortController();
  const promise = waitForMobileApproval(response, {
    signal: controller.signal,
    onUpdate: (update) => showWaiting(update),
    onRetry: () => showError(errors, 'The connection to the server was lost. Trying again…'),
  });
  waiting = { controller, promise, response };
  promise.then(
    (next) => { if (waiting?.controller === controller) { waiting = null; render(next); } },
    (error) => { if (waiting?.controller === controller) { waiting = null; showForm({ error: describe(error.errorCode, error.message) }); } });
}

/** Answers the waiting step with `option` (resend, cancel); when that cannot be sent, waiting resumes. */
function answerWhileWaiting(option) {
  return step(async () => {
    const waitedOn = waiting?.response;
    const ended = await stopWaiting();
    if (ended) return ended;
    try {
      return await submitClientResponse(option);
    } catch (error) {
      if (waitedOn) waitForPhone(waitedOn);
      throw error;
    }
  });
}

/** Stops waiting for the phone; resolves with the step the wait ended on, if a poll in flight ended it. */
async function stopWaiting() {
  const current = waiting;
  waiting = null;
  if (!current) return null;
  current.controller.abort();
  try {
    return await current.promise;
  } catch {
    return null;
  }
}

/** Runs one call of the journey, ignoring presses until it is answered, then shows the answer. */
async function step(call) {
  if (busy) return;
  busy = true;
  main.setAttribute('aria-busy', 'true');
  errors?.replaceChildren();
  try {
    await render(await call());
  } catch (error) {
    // What can be tried again (a refused input, the network, the server's failure) is said where the
    // page is; anything else ends this sign-in.
    const again = [ErrorCode.NetworkError, ErrorCode.ServerError, ErrorCode.ClientResponseNotValid].includes(error.errorCode);
    if (again && errors?.isConnected) showError(errors, error.message);
    else showForm({ error: describe(error.errorCode, error.message) });
  } finally {
    busy = false;
    main.removeAttribute('aria-busy');
  }
}

/** The server's message, and why in words when the reason is one this page knows. */
function describe(code, message) {
  const said = [message, reasonsInWords[code]].filter((part, index, parts) => part && parts.indexOf(part) === index);
  return said.join(' ') || 'The sign-in did not succeed.';
}
